// The config a build reads (src/config/), through the CLI as a user meets
// it: every problem at once with file, line and key; missing sources;
// duplicate module addresses; invalid YAML; no config at all.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, runCli, tempDir, writeFiles, type CliResult } from '../helpers.js';

describe('config problems', () => {
  async function buildWithConfig(config: string, files: Record<string, string> = {}): Promise<CliResult & { dir: string }> {
    const dir = tempDir();
    writeFiles(dir, { 'mirror.config.yaml': config, 'mods/a/b/c/1.0.0/main.tf': 'variable "x" {}\n', ...files });
    return { ...(await runCli(['build'], dir)), dir };
  }

  it('names file, line and key of an unknown key and a wrong type, all at once', async () => {
    const r = await buildWithConfig(
      'sources:\n  - folder: mods\n    recursive: true\nout: 5\nmodules:\n  a/b/c:\n    verified: "yes"\nbrowse:\n  imageHosts: [ftp://x]\n',
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/4 problem\(s\)/);
    expect(r.stderr).toMatch(/mirror\.config\.yaml:9: browse\.imageHosts\[0\]: expected an http\(s\) origin/);
    expect(r.stderr).toMatch(/mirror\.config\.yaml:3: sources\[0\]\.recursive: unknown key/);
    expect(r.stderr).toMatch(/mirror\.config\.yaml:4: out: expected a string, got 5/);
    expect(r.stderr).toMatch(/mirror\.config\.yaml:7: modules\.a\/b\/c\.verified: expected true or false, got "yes"/);
    expect(r.stderr).toMatch(/^hint: /m);
    expect(existsSync(join(r.dir, 'dist'))).toBe(false);
  });

  it("lists the problems in the file's order, and names the key a misspelt one meant", async () => {
    const r = await buildWithConfig(
      'limits:\n  file_size: 1MiB\nbase_url: https://r.example.com/\nsources:\n  - git: repo\n    TagPrefix: v\n  - folder: mods\nplatform: [linux_amd64]\n',
    );
    expect(r.code).toBe(1);
    const lines = r.stderr.split('\n').filter((line) => line.includes('mirror.config.yaml:'));
    expect(lines.map((line) => line.replace(/^.*mirror\.config\.yaml:/, ''))).toEqual([
      '2: limits.file_size: unknown key; did you mean fileSize?',
      '3: base_url: unknown key; did you mean baseUrl?',
      '6: sources[0].TagPrefix: unknown key; did you mean tagPrefix?',
      '8: platform: unknown key; expected one of out, baseUrl, cacheDir, sources, modules, browse, sync, providers, platforms, providersPath, signing, provenance, access, limits, trust, upstream',
    ]);
  });

  it('names a missing source path', async () => {
    const r = await buildWithConfig('sources:\n  - folder: nowhere\n  - git: no-repo\n    namespace: x\n    name: y\n    provider: z\n');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/mirror\.config\.yaml:2: sources\[0\]\.folder: the folder ".*nowhere" does not exist/);
    expect(r.stderr).toMatch(/mirror\.config\.yaml:3: sources\[1\]\.git: the repository ".*no-repo" does not exist/);
  });

  it('refuses a duplicate module address and a git source without an address', async () => {
    const dir = tempDir();
    makeRepo(join(dir, 'repo'), [{ date: '2024-01-01T00:00:00Z', files: { 'main.tf': '' }, tags: ['v1.0.0'] }]);
    writeFiles(dir, {
      'mirror.config.yaml':
        'sources:\n  - git: repo\n    namespace: a\n    name: b\n    provider: c\n  - git: repo\n    namespace: a\n    name: b\n    provider: c\n  - git: repo\n',
    });
    const r = await runCli(['build'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/:6: sources\[1\]: duplicate module address a\/b\/c, already given by sources\[0\]/);
    expect(r.stderr).toMatch(/sources\[2\]\.namespace: missing/);
    expect(r.stderr).toMatch(/sources\[2\]\.name: missing; set it, or name the repository terraform-<provider>-<name>/);
  });

  it('refuses the same module from a folder and a git repository', async () => {
    const dir = tempDir();
    makeRepo(join(dir, 'repo'), [{ date: '2024-01-01T00:00:00Z', files: { 'main.tf': '' }, tags: ['v2.0.0'] }]);
    writeFiles(dir, {
      'mods/a/b/c/1.0.0/main.tf': '',
      'mirror.config.yaml': 'sources:\n  - folder: mods\n  - git: repo\n    namespace: a\n    name: b\n    provider: c\n',
    });
    const r = await runCli(['build'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Duplicate module address a\/b\/c: it comes from two sources/);
  });

  it('reports invalid YAML with its line', async () => {
    const r = await buildWithConfig('sources:\n  - folder: mods\n  bad: [\n');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not valid YAML:\n.*mirror\.config\.yaml:\d+:\d+: /);
  });

  it('says how to start when there is no config', async () => {
    const r = await runCli(['build'], tempDir());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/error: No mirror\.config\.yaml in /);
    expect(r.stderr).toMatch(/hint: Pass --config FILE, or --modules DIR/);
    const missing = await runCli(['build', '--config', 'nope.yaml'], tempDir());
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/The config file ".*nope\.yaml" does not exist/);
  });
  it('checks the providers list, platforms and providersPath with file, line and key', async () => {
    const r = await buildWithConfig(
      'sources:\n  - folder: mods\nproviders:\n  - folder: missing-mirror\n  - folder: zips\n    namespace: Hashi Corp\n  - folder: zips\n    hostname: registry.terraform.io\n  - folder: zips\n    namespace: acme\n    kind: zips\nplatforms: [linux_amd64, linux]\nprovidersPath: v1/providers\n',
      { 'zips/.keep': '' },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/mirror\.config\.yaml:6: providers\[1\]\.namespace: expected a provider namespace such as hashicorp/);
    expect(r.stderr).toMatch(/mirror\.config\.yaml:8: providers\[2\]\.hostname: a hostname belongs to a folder of release zips, which also needs "namespace"/);
    expect(r.stderr).toMatch(/mirror\.config\.yaml:11: providers\[3\]\.kind: unknown key; expected one of folder, hostname, namespace/);
    expect(r.stderr).toMatch(/mirror\.config\.yaml:12: platforms\[1\]: expected an OS_ARCH platform such as linux_amd64, got "linux"/);
    expect(r.stderr).toMatch(/mirror\.config\.yaml:13: providersPath: expected a folder path inside the mirror/);
    expect(r.stderr).toMatch(/5 problem\(s\)/);
  });

  it('checks in-house provider entries and the signing key with file, line and key', async () => {
    const r = await buildWithConfig(
      'sources:\n  - folder: mods\nproviders:\n  - folder: zips\n    namespace: acme\n    registry: true\n  - folder: zips\n    namespace: acme\n    keys: [a.asc]\n  - folder: zips\n    namespace: acme\n    hostname: registry.example.com\n    registry: yes please\nsigning:\n  key: s.asc\n  passphraseEnv: not a name\n',
      { 'zips/.keep': '' },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /mirror\.config\.yaml:6: providers\[0\]\.registry: in-house providers are addressed HOSTNAME\/NAMESPACE\/TYPE by the mirror's host name: set hostname/,
    );
    expect(r.stderr).toMatch(/mirror\.config\.yaml:9: providers\[1\]\.keys: keys check the signatures of in-house releases; set registry: true too/);
    expect(r.stderr).toMatch(/mirror\.config\.yaml:13: providers\[2\]\.registry: expected true or false, got "yes please"/);
    expect(r.stderr).toMatch(/mirror\.config\.yaml:16: signing\.passphraseEnv: expected an environment variable name/);
    const missing = await buildWithConfig(
      'baseUrl: https://registry.example.com/\nproviders:\n  - folder: zips\n    namespace: acme\n    registry: true\n    keys: [nope.asc]\n',
      { 'zips/.keep': '' },
    );
    expect(missing.stderr).toMatch(/mirror\.config\.yaml:6: providers\[0\]\.keys\[0\]: the key file ".*nope\.asc" does not exist/);
  });

  it('names a provider folder that does not exist', async () => {
    const r = await buildWithConfig('sources:\n  - folder: mods\nproviders:\n  - folder: missing-mirror\n');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/mirror\.config\.yaml:4: providers\[0\]\.folder: the folder ".*missing-mirror" does not exist/);
  });
});
