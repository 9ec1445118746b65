// Uploads to a version's link that cannot be published leave the mirror as
// it was and the version `reg_ingress_failed`, saying why; parallel uploads
// all land once, a CLI publish waits its turn, and reads go on meanwhile; a
// delete during a version's upload is refused, one before it leaves the link
// nothing to publish to; a read-only mirror refuses writes; and curl follows
// HashiCorp's documented steps.

import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Header } from 'tar';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveGenerationName, runCli, spawnCli, tempDir, writeFiles } from '../helpers.js';
import { startHarness, TOKENS, type Harness } from '../management/helpers.js';
import {
  createBody,
  createVersionBody,
  goTfe,
  manifestOf,
  manifestText,
  moduleFiles,
  publishThroughApi,
  slug,
  upload,
} from '../management/registry-helpers.js';

const run = promisify(execFile);
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ publishing: { maxUploadBytes: 64 * 1024 } });
  await goTfe(h, 'user', 'POST', '/api/v2/organizations/acme/registry-modules', createBody('bad', 'aws'));
});
afterAll(() => h?.server.close());

/** A tar.gz made entry by entry, so it can hold what tools refuse to write. */
function rawTarGz(
  entries: { path: string; type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'CharacterDevice'; linkpath?: string; body?: string }[],
): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.body ?? '');
    const header = new Header({
      path: e.path,
      type: e.type ?? 'File',
      size: e.type && e.type !== 'File' ? 0 : body.length,
      mode: 0o644,
      mtime: new Date(0),
      linkpath: e.linkpath ?? '',
    });
    header.encode();
    blocks.push(header.block!);
    if (body.length > 0 && (e.type ?? 'File') === 'File') blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

const VERSION_OF = (v: string) => `/api/v2/organizations/acme/registry-modules/private/acme/bad/aws/version?module_version=${v}`;

async function uploadFails(version: string, bytes: Buffer, status: number, error: RegExp) {
  const before = { manifest: manifestText(h), generation: liveGenerationName(join(h.dir, 'dist')) };
  const v = await goTfe(h, 'user', 'POST', '/api/v2/registry-modules/acme/bad/aws/versions', createVersionBody(version));
  expect(v.status).toBe(201);
  const put = await upload(v.json.data.links.upload, bytes);
  expect(put.status, put.text).toBe(status);
  expect(JSON.parse(put.text).errors[0].detail).toMatch(error);
  const read = await goTfe(h, 'user', 'GET', VERSION_OF(version));
  expect(read.json.data.attributes).toMatchObject({ status: 'reg_ingress_failed', error: expect.stringMatching(error) });
  expect(manifestText(h)).toBe(before.manifest);
  expect(liveGenerationName(join(h.dir, 'dist'))).toBe(before.generation);
}

describe('an upload that cannot be published', () => {
  it('is not gzip', () => uploadFails('0.0.1', Buffer.from('main.tf\nplain text'), 422, /not gzip-compressed/));
  it('is gzip but not a tar', () => uploadFails('0.0.2', gzipSync(Buffer.from('x'.repeat(2000))), 422, /not a readable tar\.gz/));
  it('has a ../ entry', () =>
    uploadFails(
      '0.0.3',
      rawTarGz([
        { path: 'main.tf', body: 'output "a" { value = 1 }\n' },
        { path: '../evil.tf', body: 'x' },
      ]),
      422,
      /\.\.\/evil\.tf: outside the module/,
    ));
  it('has an absolute entry', () => uploadFails('0.0.4', rawTarGz([{ path: '/etc/evil.tf', body: 'x' }]), 422, /outside the module/));
  it('has a link leaving the module', () =>
    uploadFails(
      '0.0.5',
      rawTarGz([
        { path: 'main.tf', body: 'x' },
        { path: 'modules/a/passwd', type: 'SymbolicLink', linkpath: '../../../etc/passwd' },
      ]),
      422,
      /a link to \.\.\/\.\.\/\.\.\/etc\/passwd, outside/,
    ));
  it('has a device', () => uploadFails('0.0.6', rawTarGz([{ path: 'tty', type: 'CharacterDevice' }]), 422, /CharacterDevice entry/));
  it('is larger than the limit', async () => {
    const big = rawTarGz([{ path: 'main.tf', body: 'x' }]);
    const noise = Buffer.concat([big.subarray(0, 10), Buffer.alloc(70 * 1024, 7)]);
    await uploadFails('0.0.7', noise, 413, /larger than the limit/);
  });
  it('does not build (an HCL syntax error), naming the file', () =>
    uploadFails('0.0.8', rawTarGz([{ path: 'main.tf', body: 'variable "x" {\n' }]), 422, /main\.tf/));
  it('holds folders and no file', () =>
    uploadFails(
      '0.0.9',
      rawTarGz([
        { path: './', type: 'Directory' },
        { path: './modules/', type: 'Directory' },
      ]),
      422,
      /^upload of acme\/bad\/aws 0\.0\.9 holds no files: its archive would be empty\.$/,
    ));

  it('repeats a version the CLI published meanwhile, with other bytes', async () => {
    const v = await goTfe(h, 'user', 'POST', '/api/v2/registry-modules/acme/bad/aws/versions', createVersionBody('3.0.0'));
    writeFiles(h.dir, Object.fromEntries(Object.entries(moduleFiles('3.0.0')).map(([p, t]) => [`cli/${p}`, t])));
    const cli = await runCli(
      ['publish', '--source', 'cli', '--namespace', 'acme', '--name', 'bad', '--provider', 'aws', '--version', '3.0.0', '--mirror', 'dist'],
      h.dir,
    );
    expect(cli.code, cli.stderr).toBe(0);
    const before = manifestText(h);
    const put = await upload(v.json.data.links.upload, await slug(moduleFiles('3.0.1')));
    expect(put.status).toBe(409);
    expect(JSON.parse(put.text).errors[0].detail).toMatch(/already published with different content/);
    expect(manifestText(h)).toBe(before);
    // The version is the one the mirror holds: ok, whatever the failed upload said.
    expect((await goTfe(h, 'user', 'GET', VERSION_OF('3.0.0'))).json.data.attributes.status).toBe('ok');
    const read = await goTfe(h, 'user', 'GET', '/api/v2/organizations/acme/registry-modules/private/acme/bad/aws');
    expect(read.json.data.attributes['version-statuses'].find((s: { version: string }) => s.version === '0.0.1')).toMatchObject({
      status: 'reg_ingress_failed',
    });
  });

  it('a failed version can be created again and uploaded right', async () => {
    const v = await goTfe(h, 'user', 'POST', '/api/v2/registry-modules/acme/bad/aws/versions', createVersionBody('0.0.1'));
    expect(v.status).toBe(201);
    expect((await upload(v.json.data.links.upload, await slug(moduleFiles('0.0.1')), TOKENS.user)).status).toBe(200);
    expect((await goTfe(h, 'user', 'GET', VERSION_OF('0.0.1'))).json.data.attributes.status).toBe('ok');
  });
});

describe('parallel uploads', () => {
  it('8 uploads of different versions and modules all land once, a CLI publish waits its turn, and reads go on', async () => {
    const jobs = Array.from({ length: 8 }, (_, i) => publishThroughApi(h, 'user', `par${i % 2}`, `1.${i}.0`));
    writeFiles(h.dir, Object.fromEntries(Object.entries(moduleFiles('9.0.0')).map(([p, t]) => [`cli9/${p}`, t])));
    // A process of its own, as a pipeline's publish is, while the server takes the uploads.
    const cli = spawnCli(
      ['publish', '--source', 'cli9', '--namespace', 'acme', '--name', 'par0', '--provider', 'aws', '--version', '9.0.0', '--mirror', 'dist'],
      h.dir,
    );
    let done = false;
    const began = performance.now();
    const latencies: number[] = [];
    const reads = (async () => {
      while (!done) {
        const started = performance.now();
        const res = await h.call('none', 'GET', '/v1/modules/a/b/c/versions');
        expect(res.status).toBe(200);
        latencies.push(performance.now() - started);
      }
    })();
    const results = await Promise.all(jobs);
    expect((await cli).code).toBe(0);
    const queue = performance.now() - began;
    done = true;
    await reads;
    for (const r of results) expect(r.put.status, r.put.text).toBe(200);
    const manifest = manifestOf(h);
    expect(manifest.modules['acme/par0/aws']!.versions.map((v) => v.version)).toEqual(['9.0.0', '1.6.0', '1.4.0', '1.2.0', '1.0.0']);
    expect(manifest.modules['acme/par1/aws']!.versions.map((v) => v.version)).toEqual(['1.7.0', '1.5.0', '1.3.0', '1.1.0']);
    for (let i = 0; i < 8; i++)
      expect(
        (await goTfe(h, 'user', 'GET', `/api/v2/organizations/acme/registry-modules/private/acme/par${i % 2}/aws/version?module_version=1.${i}.0`)).json.data
          .attributes.status,
      ).toBe('ok');
    latencies.sort((a, b) => a - b);
    // Reads were answered throughout: many of them, none held up for a whole publish queue (nine publishes, one at a time).
    expect(latencies.length).toBeGreaterThan(8);
    expect(latencies[Math.floor(latencies.length / 2)]).toBeLessThan(queue / 9);
  });
});

/**
 * go-tfe's Upload with its body sent in two halves: the second only once `meanwhile`
 * (run while the server holds the first half, the version claimed) has finished.
 */
async function uploadInTwoParts<T>(url: string, bytes: Buffer, meanwhile: () => Promise<T>): Promise<{ put: { status: number; text: string }; during: T }> {
  const body = new PassThrough();
  const answer = request(url, {
    method: 'PUT',
    headers: { accept: 'application/json, */*', 'content-type': 'application/octet-stream', 'user-agent': 'go-tfe', 'content-length': String(bytes.length) },
    body,
  }).then(async (res) => ({ status: res.statusCode, text: await res.body.text() }));
  body.write(bytes.subarray(0, bytes.length >> 1));
  const during = await meanwhile();
  body.end(bytes.subarray(bytes.length >> 1));
  return { put: await answer, during };
}

const MODULE_OF = (name: string) => `/api/v2/organizations/acme/registry-modules/private/acme/${name}/aws`;
const statusOf = async (name: string, version: string) => {
  const read = await goTfe(h, 'user', 'GET', `${MODULE_OF(name)}/version?module_version=${version}`);
  return read.status === 200 ? (read.json.data.attributes.status as string) : read.status;
};

/** Waits until the server has claimed the version for its upload (the PUT's headers are in, its body is not). */
async function claimed(name: string, version: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await statusOf(name, version)) === 'reg_ingressing') return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${name} ${version} never became reg_ingressing`);
}

async function createVersion(name: string, version: string): Promise<string> {
  await goTfe(h, 'user', 'POST', '/api/v2/organizations/acme/registry-modules', createBody(name, 'aws'));
  const v = await goTfe(h, 'user', 'POST', `/api/v2/registry-modules/acme/${name}/aws/versions`, createVersionBody(version));
  expect(v.status, v.text).toBe(201);
  return v.json.data.links.upload as string;
}

describe('a delete during an upload', () => {
  it('DeleteVersion while the version uploads is refused with 409 saying so; the upload lands (200), and a DeleteVersion after it removes it on record', async () => {
    const link = await createVersion('race', '1.0.0');
    const { put, during } = await uploadInTwoParts(link, await slug(moduleFiles('1.0.0')), async () => {
      await claimed('race', '1.0.0');
      return goTfe(h, 'user', 'DELETE', `${MODULE_OF('race')}/1.0.0`);
    });
    expect(during.status, during.text).toBe(409);
    expect(during.headers['content-type']).toBe('application/vnd.api+json');
    expect(during.json.errors[0]).toMatchObject({ status: '409', detail: expect.stringMatching(/acme\/race\/aws 1\.0\.0 .*upload is in progress/) });
    expect(put.status, put.text).toBe(200);
    expect(JSON.parse(put.text).data.attributes).toMatchObject({ version: '1.0.0', status: 'ok' });
    expect(await statusOf('race', '1.0.0')).toBe('ok');
    expect(manifestOf(h).modules['acme/race/aws']!.versions.map((v) => v.version)).toEqual(['1.0.0']);
    // Nothing was removed, so nothing is on record; the delete asked again once the upload is done removes it, on record.
    expect((manifestOf(h).removed ?? []).filter((r) => r.module === 'acme/race/aws')).toEqual([]);
    const sha = manifestOf(h).modules['acme/race/aws']!.versions[0]!.sha256;
    expect((await goTfe(h, 'user', 'DELETE', `${MODULE_OF('race')}/1.0.0`)).status).toBe(204);
    // Every version removed: the module keeps its state, with no versions and the removals on record.
    expect(manifestOf(h).modules['acme/race/aws']).toEqual({ versions: [] });
    expect(manifestOf(h).removed!.filter((r) => r.module === 'acme/race/aws')).toEqual([
      { module: 'acme/race/aws', version: '1.0.0', sha256: sha, at: expect.any(String), by: 'user:alice' },
    ]);
    expect(await statusOf('race', '1.0.0')).toBe(404);
  });

  it('DeleteProvider and DeleteByName while a version of the module uploads are refused the same way', async () => {
    const link = await createVersion('race2', '1.0.0');
    const { put, during } = await uploadInTwoParts(link, await slug(moduleFiles('1.0.0')), async () => {
      await claimed('race2', '1.0.0');
      return [
        await goTfe(h, 'admin', 'DELETE', MODULE_OF('race2')),
        await goTfe(h, 'organization', 'DELETE', '/api/v2/organizations/acme/registry-modules/private/acme/race2'),
        await goTfe(h, 'user', 'POST', '/api/v2/registry-modules/actions/delete/acme/race2/aws/1.0.0'),
      ];
    });
    for (const res of during) {
      expect(res.status, res.text).toBe(409);
      expect(res.json.errors[0].detail).toMatch(/acme\/race2\/aws 1\.0\.0 .*upload is in progress/);
    }
    expect(put.status, put.text).toBe(200);
    expect(await statusOf('race2', '1.0.0')).toBe('ok');
    expect((manifestOf(h).removed ?? []).filter((r) => r.module === 'acme/race2/aws')).toEqual([]);
    expect((await goTfe(h, 'admin', 'DELETE', MODULE_OF('race2'))).status).toBe(204);
    expect(
      manifestOf(h)
        .removed!.filter((r) => r.module === 'acme/race2/aws')
        .map((r) => `${r.version} ${r.by}`),
    ).toEqual(['1.0.0 user:admin']);
  });

  it('DeleteVersion after CreateVersion and before the upload: 204, and the upload then gets a 404 saying the version was deleted, publishing nothing', async () => {
    const link = await createVersion('early', '1.0.0');
    const before = manifestText(h);
    expect((await goTfe(h, 'user', 'DELETE', `${MODULE_OF('early')}/1.0.0`)).status).toBe(204);
    expect(await statusOf('early', '1.0.0')).toBe(404);
    const put = await upload(link, await slug(moduleFiles('1.0.0')));
    expect(put.status, put.text).toBe(404);
    expect(JSON.parse(put.text).errors[0].detail).toMatch(/deleted/);
    expect(manifestText(h)).toBe(before);
    expect(await statusOf('early', '1.0.0')).toBe(404);
  });

  it('a version a stopped server left reg_ingressing (no upload of it in progress) can still be deleted', async () => {
    const link = await createVersion('stale', '1.0.0');
    const id = /registry-module-versions\/([^/]+)\/upload/.exec(link)![1]!;
    const file = join(h.data, 'registry-module-versions.json');
    const records = JSON.parse(readFileSync(file, 'utf8')) as { id: string; status: string }[];
    writeFileSync(file, JSON.stringify(records.map((r) => (r.id === id ? { ...r, status: 'reg_ingressing' } : r))));
    // A request sent after another process replaced the file is answered from what it wrote.
    expect(await statusOf('stale', '1.0.0')).toBe('reg_ingressing');
    expect((await goTfe(h, 'user', 'DELETE', `${MODULE_OF('stale')}/1.0.0`)).status).toBe(204);
    expect(await statusOf('stale', '1.0.0')).toBe(404);
  });
});

describe('a read-only mirror', () => {
  it('answers a clear 403 to every write of the family, and serves reads', async () => {
    const ro = await startHarness({ publishing: { readOnly: true } });
    try {
      const res = await goTfe(ro, 'user', 'POST', '/api/v2/organizations/acme/registry-modules', createBody('x', 'aws'));
      expect(res.status).toBe(403);
      expect(res.json.errors[0].detail).toMatch(/read-only/);
      expect((await goTfe(ro, 'user', 'DELETE', '/api/v2/organizations/acme/registry-modules/private/acme/x/aws/1.0.0')).status).toBe(403);
      // Who may not write at all still gets the 404, read-only or not.
      expect((await goTfe(ro, 'team', 'POST', '/api/v2/organizations/acme/registry-modules', createBody('x', 'aws'))).status).toBe(404);
      expect((await goTfe(ro, 'user', 'GET', '/api/v2/organizations/acme/registry-modules')).status).toBe(200);
    } finally {
      await ro.server.close();
    }
  });
});

describe("curl through HashiCorp's documented steps", () => {
  it('creates the module, creates a version, packs a tar.gz, PUTs it to the upload link, and reads the version ok', async () => {
    const dir = tempDir('mm-curl-');
    writeFiles(dir, Object.fromEntries(Object.entries(moduleFiles('2.1.0')).map(([p, t]) => [`module/${p}`, t])));
    const api = `${h.server.url}api/v2`;
    const curl = async (...args: string[]) => (await run('curl', ['--silent', '--show-error', '--fail-with-body', ...args], { cwd: dir })).stdout;
    const auth = ['--header', `Authorization: Bearer ${TOKENS.user}`, '--header', 'Content-Type: application/vnd.api+json'];
    writeFileSync(
      join(dir, 'module.json'),
      JSON.stringify({ data: { type: 'registry-modules', attributes: { name: 'curl', provider: 'aws', 'registry-name': 'private' } } }),
    );
    await curl(...auth, '--request', 'POST', '--data', '@module.json', `${api}/organizations/acme/registry-modules`);
    writeFileSync(
      join(dir, 'version.json'),
      JSON.stringify({ data: { type: 'registry-module-versions', attributes: { version: '2.1.0', 'commit-sha': 'f00d' } } }),
    );
    const created = JSON.parse(
      await curl(...auth, '--request', 'POST', '--data', '@version.json', `${api}/organizations/acme/registry-modules/private/acme/curl/aws/versions`),
    );
    await run('sh', ['-c', 'cd module && tar zcf ../module.tar.gz *'], { cwd: dir });
    await curl('--header', 'Content-Type: application/octet-stream', '--request', 'PUT', '--data-binary', '@module.tar.gz', created.data.links.upload);
    const read = JSON.parse(await curl(...auth, `${api}/organizations/acme/registry-modules/private/acme/curl/aws`));
    expect(read.data.attributes['version-statuses']).toEqual([{ version: '2.1.0', status: 'ok' }]);
    const archive = await run('curl', ['--silent', `${h.server.url}v1/modules/acme/curl/aws/2.1.0/curl-aws-2.1.0.tar.gz`, '--output', 'got.tar.gz'], {
      cwd: dir,
    });
    expect(archive.stderr).toBe('');
    const listed = (await run('tar', ['tzf', 'got.tar.gz'], { cwd: dir })).stdout
      .split('\n')
      .filter((l) => l && !l.endsWith('/'))
      .sort();
    expect(listed).toEqual(['README.md', 'main.tf', 'modules/sub/main.tf']);
    expect(readFileSync(join(dir, 'module/main.tf'), 'utf8')).toContain('2.1.0');
  });
});
