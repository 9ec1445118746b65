import { describe, expect, it } from 'vitest';
import { compareVersionsDesc, latestVersion } from '../src/version-order.js';

describe('compareVersionsDesc', () => {
  it('orders newest first by semver, pre-releases below their release, and build metadata by its text', () => {
    expect(['1.0.0', '1.10.0', '1.2.0-rc.1', '1.2.0', '1.0.0+b', '1.0.0+a'].sort(compareVersionsDesc)).toEqual([
      '1.10.0',
      '1.2.0',
      '1.2.0-rc.1',
      '1.0.0',
      '1.0.0+a',
      '1.0.0+b',
    ]);
  });
});

describe('latestVersion', () => {
  it('is the newest release, ignoring pre-releases and build metadata order', () => {
    expect(latestVersion(['1.0.0', '2.0.0-rc.1', '1.10.0', '1.9.0'])).toBe('1.10.0');
    expect(latestVersion(['1.0.0+build.2', '1.0.0-alpha'])).toBe('1.0.0+build.2');
  });
  it('falls back to the newest pre-release when there is no release', () => {
    expect(latestVersion(['0.1.0-beta.1', '0.1.0-beta.2'])).toBe('0.1.0-beta.2');
  });
});
