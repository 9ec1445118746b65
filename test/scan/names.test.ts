// File names as bytes (src/scan/names.ts): a name that is not UTF-8 is
// carried in a string without loss, and every UTF-8 name is its plain string.

import { describe, expect, it } from 'vitest';
import { extractDocumentation } from '../../src/extract/index.js';
import { resolveLinks } from '../../src/scan/links.js';
import { isTextName, nameBytes, nameFromBytes, showName } from '../../src/scan/names.js';

const bytes = (...list: number[]) => Buffer.of(...list);

describe('names', () => {
  it('keeps the bytes of any name, and UTF-8 names as their plain strings', () => {
    const names = [
      Buffer.from('main.tf'),
      Buffer.from('modules/ünï/😀.tf'),
      Buffer.from('\uFFFD literally.txt'),
      Buffer.concat([Buffer.from('bad'), bytes(0xff), Buffer.from('.txt')]),
      bytes(0xc3), // a sequence cut short
      bytes(0xed, 0xa0, 0x80), // an encoded surrogate, which UTF-8 forbids
      bytes(0xc0, 0xaf), // overlong '/'
      bytes(0xf4, 0x90, 0x80, 0x80), // past U+10FFFF
      bytes(0xe2, 0x82, 0xac, 0x80, 0xe2, 0x82), // '€' then stray bytes
    ];
    for (const name of names) expect(nameBytes(nameFromBytes(name))).toEqual(name);
    expect(nameFromBytes(Buffer.from('modules/ünï/😀.tf'))).toBe('modules/ünï/😀.tf');
    expect(isTextName(nameFromBytes(Buffer.from('\uFFFD literally.txt')))).toBe(true);
  });

  it('gives names that differ only in bytes UTF-8 cannot read different strings', () => {
    const a = nameFromBytes(bytes(0x62, 0xfe));
    const b = nameFromBytes(bytes(0x62, 0xff));
    expect(a).not.toBe(b);
    expect(isTextName(a)).toBe(false);
    expect(showName(a)).toBe('b\\xfe');
    expect(showName('€')).toBe('€');
  });

  it('is shown with its bytes escaped in problems and warnings', () => {
    const bad = nameFromBytes(Buffer.concat([Buffer.from('bad'), bytes(0xff), Buffer.from('.tf')]));
    const { problems } = extractDocumentation([{ path: bad, mode: 0o644, data: Buffer.from('variable "a" {\n  default = \n}\n') }]);
    expect(problems).toEqual([expect.stringMatching(/^bad\\xff\.tf:2:\d+: /)]);
    expect(resolveLinks([], [{ path: bad, target: '/etc/passwd' }]).warnings).toEqual([
      'bad\\xff.tf: left out: the link points outside the module (-> /etc/passwd)',
    ]);
  });
});
