// unpackUpload on its own: what `tar zcf m.tar.gz -C DIR .` and go-slug
// write is taken as is (a `./` prefix, links inside the module); what points
// outside is refused by name.

import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { Header } from 'tar';
import { describe, expect, it } from 'vitest';
import { unpackUpload } from '../../src/publish/upload.js';
import { tempDir, writeFiles } from '../helpers.js';

const LIMITS = { maxBytes: 1 << 20, maxUnpackedBytes: 1 << 22 };

function hardLinkTar(linkpath: string): Buffer {
  const blocks: Buffer[] = [];
  const body = Buffer.from('x\n');
  for (const h of [
    new Header({ path: 'main.tf', type: 'File', size: body.length, mode: 0o644 }),
    new Header({ path: 'copy.tf', type: 'Link', size: 0, mode: 0o644, linkpath }),
  ]) {
    h.encode();
    blocks.push(h.block!);
    if (h.type === 'File') blocks.push(body, Buffer.alloc(512 - body.length));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

describe('unpackUpload', () => {
  it('takes `tar -C DIR .` output, ./ prefixes and in-module links included', async () => {
    const src = tempDir('mm-upsrc-');
    writeFiles(src, { 'main.tf': 'variable "a" {}\n', 'modules/x/main.tf': 'output "x" { value = 1 }\n' });
    symlinkSync('../../main.tf', join(src, 'modules/x/root.tf'));
    const tgz = execFileSync('tar', ['czf', '-', '-C', src, '.']);
    const out = join(tempDir('mm-upout-'), 'module');
    await unpackUpload(Readable.from([tgz]), out, LIMITS);
    expect(readFileSync(join(out, 'modules/x/main.tf'), 'utf8')).toContain('output "x"');
    expect(readlinkSync(join(out, 'modules/x/root.tf'))).toBe('../../main.tf');
  });

  it('takes a hard link to a file of the module, refuses one leaving it', async () => {
    const out = join(tempDir('mm-upout-'), 'module');
    await unpackUpload(Readable.from([hardLinkTar('main.tf')]), out, LIMITS);
    expect(readFileSync(join(out, 'copy.tf'), 'utf8')).toBe('x\n');
    await expect(unpackUpload(Readable.from([hardLinkTar('../outside')]), join(tempDir('mm-upout-'), 'module'), LIMITS)).rejects.toThrow(
      /copy\.tf: a hard link to \.\.\/outside, outside the module/,
    );
  });

  it('bounds what a small gzip unpacks to', async () => {
    const blocks: Buffer[] = [];
    const h = new Header({ path: 'big.bin', type: 'File', size: 8 << 20, mode: 0o644 });
    h.encode();
    blocks.push(h.block!, Buffer.alloc(8 << 20), Buffer.alloc(1024));
    const bomb = gzipSync(Buffer.concat(blocks));
    expect(bomb.length).toBeLessThan(LIMITS.maxBytes);
    await expect(unpackUpload(Readable.from([bomb]), join(tempDir('mm-upout-'), 'module'), LIMITS)).rejects.toMatchObject({
      code: 'UNPROCESSABLE',
      message: expect.stringMatching(/unpacks to more than 4 MiB/),
    });
  });
});
