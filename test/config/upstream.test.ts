import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/index.js';
import { parseDuration, resolveUpstream, validateUpstream } from '../../src/config/upstream.js';
import { tempDir, writeFiles } from '../helpers.js';

describe('upstream', () => {
  it('reads durations as seconds or with a unit', () => {
    expect(parseDuration(600)).toBe(600);
    expect(parseDuration('90s')).toBe(90);
    expect(parseDuration('10m')).toBe(600);
    expect(parseDuration('1h')).toBe(3600);
    expect(parseDuration('2 d')).toBe(172_800);
    for (const bad of [0, -5, 1.5, '', '10 minutes', '1.5h', '0m', null, true]) expect(parseDuration(bad), String(bad)).toBeUndefined();
  });

  it('reports every bad key', () => {
    expect(validateUpstream({ url: 'https://registry.example.com/', ttl: '10m', ca: 'ca.pem', tokenFile: 'token' })).toEqual([]);
    expect(validateUpstream({ url: 'registry.example.com', ttl: 'soon', tokenEnv: '', tokenFile: 'f', proxy: 1, followCalls: 'yes' })).toEqual([
      { path: ['upstream', 'proxy'], message: 'unknown key; expected one of url, ttl, ca, tokenEnv, tokenFile, followCalls' },
      { path: ['upstream', 'url'], message: `expected the upstream registry's http(s) URL, got "registry.example.com"` },
      { path: ['upstream', 'ttl'], message: 'expected a duration such as 600, 90s, 10m or 1h, got "soon"' },
      { path: ['upstream', 'tokenEnv'], message: 'expected a variable name, got ""' },
      { path: ['upstream', 'followCalls'], message: 'expected true or false, got "yes"' },
      { path: ['upstream', 'tokenFile'], message: 'give tokenEnv or tokenFile, not both' },
    ]);
    expect(validateUpstream('https://registry.example.com/')).toHaveLength(1);
  });

  it('resolves its files against the config file, with file:line for a problem', () => {
    const dir = tempDir('mm-config-upstream-');
    writeFiles(dir, { 'conf/mirror.config.yaml': 'upstream:\n  url: https://registry.example.com/\n  ttl: 5m\n  ca: certs/ca.pem\n  followCalls: false\n' });
    const config = resolveConfig({ config: 'conf/mirror.config.yaml' }, dir, { sourcesMustExist: false });
    expect(config.upstream).toEqual({
      url: 'https://registry.example.com/',
      ttlSeconds: 300,
      ca: join(dir, 'conf/certs/ca.pem'),
      tokenEnv: undefined,
      tokenFile: undefined,
      followCalls: false,
    });
    expect(resolveUpstream(undefined, dir)).toEqual({
      url: undefined,
      ttlSeconds: undefined,
      ca: undefined,
      tokenEnv: undefined,
      tokenFile: undefined,
      followCalls: true,
    });
    writeFiles(dir, { 'bad.yaml': 'upstream:\n  url: https://registry.example.com/\n  ttl: forever\n' });
    expect(() => resolveConfig({ config: 'bad.yaml' }, dir, { sourcesMustExist: false })).toThrow(/bad\.yaml:3.*upstream\.ttl.*expected a duration/s);
  });
});
