// A mirror in a bucket of a real S3 server (Ceph RGW, test/s3/rgw.sh): push
// stores every file with its bytes and the headers nginx sends, and again
// stores nothing; publish uploads only what it changed, archive first, then
// the manifest, then what it derives from it; eight publishes from eight processes at once all land; a
// conflicting republish is refused; deprecate works there too; a writer
// killed halfway leaves a bucket every client can use; and Terraform's module
// installer installs straight from the bucket's website endpoint with no
// modmirror running. A signed mirror stays signed there: push carries its
// signatures (and signs the root again where the bucket's is newer, or
// refuses without the key); publish and deprecate --sign-key sign the state and the root as
// they land (the root gets its new generation there), so gpg --verify accepts
// each object and verify --trust the bucket's mirror (and fails a changed
// one); a write without the key is refused, leaving the bucket as it was.

import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileHeaders } from '../../src/hosting/rules.js';
import { CACHE_LONG, CACHE_SHORT } from '../../src/protocol/headers.js';
import { filesOf } from '../../src/bucket/objects.js';
import { hasTerraform, ROOT, runCli, spawnCli, tempDir, writeFiles } from '../helpers.js';
import { expectSameFiles, install, moduleInstallClient, writeModules } from '../clients/install.js';
import { startRgw, type Rgw } from './rgw.js';
import { gpg, type Gpg } from '../gpg.js';

const dir = tempDir('mm-s3-');
let rgw: Rgw;
const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, dir, { ...rgw.env, ...env });
/** The installed binary, a process of its own: for publishes that must truly run at once. */
const spawned = (args: string[]) => spawnCli(args, dir, rgw.env);
const json = <T = Record<string, unknown>>(text: string) => JSON.parse(text) as T;
const started = performance.now();

beforeAll(async () => {
  const [server] = await Promise.all([startRgw(join(dir, 'rgw')), moduleInstallClient()]);
  rgw = server;
  writeModules(dir);
  expect((await runCli(['build', '--modules', 'mods', '--mirror', 'dist', '--json'], dir)).code).toBe(0);
  await Promise.all([rgw.createBucket('mirror'), rgw.createBucket('site', true)]);
}, 120_000);
afterAll(async () => {
  await rgw?.stop();
  console.log(`bucket tests: ${((performance.now() - started) / 1000).toFixed(1)} s with the RGW start and stop`);
}, 60_000);

/** A module version's files in a folder of their own, to publish. */
function source(version: string, extra = ''): string {
  const folder = join(dir, 'src', version + (extra ? '-x' : ''));
  writeFiles(folder, { 'main.tf': `output "v" {\n  value = "${version}${extra}"\n}\n` });
  return folder;
}
const publishArgs = (version: string, out: string, extra = '') => [
  'publish',
  '--source',
  source(version, extra),
  '--namespace',
  'acme',
  '--name',
  'hello',
  '--provider',
  'null',
  '--version',
  version,
  '--mirror',
  out,
  ...rgw.flags,
  '--json',
];

describe('push', () => {
  it('stores every file of the mirror with its bytes, content type and cache lifetime; a second push uploads nothing', async () => {
    const pushed = await cli(['push', 's3://mirror/reg', '--mirror', 'dist', ...rgw.flags, '--json']);
    expect(pushed.code, pushed.stderr).toBe(0);
    const root = realpathSync(join(dir, 'dist'));
    const files = filesOf(root);
    expect(json(pushed.stdout)).toMatchObject({ uploaded: files.length, unchanged: 0 });
    for (const rel of files) {
      const object = await rgw.get('mirror', `reg/${rel}`);
      expect(object?.body.equals(readFileSync(join(root, rel))), rel).toBe(true);
      expect([object?.contentType, object?.cacheControl], rel).toEqual([fileHeaders(rel)['Content-Type'], fileHeaders(rel)['Cache-Control']]);
    }
    // What nginx sends for each kind (hosting/nginx.ts), spelled out.
    const archive = await rgw.get('mirror', 'reg/v1/modules/acme/hello/null/1.2.3/hello-null-1.2.3.tar.gz');
    expect([archive?.contentType, archive?.cacheControl]).toEqual(['application/gzip', CACHE_LONG]);
    for (const rel of ['v1/modules/acme/hello/null/versions', 'v1/modules/acme/hello/null/1.2.3/download', 'manifest.json', '.well-known/terraform.json']) {
      const object = await rgw.get('mirror', `reg/${rel}`);
      expect([object?.contentType, object?.cacheControl], rel).toEqual(['application/json', CACHE_SHORT]);
    }
    expect((await rgw.get('mirror', 'reg/index.html'))?.contentType).toBe('text/html');

    const again = await cli(['push', 's3://mirror/reg', '--mirror', 'dist', ...rgw.flags, '--json']);
    expect(json(again.stdout)).toMatchObject({ uploaded: 0, unchanged: files.length });
    // --full stores everything again (the manifest is the same, so it is not rewritten).
    expect(json((await cli(['push', 's3://mirror/reg', '--mirror', 'dist', ...rgw.flags, '--full', '--json'])).stdout)).toMatchObject({
      uploaded: files.length - 1,
    });
    expect((await cli(['verify', '--mirror', 's3://mirror/reg', ...rgw.flags])).code).toBe(0);
  });

  it('shows its progress on a terminal, and none with --json', () => {
    // `script` gives the CLI a pseudo-terminal, as a person at a shell has.
    const onTerminal = (args: string) =>
      execFileSync('script', ['-qec', `${process.execPath} ${join(ROOT, 'bin/modmirror.js')} push ${args} --mirror dist ${rgw.flags.join(' ')}`, '/dev/null'], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, ...rgw.env },
      });
    const total = filesOf(realpathSync(join(dir, 'dist'))).length;
    const shown = onTerminal('s3://mirror/tty');
    // The manifest is counted in both: the progress line counts against the summary's total (a line may be
    // skipped: it is rewritten at most ten times a second).
    expect(shown).toMatch(new RegExp(`uploaded \\d+/${total} objects`));
    expect(shown).not.toContain(`/${total - 1} objects`);
    expect(shown).toMatch(new RegExp(`Uploaded ${total} objects to s3://mirror/tty/`));
    const quiet = onTerminal('s3://mirror/tty-json --json');
    expect(quiet).not.toMatch(/uploaded \d+\//);
    expect(JSON.parse(quiet.trim())).toMatchObject({ uploaded: total });
  });

  it('refuses a target that is not a bucket URL, and a missing mirror folder, as usage errors', async () => {
    expect((await cli(['push', 'mirror/reg', '--mirror', 'dist'])).code).toBe(2);
    const missing = await cli(['push', 's3://mirror/reg', '--mirror', 'nothing-here', ...rgw.flags]);
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringMatching(/no built mirror/)]);
  });
});

/** The module's state in the bucket: its truth. */
const STATE = 'state/acme/hello.null.json';
const stateIn = async (prefix: string) =>
  json<{ versions: { version: string; sha256: string }[] }>((await rgw.get('mirror', `${prefix}/${STATE}`))!.body.toString());

describe('publish into a bucket', () => {
  it('uploads only what it changed: the archive first, its documents, the manifest, then what lists versions', async () => {
    const before = await rgw.list('mirror', 'reg/');
    const result = await cli(publishArgs('2.1.0', 's3://mirror/reg'));
    expect(result.code, result.stderr).toBe(0);
    const { uploaded, outcome } = json<{ uploaded: string[]; outcome: string }>(result.stdout);
    expect(outcome).toBe('published');
    const after = await rgw.list('mirror', 'reg/');
    const changed = [...after].filter(([key, etag]) => before.get(key) !== etag && !key.startsWith('reg/.modmirror/')).map(([key]) => key.slice(4));
    expect([...uploaded].sort()).toEqual(changed.sort());
    expect(uploaded[0]).toBe('v1/modules/acme/hello/null/2.1.0/hello-null-2.1.0.tar.gz');
    // The new version's own documents before the module's state, which is the truth, then the manifest that
    // records the change; what lists versions is derived from them, after.
    const at = (rel: string) => uploaded.indexOf(rel);
    expect(at('v1/modules/acme/hello/null/2.1.0/download')).toBeLessThan(at(STATE));
    expect(at(STATE)).toBeLessThan(at('manifest.json'));
    expect(at('manifest.json')).toBeLessThan(at('v1/modules/acme/hello/null/versions'));
    expect(at('manifest.json')).toBeLessThan(at('v1/modules/acme/index.json'));
    expect((await cli(['verify', '--mirror', 's3://mirror/reg', ...rgw.flags])).code).toBe(0);
  });

  it('refuses a published version with other bytes, as on a folder, and leaves the bucket as it was', async () => {
    const manifest = (await rgw.get('mirror', 'reg/manifest.json'))!.body;
    const result = await cli(publishArgs('2.1.0', 's3://mirror/reg', 'other'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/already published with different content/);
    expect((await rgw.get('mirror', 'reg/manifest.json'))!.body.equals(manifest)).toBe(true);
  });

  it('lands eight publishes of eight versions from eight processes at once, each once', async () => {
    const versions = Array.from({ length: 8 }, (_, i) => `3.${i}.0`);
    const results = await Promise.all(versions.map((v) => spawned(publishArgs(v, 's3://mirror/reg'))));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const attempts = results.map((r) => json<{ attempts: number }>(r.stdout).attempts);
    console.log(`8 concurrent publishes: attempts ${attempts.join(', ')}`);
    const listed = (await stateIn('reg')).versions.map((v) => v.version);
    for (const v of versions) expect(listed.filter((x) => x === v)).toEqual([v]);
    const verify = await cli(['verify', '--mirror', 's3://mirror/reg', ...rgw.flags]);
    expect(verify.code, verify.stderr).toBe(0);
  });

  it('lands one of two publishes of one version with other bytes at once, and the archive is the one the manifest names', async () => {
    const results = await Promise.all([spawned(publishArgs('6.0.0', 's3://mirror/reg')), spawned(publishArgs('6.0.0', 's3://mirror/reg', 'other'))]);
    expect(results.map((r) => r.code).sort()).toEqual([0, 1]);
    expect(results.find((r) => r.code === 1)!.stderr).toMatch(/other bytes|different content/);
    const entry = (await stateIn('reg')).versions.find((v) => v.version === '6.0.0')!;
    const archive = (await rgw.get('mirror', 'reg/v1/modules/acme/hello/null/6.0.0/hello-null-6.0.0.tar.gz'))!.body;
    expect(createHash('sha256').update(archive).digest('hex')).toBe(entry.sha256);
  });

  it('deprecates a version in the bucket, rewriting its documents there', async () => {
    const result = await cli(['deprecate', 'acme/hello/null', '3.0.0', '--reason', 'use 3.1', '--mirror', 's3://mirror/reg', ...rgw.flags]);
    expect(result.code, result.stderr).toBe(0);
    const versions = json<{ modules: { versions: { version: string; deprecation?: { reason: string } }[] }[] }>(
      (await rgw.get('mirror', 'reg/v1/modules/acme/hello/null/versions'))!.body.toString(),
    );
    expect(versions.modules[0]!.versions.find((v) => v.version === '3.0.0')?.deprecation?.reason).toBe('use 3.1');
    expect((await cli(['verify', '--mirror', 's3://mirror/reg', ...rgw.flags])).code).toBe(0);
  });

  it('refuses a bucket with no mirror unless --new-mirror', async () => {
    const refused = await cli(publishArgs('1.0.0', 's3://mirror/empty'));
    expect([refused.code, refused.stderr]).toEqual([2, expect.stringMatching(/no mirror at s3:\/\/mirror\/empty/)]);
    const made = await cli([...publishArgs('1.0.0', 's3://mirror/empty'), '--new-mirror']);
    expect(made.code, made.stderr).toBe(0);
    expect((await cli(['verify', '--mirror', 's3://mirror/empty', ...rgw.flags])).code).toBe(0);
  });
});

/** What a client can reach in the bucket: every listed version's download location names an archive that is there, with its bytes. */
async function expectServable(bucket: string, prefix: string): Promise<string[]> {
  const versions = json<{ modules: { versions: { version: string }[] }[] }>(
    (await rgw.get(bucket, `${prefix}v1/modules/acme/hello/null/versions`))!.body.toString(),
  );
  const listed = versions.modules[0]!.versions.map((v) => v.version);
  for (const v of listed) {
    const download = json<{ location: string }>((await rgw.get(bucket, `${prefix}v1/modules/acme/hello/null/${v}/download`))!.body.toString());
    const archive = await rgw.get(bucket, `${prefix}v1/modules/acme/hello/null/${v}/${download.location.slice(2)}`);
    expect(archive?.body.length, v).toBeGreaterThan(0);
  }
  return listed.sort();
}

describe('verify s3:// and where the store is found', () => {
  it('finds the credentials, region and endpoint as the AWS SDK does: a profile and AWS_ENDPOINT_URL, no flags but --path-style', async () => {
    writeFiles(dir, {
      'aws/credentials': `[registry]\naws_access_key_id = ${rgw.env['AWS_ACCESS_KEY_ID']}\naws_secret_access_key = ${rgw.env['AWS_SECRET_ACCESS_KEY']}\n`,
      'aws/config': '[profile registry]\nregion = us-east-1\n',
    });
    const env = {
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
      AWS_PROFILE: 'registry',
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'aws/credentials'),
      AWS_CONFIG_FILE: join(dir, 'aws/config'),
      AWS_ENDPOINT_URL: rgw.endpoint,
    };
    const pushed = await runCli(['push', 's3://mirror/profile', '--mirror', 'dist', '--path-style', '--json'], dir, env);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect((await runCli(['verify', '--mirror', 's3://mirror/profile', '--path-style'], dir, env)).code).toBe(0);
    const wrong = await runCli(['verify', '--mirror', 's3://mirror/profile', ...rgw.flags], dir, { ...rgw.env, AWS_SECRET_ACCESS_KEY: 'not-the-key' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/hint: Check the credentials/);
  });

  it('fails a bucket whose mirror lacks an archive it lists, naming it', async () => {
    expect((await cli(['push', 's3://mirror/broken', '--mirror', 'dist', ...rgw.flags])).code).toBe(0);
    await rgw.client.send(new DeleteObjectCommand({ Bucket: 'mirror', Key: 'broken/v1/modules/acme/hello/null/1.2.0/hello-null-1.2.0.tar.gz' }));
    const verify = await cli(['verify', '--mirror', 's3://mirror/broken', ...rgw.flags]);
    expect(verify.code).toBe(1);
    expect(verify.stdout + verify.stderr).toMatch(/hello-null-1\.2\.0\.tar\.gz/);
  });
});

describe('a bucket whose listings disagree with its module states (a writer killed before it derived them)', () => {
  const other = (name: string, version: string) => [
    'publish',
    '--source',
    source(`${name}-${version}`),
    '--namespace',
    'acme',
    '--name',
    name,
    '--provider',
    'null',
    '--version',
    version,
    '--mirror',
    's3://mirror/wedged',
    ...rgw.flags,
    '--json',
  ];
  const put = (key: string, body: Buffer) =>
    rgw.client.send(new PutObjectCommand({ Bucket: 'mirror', Key: `wedged/${key}`, Body: body, ContentType: 'application/json' }));
  const modulesOf = async (key: string) =>
    json<{ modules: { name: string }[] }>((await rgw.get('mirror', `wedged/${key}`))!.body.toString())
      .modules.map((m) => m.name)
      .sort();

  it('takes the next publish, which writes the listings from the states; verify --repair writes every derived document again', async () => {
    expect((await cli(['push', 's3://mirror/wedged', '--mirror', 'dist', ...rgw.flags])).code).toBe(0);
    const stale = await Promise.all(
      ['browse/modules/acme/index.json', 'browse/modules/acme/hello.null.json', 'v1/modules/acme/index.json'].map(
        async (k) => [k, (await rgw.get('mirror', `wedged/${k}`))!.body] as const,
      ),
    );
    expect((await cli(other('first', '1.0.0'))).code).toBe(0);
    // The browse page's pages and the namespace listing of before: the states hold a module they do not.
    for (const [key, body] of stale) await put(key, body);
    expect((await cli(['verify', '--mirror', 's3://mirror/wedged', ...rgw.flags])).code).toBe(1);

    const next = await cli(other('second', '1.0.0'));
    expect(next.code, next.stderr).toBe(0);
    expect(await modulesOf('v1/modules/acme/index.json')).toEqual(['first', 'hello', 'second']);
    expect((await cli(['verify', '--mirror', 's3://mirror/wedged', ...rgw.flags])).code).toBe(0);

    for (const [key, body] of stale) await put(key, body);
    const repaired = await cli(['verify', '--mirror', 's3://mirror/wedged', '--repair', ...rgw.flags, '--json']);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(json<{ ok: boolean; repaired: string[] }>(repaired.stdout)).toMatchObject({
      ok: true,
      repaired: expect.arrayContaining(['browse/modules/acme/index.json', 'v1/modules/acme/index.json']),
    });
    expect(await modulesOf('v1/modules/acme/index.json')).toEqual(['first', 'hello', 'second']);
    const states = (await rgw.list('mirror', 'wedged/state/')).keys();
    expect([...states].sort()).toEqual(['wedged/state/acme/first.null.json', 'wedged/state/acme/hello.null.json', 'wedged/state/acme/second.null.json']);
  });
});

describe('what a publish into a bucket writes', () => {
  /** A mirror of acme/base/null and `others` modules of one other namespace, pushed to its own prefix. */
  async function pushedMirror(others: number): Promise<string> {
    const files: Record<string, string> = { [`scale-${others}/acme/base/null/1.0.0/main.tf`]: 'output "v" {\n  value = 1\n}\n' };
    for (let i = 0; i < others; i++) files[`scale-${others}/other/m${String(i).padStart(3, '0')}/null/1.0.0/main.tf`] = `output "v" {\n  value = ${i}\n}\n`;
    writeFiles(dir, files);
    const built = await cli(['build', '--modules', `scale-${others}`, '--mirror', `scale-${others}-dist`, '--json']);
    expect(built.code, built.stderr).toBe(0);
    const pushed = await cli(['push', `s3://mirror/scale-${others}`, '--mirror', `scale-${others}-dist`, ...rgw.flags, '--json']);
    expect(pushed.code, pushed.stderr).toBe(0);
    return `scale-${others}`;
  }
  /** The bytes of the objects a publish of acme/base/null 1.1.0 stored or replaced under `prefix`, by kind. */
  async function publishedBytes(prefix: string): Promise<{ record: number; documents: number; objects: string[] }> {
    const before = await rgw.sizes('mirror', `${prefix}/`);
    const folder = join(dir, 'src', 'base-1.1.0');
    writeFiles(folder, { 'main.tf': 'output "v" {\n  value = 2\n}\n' });
    const args = ['publish', '--source', folder, '--namespace', 'acme', '--name', 'base', '--provider', 'null', '--version', '1.1.0'];
    const result = await cli([...args, '--mirror', `s3://mirror/${prefix}`, ...rgw.flags, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const bytes = { record: 0, documents: 0, objects: [] as string[] };
    for (const [key, { etag, size }] of await rgw.sizes('mirror', `${prefix}/`)) {
      if (before.get(key)?.etag === etag || key.endsWith('.tar.gz')) continue;
      const rel = key.slice(prefix.length + 1);
      bytes.objects.push(rel);
      if (rel.startsWith('.modmirror/')) bytes.record += size;
      else bytes.documents += size;
    }
    return bytes;
  }

  it('rewrites no more of the object record, and no more documents, in a bucket of four times the modules', async () => {
    const small = await publishedBytes(await pushedMirror(20));
    const large = await publishedBytes(await pushedMirror(80));
    // The record's root part (the shared objects') and the module's own part, not every object's id.
    expect(small.objects.filter((rel) => rel.startsWith('.modmirror/')).sort()).toEqual([
      expect.stringMatching(/^\.modmirror\/objects-[0-9a-f]{64}\.json$/),
      expect.stringMatching(/^\.modmirror\/objects\/acme\/base\.null-[0-9a-f]{64}\.json$/),
    ]);
    expect(large.record, `record bytes: ${small.record} with 20 other modules, ${large.record} with 80`).toBeLessThanOrEqual(small.record * 1.1);
    expect(large.documents, `document bytes: ${small.documents} with 20 other modules, ${large.documents} with 80`).toBeLessThanOrEqual(small.documents * 1.5);
    for (const prefix of ['scale-20', 'scale-80']) expect((await cli(['verify', '--mirror', `s3://mirror/${prefix}`, ...rgw.flags])).code).toBe(0);
    // A push of a mirror with the same publish reads the module's part: the new version's archive and download are known stored.
    const args = ['publish', '--source', join(dir, 'src', 'base-1.1.0'), '--namespace', 'acme', '--name', 'base', '--provider', 'null', '--version', '1.1.0'];
    expect((await cli([...args, '--mirror', 'scale-20-dist'])).code).toBe(0);
    const dry = json<{ objects: string[] }>(
      (await cli(['push', 's3://mirror/scale-20', '--mirror', 'scale-20-dist', ...rgw.flags, '--dry-run', '--json'])).stdout,
    );
    // (Its detail document differs: a publish of its own has its own published_at.)
    expect(dry.objects).not.toContain('v1/modules/acme/base/null/1.1.0/base-null-1.1.0.tar.gz');
    expect(dry.objects).not.toContain('v1/modules/acme/base/null/1.1.0/download');
    expect(dry.objects).not.toContain('v1/modules/other/m000/null/1.0.0/index.json');
  });
});

describe("the browse page's rows in pages, in a bucket", () => {
  /** As docs/browse-page.md says: a module ends its page when its key's SHA-256 starts with a multiple of 32. */
  const endsPage = (key: string) => createHash('sha256').update(key).digest().readUInt32BE(0) % 32 === 0;
  const stored = async (rel: string) => {
    const object = await rgw.get('mirror', `pages/${rel}`);
    return object && (JSON.parse(object.body.toString()) as Record<string, unknown>);
  };
  const rowsOf = async (ns: string) => {
    const pages = ((await stored(`browse/modules/${ns}/index.json`))?.['pages'] ?? []) as string[];
    return (await Promise.all(pages.map((page) => stored(`browse/modules/${ns}/${page}.json`)))).flatMap((p) => (p?.['modules'] ?? []) as string[][]);
  };
  const publishTo = async (name: string, version: string) => {
    const folder = join(dir, 'src', `pages-${name}-${version}`);
    writeFiles(folder, { 'main.tf': `output "v" {\n  value = "${name} ${version}"\n}\n` });
    const args = ['publish', '--source', folder, '--namespace', 'paged', '--name', name, '--provider', 'null', '--version', version];
    const result = await cli([...args, '--mirror', 's3://mirror/pages', ...rgw.flags, '--json']);
    expect(result.code, result.stderr).toBe(0);
  };
  const verified = async () => (await cli(['verify', '--mirror', 's3://mirror/pages', ...rgw.flags])).code;

  it('upgrades a bucket whose namespaces kept one file of rows at its next publish, then splits a page as a folder does', async () => {
    const names = Array.from({ length: 100 }, (_, i) => `m${String(i).padStart(3, '0')}`);
    const files: Record<string, string> = { 'pages-src/other/one/null/1.0.0/main.tf': 'output "v" {\n  value = 1\n}\n' };
    for (const name of names) files[`pages-src/paged/${name}/null/1.0.0/main.tf`] = `output "v" {\n  value = "${name}"\n}\n`;
    writeFiles(dir, files);
    expect((await cli(['build', '--modules', 'pages-src', '--mirror', 'pages-dist', '--json'])).code).toBe(0);
    // As an older modmirror wrote it: one file of rows per namespace.
    const root = realpathSync(join(dir, 'pages-dist'));
    for (const ns of ['paged', 'other']) {
      const folder = join(root, 'browse/modules', ns);
      const pages = JSON.parse(readFileSync(join(folder, 'index.json'), 'utf8')) as { pages: string[] };
      const rows = pages.pages.flatMap((page) => (JSON.parse(readFileSync(join(folder, `${page}.json`), 'utf8')) as { modules: unknown[] }).modules);
      writeFileSync(join(root, 'browse/modules', `${ns}.json`), `${JSON.stringify({ modules: rows })}\n`);
      rmSync(folder, { recursive: true });
    }
    expect((await cli(['push', 's3://mirror/pages', '--mirror', 'pages-dist', ...rgw.flags])).code).toBe(0);
    expect(await verified()).toBe(0);

    await publishTo('m010', '1.1.0');
    // Every namespace in pages, the one the publish did not touch too, with every row.
    expect((await rowsOf('other')).map((row) => row.slice(0, 4).join('/'))).toEqual(['other/one/null/1.0.0']);
    expect((await rowsOf('paged')).map((row) => `${row[1]} ${row[3]}`)).toEqual(names.map((name) => `${name} ${name === 'm010' ? '1.1.0' : '1.0.0'}`));
    expect(await verified()).toBe(0);

    // A new module that ends a page, between others: the page it was in splits, and the list names both.
    const splitter = Array.from({ length: 10_000 }, (_, i) => `m05x${i}`).find((name) => endsPage(`paged/${name}/null`))!;
    await publishTo(splitter, '1.0.0');
    const keys = [...names, splitter].map((name) => `paged/${name}/null`).sort();
    const ends = keys.filter(endsPage);
    const expected = [...ends, ...(endsPage(keys.at(-1)!) ? [] : [keys.at(-1)!])].map((key) => `${key.split('/')[1]}.null`);
    expect((await stored('browse/modules/paged/index.json'))?.['pages']).toEqual(expected);
    expect((await rowsOf('paged')).map((row) => row[1])).toEqual(keys.map((key) => key.split('/')[1]));
    expect(await verified()).toBe(0);
  });
});

describe('an object record written as one file, every object in it (an older modmirror)', () => {
  it('is read by a push, which uploads nothing and splits it into parts; a publish then writes only its own', async () => {
    expect((await cli(['push', 's3://mirror/legacy', '--mirror', 'dist', ...rgw.flags, '--json'])).code).toBe(0);
    // Made as an older modmirror left it: the parts folded into the root part, and gone.
    const manifest = (await rgw.get('mirror', 'legacy/manifest.json'))!.body;
    const rootKey = `legacy/.modmirror/objects-${createHash('sha256').update(manifest).digest('hex')}.json`;
    const root = JSON.parse((await rgw.get('mirror', rootKey))!.body.toString()) as { objects: Record<string, string> };
    const parts = [...(await rgw.list('mirror', 'legacy/.modmirror/objects/')).keys()];
    expect(parts.length).toBeGreaterThan(0);
    for (const key of parts) {
      Object.assign(root.objects, (JSON.parse((await rgw.get('mirror', key))!.body.toString()) as { objects: Record<string, string> }).objects);
      await rgw.client.send(new DeleteObjectCommand({ Bucket: 'mirror', Key: key }));
    }
    await rgw.client.send(new PutObjectCommand({ Bucket: 'mirror', Key: rootKey, Body: JSON.stringify(root) }));

    const again = await cli(['push', 's3://mirror/legacy', '--mirror', 'dist', ...rgw.flags, '--json']);
    expect(json(again.stdout)).toMatchObject({ uploaded: 0 });
    expect([...(await rgw.list('mirror', 'legacy/.modmirror/objects/')).keys()].sort()).toEqual(parts.sort());
    const split = JSON.parse((await rgw.get('mirror', rootKey))!.body.toString()) as { objects: Record<string, string> };
    expect(Object.keys(split.objects).filter((rel) => rel.startsWith('v1/modules/acme/hello/null/'))).toEqual([]);

    const published = await cli(publishArgs('3.0.0', 's3://mirror/legacy'));
    expect(published.code, published.stderr).toBe(0);
    expect((await cli(['verify', '--mirror', 's3://mirror/legacy', ...rgw.flags])).code).toBe(0);
  });
});

describe('derived documents', () => {
  it('are never replaced by ones derived from an older manifest than theirs', async () => {
    expect((await cli(['push', 's3://mirror/gen', '--mirror', 'dist', ...rgw.flags])).code).toBe(0);
    const key = 'gen/v1/modules/acme/hello/null/versions';
    // What a later writer would have stored: derived from a manifest generation far ahead of this one.
    const later = Buffer.from('{"modules":[{"versions":[{"version":"1.0.0"}]}]}\n');
    await rgw.client.send(
      new PutObjectCommand({ Bucket: 'mirror', Key: key, Body: later, ContentType: 'application/json', Metadata: { 'modmirror-generation': '1000000' } }),
    );
    const published = await cli([
      'publish',
      '--source',
      source('7.0.0'),
      '--namespace',
      'acme',
      '--name',
      'hello',
      '--provider',
      'null',
      '--version',
      '7.0.0',
      '--mirror',
      's3://mirror/gen',
      ...rgw.flags,
      '--json',
    ]);
    expect(published.code, published.stderr).toBe(0);
    expect((await rgw.get('mirror', key))!.body.equals(later)).toBe(true);
    // Its generation is the manifest's, which counts the writes made live there.
    const manifest = json<{ generation: number }>((await rgw.get('mirror', 'gen/manifest.json'))!.body.toString());
    expect(manifest.generation).toBe(1);

    // Once that object is gone, a repair (a write of its own) derives it from the manifest.
    await rgw.client.send(new DeleteObjectCommand({ Bucket: 'mirror', Key: key }));
    const repaired = await cli(['verify', '--mirror', 's3://mirror/gen', '--repair', ...rgw.flags]);
    expect(repaired.code, repaired.stdout + repaired.stderr).toBe(0);
    const versions = json<{ modules: { versions: { version: string }[] }[] }>((await rgw.get('mirror', key))!.body.toString());
    expect(versions.modules[0]!.versions.map((v) => v.version)).toContain('7.0.0');
    expect(json<{ generation: number }>((await rgw.get('mirror', 'gen/manifest.json'))!.body.toString()).generation).toBe(2);
  });
});

describe('a writer killed halfway (SIGKILL)', () => {
  it('leaves the old mirror in place during a push, and the next push finishes the job', async () => {
    expect((await cli(['push', 's3://mirror/kill', '--mirror', 'dist', ...rgw.flags])).code).toBe(0);
    const old = (await rgw.get('mirror', 'kill/manifest.json'))!.body;
    const oldVersions = await expectServable('mirror', 'kill/');
    writeModules(dir, ['4.0.0', '4.1.0', '4.2.0'], 'mods');
    expect((await runCli(['build', '--modules', 'mods', '--mirror', 'dist', '--json'], dir)).code).toBe(0);
    const killed = await cli(['push', 's3://mirror/kill', '--mirror', 'dist', ...rgw.flags, '--concurrency', '1'], { MODMIRROR_CRASH_AT: 'upload-half' });
    expect(killed.code).not.toBe(0);
    expect((await rgw.get('mirror', 'kill/manifest.json'))!.body.equals(old)).toBe(true);
    expect(await expectServable('mirror', 'kill/')).toEqual(oldVersions);
    const resumed = await cli(['push', 's3://mirror/kill', '--mirror', 'dist', ...rgw.flags, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const total = filesOf(realpathSync(join(dir, 'dist'))).length;
    const { uploaded } = json<{ uploaded: number }>(resumed.stdout);
    // The journal of the killed push: what it stored is not stored again.
    expect(uploaded).toBeLessThan(
      total - json<{ uploaded: number }>((await cli(['push', 's3://mirror/kill', '--mirror', 'dist', ...rgw.flags, '--json'])).stdout).uploaded,
    );
    expect(await expectServable('mirror', 'kill/')).toEqual([...oldVersions, '4.0.0', '4.1.0', '4.2.0'].sort());
    expect((await cli(['verify', '--mirror', 's3://mirror/kill', ...rgw.flags])).code).toBe(0);
  });

  it('leaves every listed version installable during a publish, and the publish run again lands it', async () => {
    const old = (await rgw.get('mirror', 'kill/manifest.json'))!.body;
    for (const point of ['upload-half', 'before-manifest']) {
      const killed = await cli(publishArgs('5.0.0', 's3://mirror/kill'), { MODMIRROR_CRASH_AT: point });
      expect(killed.code, point).not.toBe(0);
      expect((await rgw.get('mirror', 'kill/manifest.json'))!.body.equals(old), point).toBe(true);
      await expectServable('mirror', 'kill/');
    }
    expect((await cli(publishArgs('5.0.0', 's3://mirror/kill'))).code).toBe(0);
    expect(await expectServable('mirror', 'kill/')).toContain('5.0.0');
    expect((await cli(['verify', '--mirror', 's3://mirror/kill', ...rgw.flags])).code).toBe(0);
  });
});

describe('objects the mirror no longer has', () => {
  it('are refused when the bucket published them and the mirror does not record removing them', async () => {
    // s3://mirror/kill has 5.0.0, published into the bucket only: pushing dist over it would unpublish it.
    const refused = await cli(['push', 's3://mirror/kill', '--mirror', 'dist', ...rgw.flags]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/acme\/hello\/null 5\.0\.0: published with sha256 \w+, and this write removes it/);
  });

  it('stay until push --prune, which deletes them once the new manifest is in place; --dry-run uploads nothing', async () => {
    writeModules(dir, ['1.0.0', '1.2.0', '1.2.3'], 'mods-prune');
    expect((await runCli(['build', '--modules', 'mods-prune', '--mirror', 'dist-prune', '--json'], dir)).code).toBe(0);
    expect((await cli(['push', 's3://mirror/prune', '--mirror', 'dist-prune', ...rgw.flags])).code).toBe(0);
    rmSync(join(dir, 'mods-prune/acme/hello/null/1.2.0'), { recursive: true });
    expect((await runCli(['build', '--modules', 'mods-prune', '--mirror', 'dist-prune', '--prune', '--json'], dir)).code).toBe(0);
    const dry = json<{ uploaded: number; objects: string[]; dryRun: boolean }>(
      (await cli(['push', 's3://mirror/prune', '--mirror', 'dist-prune', ...rgw.flags, '--dry-run', '--json'])).stdout,
    );
    expect(dry.dryRun).toBe(true);
    expect(dry.objects.at(-1)).toBe('manifest.json');
    expect((await rgw.get('mirror', 'prune/manifest.json'))!.body.equals(readFileSync(join(dir, 'dist-prune/manifest.json')))).toBe(false);
    const kept = json<{ stale: number; deleted: number }>((await cli(['push', 's3://mirror/prune', '--mirror', 'dist-prune', ...rgw.flags, '--json'])).stdout);
    expect(kept.stale).toBeGreaterThan(0);
    expect(await rgw.get('mirror', 'prune/v1/modules/acme/hello/null/1.2.0/hello-null-1.2.0.tar.gz')).toBeDefined();
    const pruned = json<{ stale: number; deleted: number; uploaded: number }>(
      (await cli(['push', 's3://mirror/prune', '--mirror', 'dist-prune', ...rgw.flags, '--prune', '--json'])).stdout,
    );
    expect(pruned).toMatchObject({ uploaded: 0, deleted: kept.stale, stale: 0 });
    expect(await rgw.get('mirror', 'prune/v1/modules/acme/hello/null/1.2.0/hello-null-1.2.0.tar.gz')).toBeUndefined();
    expect([...(await rgw.list('mirror', 'prune/v1/modules/acme/hello/null/1.2.0/')).keys()]).toEqual([]);
    expect((await cli(['verify', '--mirror', 's3://mirror/prune', ...rgw.flags])).code).toBe(0);
  });
});

describe("Terraform's module installer against the bucket's website endpoint", () => {
  it('installs with the download header stored on the objects, no modmirror running', async () => {
    const pushed = await cli(['push', 's3://site', '--mirror', 'dist', ...rgw.flags, '--download-header']);
    expect(pushed.code, pushed.stderr).toBe(0);
    const modulesUrl = `${rgw.website}/site/v1/modules/`;
    const got = await install({ source: `${new URL(rgw.website).host}/acme/hello/null`, version: '~> 1.2', dest: join(dir, 'i-site'), modulesUrl });
    expect([got.version, got.location]).toEqual(['1.2.3', './hello-null-1.2.3.tar.gz']);
    expectSameFiles(got, join(dir, 'mods/acme/hello/null/1.2.3'));
    // A publish keeps to how the bucket was pushed: its new version's download object carries the header too.
    expect((await cli(publishArgs('2.2.0', 's3://site'))).code).toBe(0);
    const latest = await install({ source: `${new URL(rgw.website).host}/acme/hello/null`, version: '2.2.0', dest: join(dir, 'i-site-2'), modulesUrl });
    expect(
      createHash('sha256')
        .update(readFileSync(join(latest.dir, 'main.tf')))
        .digest('hex'),
    ).toBe(
      createHash('sha256')
        .update(readFileSync(join(dir, 'src/2.2.0/main.tf')))
        .digest('hex'),
    );
  });

  it.skipIf(!hasTerraform)('installs with terraform itself, a host block naming the modules service, no modmirror running', async () => {
    const host = new URL(rgw.website).host;
    const root = join(dir, 'tf');
    writeFiles(root, {
      'main.tf': `module "hello" {\n  source  = "${host}/acme/hello/null"\n  version = "2.2.0"\n}\n`,
      // The website endpoint has no discovery document at its root: the CLI configuration names the service.
      'cli.tfrc': `host "${host}" {\n  services = { "modules.v1" = "${rgw.website}/site/v1/modules/" }\n}\n`,
    });
    const env = { ...process.env, TF_CLI_CONFIG_FILE: join(root, 'cli.tfrc'), CHECKPOINT_DISABLE: '1', TF_IN_AUTOMATION: '1' };
    await promisify(execFile)('terraform', ['get'], { cwd: root, env, timeout: 60_000 });
    expect(readFileSync(join(root, '.terraform/modules/hello/main.tf'), 'utf8')).toBe(readFileSync(join(dir, 'src/2.2.0/main.tf'), 'utf8'));
  });
});

describe('a signed mirror in a bucket', () => {
  const at = join(dir, 'signed');
  const passphrase = { MODMIRROR_SIGNING_PASSPHRASE: 'mirror signer' };
  const SIGN = ['--sign-key', 'keys/mirror-signer.key.asc'];
  const BUCKET = 's3://signed/reg';
  let g: Gpg;
  const run = (args: string[], env: Record<string, string> = passphrase) => runCli(args, at, { ...rgw.env, ...env });
  const publishNet = (version: string) => ['publish', '--source', 'extra', '--namespace', 'acme', '--name', 'net', '--provider', 'aws', '--version', version];

  /** verify --trust of the bucket's mirror; and gpg's own check of the root's and the state's signatures, as the bucket holds them. */
  async function expectSigned(): Promise<void> {
    const verified = await run(['verify', '--mirror', BUCKET, ...rgw.flags, '--trust', 'keys/mirror-signer.pub.asc']);
    expect(verified.code, verified.stderr).toBe(0);
    for (const rel of ['manifest.json', 'state/acme/net.aws.json']) {
      const file = join(at, 'object');
      writeFileSync(file, (await rgw.get('signed', `reg/${rel}`))!.body);
      writeFileSync(`${file}.asc`, (await rgw.get('signed', `reg/${rel}.asc`))!.body);
      expect(g.check(['--verify', `${file}.asc`, file]).code, rel).toBe(0);
    }
  }

  beforeAll(async () => {
    writeFiles(at, { 'mods/acme/net/aws/1.0.0/main.tf': 'variable "a" {}\n', 'extra/main.tf': 'variable "c" {}\n' });
    const made = await runCli(
      ['key', 'create', '--name', 'Mirror Signer', '--email', 'm@example.com', '--algorithm', 'curve25519', '--out', 'keys'],
      at,
      passphrase,
    );
    expect(made.code, made.stderr).toBe(0);
    g = gpg();
    g.run(['--import', join(at, 'keys/mirror-signer.pub.asc')]);
    expect((await runCli(['build', '--modules', 'mods', '--mirror', 'dist', ...SIGN], at, passphrase)).code).toBe(0);
    await rgw.createBucket('signed');
    const pushed = await run(['push', BUCKET, '--mirror', 'dist', ...rgw.flags]);
    expect(pushed.code, pushed.stderr).toBe(0);
  });
  afterAll(() => g?.close());

  it('is pushed with its signatures', () => expectSigned());

  it('push signs the root again where the bucket moved it on (--sign-key); an unsigned folder is refused', async () => {
    // Two signed writes into the bucket: its root's generation is now ahead of the folder's.
    for (const change of [['--reason', 'old'], ['--undo']]) {
      const deprecated = await run(['deprecate', 'acme/net/aws', '1.0.0', ...change, '--mirror', BUCKET, ...rgw.flags, ...SIGN]);
      expect(deprecated.code, deprecated.stderr).toBe(0);
    }
    const refused = await run(['push', BUCKET, '--mirror', 'dist', ...rgw.flags]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/The mirror is signed \(manifest\.json\.asc\), and this write has no key to sign what it changes \(manifest\.json\)/);
    const pushed = await run(['push', BUCKET, '--mirror', 'dist', ...rgw.flags, ...SIGN]);
    expect(pushed.code, pushed.stderr).toBe(0);
    await expectSigned();
    cpSync(join(at, 'dist'), join(at, 'unsigned'), { recursive: true, dereference: true, filter: (src) => !src.endsWith('.asc') });
    const unsigned = await run(['push', BUCKET, '--mirror', 'unsigned', ...rgw.flags]);
    expect(unsigned.code).toBe(1);
    expect(unsigned.stderr).toMatch(/is signed \(manifest\.json\.asc\) and \S+unsigned is not: pushing it would leave the bucket's truth unsigned/);
    await expectSigned();
  });

  it('stays signed through publish and deprecate --sign-key', async () => {
    const published = await run([...publishNet('1.1.0'), '--mirror', BUCKET, ...rgw.flags, ...SIGN, '--json']);
    expect(published.code, published.stderr).toBe(0);
    expect(json<{ uploaded: string[] }>(published.stdout).uploaded).toEqual(expect.arrayContaining(['state/acme/net.aws.json.asc', 'manifest.json.asc']));
    await expectSigned();
    const deprecated = await run(['deprecate', 'acme/net/aws', '1.0.0', '--reason', 'old', '--mirror', BUCKET, ...rgw.flags, ...SIGN]);
    expect(deprecated.code, deprecated.stderr).toBe(0);
    await expectSigned();
  });

  it('fails verify --trust when an object changed after it was signed', async () => {
    const state = (await rgw.get('signed', 'reg/state/acme/net.aws.json'))!.body;
    await rgw.client.send(new PutObjectCommand({ Bucket: 'signed', Key: 'reg/state/acme/net.aws.json', Body: Buffer.concat([state, Buffer.from(' ')]) }));
    const failed = await run(['verify', '--mirror', BUCKET, ...rgw.flags, '--trust', 'keys/mirror-signer.pub.asc']);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/state\/acme\/net\.aws\.json: it changed after it was signed/);
    await rgw.client.send(new PutObjectCommand({ Bucket: 'signed', Key: 'reg/state/acme/net.aws.json', Body: state }));
    await expectSigned();
  });

  it('refuses a write without the key (exit 1) and is left as it was', async () => {
    const before = await rgw.list('signed', 'reg/');
    const refused = await run([...publishNet('1.2.0'), '--mirror', BUCKET, ...rgw.flags], {});
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/The mirror is signed \(manifest\.json\.asc\), and this write has no key/);
    expect(await rgw.list('signed', 'reg/')).toEqual(before);
    await expectSigned();
  });
});
