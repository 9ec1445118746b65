import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, parseSize, resolveLimits, validateLimits } from '../../src/config/limits.js';

describe('limits', () => {
  it('reads sizes as bytes or with a unit', () => {
    expect(parseSize(1000)).toBe(1000);
    expect(parseSize('512MiB')).toBe(512 * 1024 * 1024);
    expect(parseSize('1 GiB')).toBe(1024 ** 3);
    expect(parseSize('1.5gb')).toBe(1.5e9);
    expect(parseSize('200KB')).toBe(200_000);
    for (const bad of [0, -1, 1.5, '', 'lots', '5 parsecs', null, true]) expect(parseSize(bad), String(bad)).toBeUndefined();
  });

  it('reports every bad key, and fills the defaults', () => {
    expect(validateLimits({ fileSize: '2GiB', versionSize: 4096 })).toEqual([]);
    expect(validateLimits({ fileSize: 'big', versionSize: '9GiB', other: 1 })).toEqual([
      { path: ['limits', 'other'], message: 'unknown key; expected one of fileSize, versionSize' },
      { path: ['limits', 'fileSize'], message: 'expected a size under 8 GiB such as 512MiB, 2GiB or a number of bytes, got "big"' },
      { path: ['limits', 'versionSize'], message: 'expected a size under 8 GiB such as 512MiB, 2GiB or a number of bytes, got "9GiB"' },
    ]);
    expect(validateLimits([])).toHaveLength(1);
    expect(resolveLimits(undefined)).toEqual(DEFAULT_LIMITS);
    expect(resolveLimits({ fileSize: '1MiB' })).toEqual({ file: 1024 * 1024, version: DEFAULT_LIMITS.version });
  });
});
