// verify catches each kind of corruption, naming the file.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { latestDetailFile, versionDetailFile } from '../../src/protocol/paths.js';
import type { ModuleAddress } from '../../src/types.js';
import { verifyMirror, WrittenDetails } from '../../src/verify/index.js';
import { runCli, tempDir, writeFiles } from '../helpers.js';

const dir = tempDir();
const dist = join(dir, 'dist');

beforeEach(async () => {
  rmSync(dist, { recursive: true, force: true });
  writeFiles(dir, {
    'mirror.config.yaml': 'sources:\n  - folder: mods\n',
    'mods/acme/a/aws/1.0.0/main.tf': 'variable "x" {}\n',
    'mods/acme/a/aws/1.0.0/README.md': '# A\n\nThe same text in both versions.\n',
    'mods/acme/a/aws/1.1.0/main.tf': 'variable "x" {}\nvariable "y" {}\n',
    'mods/acme/a/aws/1.1.0/README.md': '# A\n\nThe same text in both versions.\n',
    'mods/acme/b/aws/0.1.0/main.tf': 'output "o" { value = 1 }\n',
  });
  expect((await runCli(['build', '--clean'], dir)).code).toBe(0);
});

async function verify(): Promise<{ code: number; problems: { path: string; message: string }[]; stderr: string }> {
  const json = await runCli(['verify', '--mirror', 'dist', '--json'], dir);
  const human = await runCli(['verify', '--mirror', 'dist'], dir);
  expect(human.code).toBe(json.code);
  return { code: json.code, problems: JSON.parse(json.stdout).problems, stderr: human.stderr };
}

it('passes a freshly built mirror', async () => {
  const r = await verify();
  expect(r).toMatchObject({ code: 0, problems: [] });
  expect((await runCli(['verify', '--mirror', 'dist'], dir)).stdout).toMatch(/dist\/ is consistent\./);
});

it('catches a missing archive', async () => {
  rmSync(join(dist, 'v1/modules/acme/a/aws/1.0.0/a-aws-1.0.0.tar.gz'));
  const r = await verify();
  expect(r.code).toBe(1);
  expect(r.problems).toEqual([{ path: 'v1/modules/acme/a/aws/1.0.0/a-aws-1.0.0.tar.gz', message: 'missing: the download location points at no archive' }]);
  expect(r.stderr).toMatch(/^dist\/v1\/modules\/acme\/a\/aws\/1\.0\.0\/a-aws-1\.0\.0\.tar\.gz: missing/m);
});

it('catches a changed archive', async () => {
  const file = join(dist, 'v1/modules/acme/a/aws/1.1.0/a-aws-1.1.0.tar.gz');
  const bytes = readFileSync(file);
  const at = bytes.length - 5;
  bytes.writeUInt8(bytes.readUInt8(at) ^ 0xff, at);
  writeFileSync(file, bytes);
  const r = await verify();
  expect(r.code).toBe(1);
  expect(r.problems).toEqual([
    {
      path: 'v1/modules/acme/a/aws/1.1.0/a-aws-1.1.0.tar.gz',
      message: expect.stringMatching(/^sha256 [0-9a-f]{64} differs from the manifest's [0-9a-f]{64}$/),
    },
  ]);
});

it("checks archives by size alone when told not to hash them (a build's own check)", async () => {
  const changed = join(dist, 'v1/modules/acme/a/aws/1.1.0/a-aws-1.1.0.tar.gz');
  const bytes = readFileSync(changed);
  // The same size, other bytes: only hashing would tell.
  writeFileSync(changed, Buffer.alloc(bytes.length, 0x20));
  expect(await verifyMirror(dist, { hashArchives: false })).toEqual([]);
  writeFileSync(changed, bytes.subarray(1));
  rmSync(join(dist, 'v1/modules/acme/a/aws/1.0.0/a-aws-1.0.0.tar.gz'));
  expect(await verifyMirror(dist, { hashArchives: false })).toEqual([
    { path: 'v1/modules/acme/a/aws/1.1.0/a-aws-1.1.0.tar.gz', message: `size ${bytes.length - 1} differs from the manifest's ${bytes.length}` },
    { path: 'v1/modules/acme/a/aws/1.0.0/a-aws-1.0.0.tar.gz', message: 'missing: the download location points at no archive' },
  ]);
});

it('catches a listing that disagrees with the module states', async () => {
  const file = join(dist, 'v1/modules/index.json');
  const listing = JSON.parse(readFileSync(file, 'utf8'));
  listing.modules.reverse();
  writeFileSync(file, JSON.stringify(listing));
  const r = await verify();
  expect(r.problems).toEqual([{ path: 'v1/modules/index.json', message: 'disagrees with the module states' }]);
});

it("catches a module state whose versions or summary disagree with the module's documents", async () => {
  const file = join(dist, 'state/acme/a.aws.json');
  const good = readFileSync(file, 'utf8');
  const state = JSON.parse(good);
  writeFileSync(file, JSON.stringify({ ...state, latest: { ...state.latest, description: 'Another' } }));
  expect((await verify()).problems).toEqual([
    { path: 'state/acme/a.aws.json', message: 'latest description "Another" differs from its latest detail\'s "The same text in both versions."' },
    { path: 'browse/modules/acme/b.aws.json', message: 'disagrees with the module states' },
  ]);
  writeFileSync(file, JSON.stringify({ ...state, versions: state.versions.slice(0, 1) }));
  expect((await verify()).problems).toEqual(
    expect.arrayContaining([{ path: 'v1/modules/acme/a/aws/versions', message: 'lists versions ["1.1.0","1.0.0"], the manifest ["1.1.0"]' }]),
  );
});

it("catches the browse page's rows, its list of a namespace's pages, or its list of namespaces, disagreeing with the module states", async () => {
  // acme/a and acme/b make one page, named by its last module.
  const list = join(dist, 'browse/modules/acme/index.json');
  expect(JSON.parse(readFileSync(list, 'utf8'))).toEqual({ pages: ['b.aws'] });
  const rows = join(dist, 'browse/modules/acme/b.aws.json');
  const doc = JSON.parse(readFileSync(rows, 'utf8'));
  writeFileSync(rows, JSON.stringify({ modules: doc.modules.reverse() }));
  expect((await verify()).problems).toEqual([{ path: 'browse/modules/acme/b.aws.json', message: 'disagrees with the module states' }]);
  rmSync(rows);
  expect((await verify()).problems).toEqual([{ path: 'browse/modules/acme/b.aws.json', message: 'missing' }]);
  writeFileSync(list, JSON.stringify({ pages: ['a.aws', 'b.aws'] }));
  expect((await verify()).problems).toEqual([{ path: 'browse/modules/acme/index.json', message: 'does not list the pages the module states make' }]);
  rmSync(list);
  const index = join(dist, 'browse/index.json');
  writeFileSync(index, JSON.stringify({ ...JSON.parse(readFileSync(index, 'utf8')), namespaces: [] }));
  expect((await verify()).problems).toEqual([
    { path: 'browse/index.json', message: 'does not list the namespace acme' },
    { path: 'browse/modules/acme/index.json', message: 'missing' },
  ]);
});

it('catches a truncated JSON file, a wrong field type and a download pointing elsewhere', async () => {
  const versions = join(dist, 'v1/modules/acme/b/aws/versions');
  writeFileSync(versions, readFileSync(versions, 'utf8').slice(0, 40));
  const detail = join(dist, 'v1/modules/acme/a/aws/1.0.0/index.json');
  writeFileSync(detail, readFileSync(detail, 'utf8').replace('"verified": false', '"verified": "no"'));
  writeFileSync(join(dist, 'v1/modules/acme/a/aws/1.1.0/download'), JSON.stringify({ location: '../1.0.0/a-aws-1.0.0.tar.gz' }));
  const r = await verify();
  expect(r.code).toBe(1);
  expect(r.problems).toEqual(
    expect.arrayContaining([
      { path: 'v1/modules/acme/b/aws/versions', message: expect.stringMatching(/^does not parse: /) },
      { path: 'v1/modules/acme/a/aws/1.0.0/index.json', message: 'verified: expected a boolean, got "no"' },
      {
        path: 'v1/modules/acme/a/aws/1.1.0/download',
        message: expect.stringMatching(
          /resolves to v1\/modules\/acme\/a\/aws\/1\.0\.0\/a-aws-1\.0\.0\.tar\.gz, the manifest says v1\/modules\/acme\/a\/aws\/1\.1\.0\/a-aws-1\.1\.0\.tar\.gz/,
        ),
      },
    ]),
  );
});

it('says when a folder is not a mirror', async () => {
  const r = await runCli(['verify', '--mirror', 'mods'], dir);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/manifest\.json: missing: this is not a built mirror/);
});

it("catches a browse page that lacks one of its files (without markdown-it's it would show no README)", async () => {
  rmSync(join(dist, 'browse/markdown-it.min.js'));
  expect((await verify()).problems).toEqual([{ path: 'browse/markdown-it.min.js', message: 'missing: the browse page needs it' }]);
});

it('reports each unreadable JSON file once, whether or not the manifest names it', async () => {
  const detail = 'v1/modules/acme/a/aws/1.0.0/index.json';
  writeFileSync(join(dist, detail), readFileSync(join(dist, detail), 'utf8').slice(0, 30));
  // A version folder the manifest does not list, and a stray file: only the walk over every file reads these.
  writeFiles(dist, { 'v1/modules/acme/a/aws/9.9.9/index.json': '{"id":', 'browse/notes/0.1.0.json': '{' });
  const r = await verify();
  expect(r.code).toBe(1);
  const parse = expect.stringMatching(/^does not parse: /);
  expect(r.problems).toHaveLength(3);
  expect(r.problems).toEqual(
    expect.arrayContaining([
      { path: detail, message: parse },
      { path: 'v1/modules/acme/a/aws/9.9.9/index.json', message: parse },
      { path: 'browse/notes/0.1.0.json', message: parse },
    ]),
  );
});

describe("a build's own check of the details it wrote (WrittenDetails)", () => {
  const a = { namespace: 'acme', name: 'a', provider: 'aws' };
  const b = { namespace: 'acme', name: 'b', provider: 'aws' };
  const versions: [ModuleAddress, string][] = [
    [a, '1.0.0'],
    [a, '1.1.0'],
    [b, '0.1.0'],
  ];
  const latest: [ModuleAddress, string][] = [
    [a, '1.1.0'],
    [b, '0.1.0'],
  ];
  const details = versions.map(([address, version]) => versionDetailFile(address, version));
  /** What the build told verify as it wrote each detail: the documents it wrote, read here from the mirror. */
  const writtenAsBuilt = (alter: (rel: string, doc: Record<string, unknown>) => void = () => {}) => {
    const written = new WrittenDetails();
    for (const [address, version] of versions) {
      const rel = versionDetailFile(address, version);
      const text = readFileSync(join(dist, rel), 'utf8');
      const doc = JSON.parse(text);
      alter(rel, doc);
      written.add(address, version, doc, text, false);
    }
    for (const [address, version] of latest) {
      const text = readFileSync(join(dist, latestDetailFile(address)), 'utf8');
      written.add(address, version, JSON.parse(text), text, true);
    }
    return written;
  };

  it('passes the mirror it describes, without reading a detail', async () => {
    expect(await verifyMirror(dist, { written: writtenAsBuilt() })).toEqual([]);
    // Unreadable on disk now, but checked as written: only their sizes are looked at.
    const before = writtenAsBuilt();
    for (const rel of details) writeFileSync(join(dist, rel), '{'.padEnd(readFileSync(join(dist, rel)).length, ' '));
    expect(await verifyMirror(dist, { written: before })).toEqual([]);
    // Without what the build knew, verify reads them, and finds them broken.
    expect((await verifyMirror(dist)).map((p) => p.path)).toEqual(expect.arrayContaining(details));
  });

  it('catches a detail whose size on disk is not what was written, and the problems of what was written', async () => {
    const written = writtenAsBuilt((rel, doc) => {
      if (rel === details[0]) doc['verified'] = 'no';
      if (rel === details[1]) doc['id'] = 'acme/a/aws/1.0.0';
    });
    writeFileSync(join(dist, details[2]!), `${readFileSync(join(dist, details[2]!), 'utf8')} `);
    expect(await verifyMirror(dist, { written })).toEqual([
      { path: details[1], message: 'id is "acme/a/aws/1.0.0", expected "acme/a/aws/1.1.0"' },
      { path: details[0], message: 'verified: expected a boolean, got "no"' },
      { path: details[2], message: expect.stringMatching(/^is \d+ bytes, not the \d+ the build wrote$/) },
    ]);
  });

  it("catches a module's own detail that is not its latest version's text, or not the size written", async () => {
    const written = writtenAsBuilt();
    const text = readFileSync(join(dist, latestDetailFile(a)), 'utf8');
    written.add(a, '1.0.0', JSON.parse(text), text, true);
    expect(await verifyMirror(dist, { written })).toEqual([{ path: latestDetailFile(a), message: 'is not the detail of the latest version 1.1.0' }]);
    written.add(a, '1.1.0', JSON.parse(text), `${text} `, true);
    expect(await verifyMirror(dist, { written })).toEqual([
      { path: latestDetailFile(a), message: expect.stringMatching(/^is \d+ bytes, not the \d+ the build wrote$/) },
    ]);
  });
});

describe('verify --repair', () => {
  it('writes the derived documents again from the module states, and leaves every archive and published byte as it was', async () => {
    const versions = join(dist, 'v1/modules/acme/a/aws/versions');
    const listing = join(dist, 'v1/modules/index.json');
    const rows = join(dist, 'browse/modules/acme/b.aws.json');
    const archive = join(dist, 'v1/modules/acme/a/aws/1.0.0/a-aws-1.0.0.tar.gz');
    const truth = [join(dist, 'manifest.json'), join(dist, 'state/acme/a.aws.json'), join(dist, 'state/acme/b.aws.json'), archive];
    const derived = [versions, listing, rows];
    const good = [...derived, ...truth].map((f) => readFileSync(f));
    // Derived documents behind their truth, as a writer killed after its commit would leave them.
    writeFileSync(versions, JSON.stringify({ modules: [{ versions: [{ version: '1.0.0' }] }] }));
    writeFileSync(listing, JSON.stringify({ meta: { limit: 15, current_offset: 0 }, modules: [] }));
    writeFileSync(rows, JSON.stringify({ modules: [] }));
    expect((await verify()).code).toBe(1);

    const repaired = await runCli(['verify', '--mirror', 'dist', '--repair', '--json'], dir);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(JSON.parse(repaired.stdout)).toMatchObject({
      ok: true,
      repaired: expect.arrayContaining(['v1/modules/index.json', 'browse/modules/acme/b.aws.json', 'v1/modules/acme/a/aws/versions']),
    });
    [...derived, ...truth].forEach((file, i) => expect(readFileSync(file).equals(good[i]!), file).toBe(true));
    // Nothing left to repair.
    const again = await runCli(['verify', '--mirror', 'dist', '--repair'], dir);
    expect([again.code, again.stdout]).toEqual([0, expect.stringMatching(/Repaired nothing/)]);
  });
});

it("names a module state that does not parse, and checks every other module's", async () => {
  writeFileSync(join(dist, 'state/acme/a.aws.json'), '{"format": 3,');
  // Another module's damage is still found: the check goes on past the unreadable state.
  rmSync(join(dist, 'v1/modules/acme/b/aws/0.1.0/download'));
  const r = await verify();
  expect(r.code).toBe(1);
  expect(r.problems).toEqual(
    expect.arrayContaining([
      { path: 'state/acme/a.aws.json', message: expect.stringMatching(/^does not parse: /) },
      { path: 'v1/modules/acme/b/aws/0.1.0/download', message: 'missing' },
    ]),
  );
});
