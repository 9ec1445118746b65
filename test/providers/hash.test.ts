// The h1:/zh: hashes against the values Terraform's own code computes: the
// h1: from golang.org/x/mod's dirhash (test/clients/provider-hash, the call
// Terraform's getproviders.PackageHashV1 makes), the zh: from sha256sum.

import { execFile } from 'node:child_process';
import { truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashZipEntries, packageHashes } from '../../src/providers/hash.js';
import { buildGoProgram } from '../clients/go-build.js';
import { tempDir } from '../helpers.js';
import { writeProviderZip, writeZip } from './zips.js';

const run = promisify(execFile);
let goHash: string;

beforeAll(async () => {
  goHash = (await buildGoProgram(join(import.meta.dirname, '../clients/provider-hash'))).binary;
}, 240_000);

async function goH1(file: string): Promise<string> {
  const { stdout } = await run(goHash, [file]);
  return stdout.split('  ')[0]!;
}

async function sha256sum(file: string): Promise<string> {
  const { stdout } = await run('sha256sum', [file]);
  return `zh:${stdout.split(' ')[0]}`;
}

describe('provider package hashes', () => {
  const dir = tempDir('mm-hash-');

  const cases: [string, (file: string) => Promise<void>][] = [
    [
      'a release package (one deflated executable)',
      (f) => writeProviderZip(dir, 'widgets', '1.2.0', 'linux_amd64').then((made) => run('mv', [made, f]).then(() => undefined)),
    ],
    [
      'stored and deflated entries, out of order',
      (f) =>
        writeZip(f, [
          { name: 'z.txt', content: 'last' },
          { name: 'A', content: 'upper', store: true },
          { name: 'a', content: '' },
        ]),
    ],
    [
      'directory entries and nested files',
      (f) => writeZip(f, [{ name: 'docs/' }, { name: 'docs/README.md', content: '# x\n' }, { name: 'bin/p', content: Buffer.from([0, 255, 10, 13]) }]),
    ],
    [
      'non-ASCII names, sorted by their bytes',
      (f) =>
        writeZip(f, [
          { name: 'é.txt', content: 'e' },
          { name: 'e.txt', content: 'e' },
          { name: 'Z.txt', content: 'z' },
        ]),
    ],
    ['a large entry', (f) => writeZip(f, [{ name: 'big', content: Buffer.alloc(3_000_000, 7) }])],
  ];

  for (const [label, make] of cases) {
    it(`matches Go's dirhash and sha256sum: ${label}`, async () => {
      const file = join(dir, `${label.replace(/\W+/g, '-')}.zip`);
      await make(file);
      const hashes = await packageHashes(file);
      expect(hashes.h1).toBe(await goH1(file));
      expect(hashes.zh).toBe(await sha256sum(file));
      expect(hashes.h1).toMatch(/^h1:[A-Za-z0-9+/]{43}=$/);
    });
  }

  it('gives a different h1: when one entry changes, the same when only the compression does', async () => {
    const a = join(dir, 'same-a.zip');
    const b = join(dir, 'same-b.zip');
    const c = join(dir, 'same-c.zip');
    await writeZip(a, [{ name: 'p', content: 'one' }]);
    await writeZip(b, [{ name: 'p', content: 'one', store: true }]);
    await writeZip(c, [{ name: 'p', content: 'two' }]);
    const [ha, hb, hc] = await Promise.all([a, b, c].map((f) => packageHashes(f)));
    expect(hb!.h1).toBe(ha!.h1);
    expect(hb!.zh).not.toBe(ha!.zh);
    expect(hc!.h1).not.toBe(ha!.h1);
  });

  it('names the file when it is not a zip or is cut short', async () => {
    const notZip = join(dir, 'not.zip');
    writeFileSync(notZip, 'hello');
    await expect(hashZipEntries(notZip)).rejects.toThrow(`${notZip}: not a readable zip file`);
    const cut = join(dir, 'cut.zip');
    await writeZip(cut, [{ name: 'p', content: Buffer.alloc(10_000, 1) }]);
    truncateSync(cut, 200);
    await expect(hashZipEntries(cut)).rejects.toThrow(cut);
  });

  it('refuses an entry name with a newline, as Go does', async () => {
    const file = join(dir, 'newline.zip');
    await writeZip(file, [{ name: 'a\nb', content: 'x' }]);
    await expect(run(goHash, [file])).rejects.toThrow();
    await expect(hashZipEntries(file)).rejects.toThrow('contains a newline');
  });
});
