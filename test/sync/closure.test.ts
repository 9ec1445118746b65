// sync's dependency closure against a `modmirror serve` upstream: module A
// calls B (`~> 1.0`) from its root and C from its example, B calls D, D calls
// B back (a cycle), and the calls sync cannot follow (git::, local paths,
// another host, a missing module, a constraint nothing matches) are reported,
// never fatal. Then a user's configuration: `sync --for` it, build, serve,
// and the module-install client (Terraform's own download libraries, with a
// `host` override for registry.terraform.io) installs A, and B from A's call.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractVersion } from '../../src/extract/index.js';
import type { RunningServer } from '../../src/serve/index.js';
import { parseModuleSource } from '../../src/protocol/source-address.js';
import { runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';
import { expectSameFiles, install, moduleInstallClient } from '../clients/install.js';
import { startUpstream } from './upstream.js';

const upstreamDir = tempDir('mm-closure-upstream-');
const here = tempDir('mm-closure-');
let upstream: RunningServer;
let mirror: RunningServer | undefined;

const call = (name: string, source: string, version?: string) =>
  `module "${name}" {\n  source = "${source}"\n${version === undefined ? '' : `  version = "${version}"\n`}}\n`;
/** One version's files; each differs (an output names the version), so a wrong pick fails a byte comparison. */
const version = (key: string, v: string, files: Record<string, string> = {}) =>
  Object.fromEntries(
    Object.entries({ 'outputs.tf': `output "which" {\n  value = "${key} ${v}"\n}\n`, ...files }).map(([path, text]) => [`mods/${key}/${v}/${path}`, text]),
  );

const UPSTREAM = {
  'mirror.config.yaml': 'sources:\n  - folder: mods\n',
  ...version('acme/a/null', '1.0.0', {
    'main.tf': call('b', 'acme/b/null', '~> 1.0') + call('inner', './modules/inner') + call('vcs', 'git::https://git.example.com/vcs.git?ref=v1'),
    'modules/inner/main.tf': call('far', 'registry.example.com/acme/far/null', '1.0.0'),
    'examples/basic/main.tf': call('a', '../../') + call('c', 'acme/c/null'),
  }),
  ...version('acme/a/null', '2.0.0', { 'main.tf': call('e', 'acme/e/null') }),
  ...version('acme/b/null', '1.0.0'),
  ...version('acme/b/null', '1.2.0', { 'main.tf': call('d', 'registry.terraform.io/acme/d/null', '>= 1.0') }),
  ...version('acme/b/null', '2.0.0', { 'main.tf': call('e', 'acme/e/null') }),
  ...version('acme/c/null', '1.0.0'),
  ...version('acme/c/null', '1.1.0', { 'main.tf': call('missing', 'acme/missing/null', '~> 1.0') }),
  ...version('acme/c/null', '1.2.0-rc.1'),
  ...version('acme/d/null', '1.0.0', { 'main.tf': call('b', 'acme/b/null', '~> 1.2') + call('c', 'acme/c/null', '>= 9.0') }),
  ...version('acme/e/null', '1.0.0'),
};

beforeAll(async () => {
  // Compile (or find) the Go client early: on a fresh machine this is the slow part.
  await moduleInstallClient();
  upstream = await startUpstream(upstreamDir, UPSTREAM);
});
afterAll(async () => {
  await mirror?.close();
  await upstream?.close();
});

/** Every NS/NAME/PROVIDER/VERSION folder under `dir`. */
function versionsIn(dir: string): string[] {
  const found: string[] = [];
  for (const ns of readdirSync(dir))
    for (const name of readdirSync(join(dir, ns)))
      for (const p of readdirSync(join(dir, ns, name))) for (const v of readdirSync(join(dir, ns, name, p))) found.push(`${ns}/${name}/${p} ${v}`);
  return found.sort();
}

const syncJson = async (args: string[]) => {
  const r = await runCli(['sync', '--from', upstream.url, '--json', ...args], here);
  expect(r.stderr).toBe('');
  return { code: r.code, summary: JSON.parse(r.stdout) as { ok: boolean; upstreams: Record<string, unknown>[] } };
};

describe('sync follows module calls', () => {
  it('mirrors the newest match of every registry call, transitively, and reports what it cannot follow', async () => {
    const { code, summary } = await syncJson(['--module', 'acme/a/null@~> 1.0', '--into', 'newest']);
    expect(code).toBe(1);
    expect(versionsIn(join(here, 'newest'))).toEqual(['acme/a/null 1.0.0', 'acme/b/null 1.2.0', 'acme/c/null 1.1.0', 'acme/d/null 1.0.0']);
    const result = summary.upstreams[0]!;
    expect(summary.ok).toBe(false);
    expect(result['fetched']).toEqual([
      { module: 'acme/a/null', version: '1.0.0', files: 4 },
      { module: 'acme/b/null', version: '1.2.0', calledFrom: 'acme/a/null 1.0.0: module "b"', files: 2 },
      { module: 'acme/d/null', version: '1.0.0', calledFrom: 'acme/b/null 1.2.0: module "d"', files: 2 },
      { module: 'acme/c/null', version: '1.1.0', calledFrom: 'acme/a/null 1.0.0 examples/basic: module "c"', files: 2 },
    ]);
    expect(result['cycles']).toEqual([['acme/b/null 1.2.0', 'acme/d/null 1.0.0', 'acme/b/null 1.2.0']]);
    expect(result['notMirrored']).toEqual([
      expect.objectContaining({ source: './modules/inner', calledFrom: 'acme/a/null 1.0.0: module "inner"', reason: 'local' }),
      expect.objectContaining({ source: 'git::https://git.example.com/vcs.git?ref=v1', calledFrom: 'acme/a/null 1.0.0: module "vcs"', reason: 'git' }),
      expect.objectContaining({
        source: 'registry.example.com/acme/far/null',
        version: '1.0.0',
        calledFrom: 'acme/a/null 1.0.0 modules/inner: module "far"',
        reason: 'other-host',
      }),
      expect.objectContaining({ source: '../../', calledFrom: 'acme/a/null 1.0.0 examples/basic: module "a"', reason: 'local' }),
    ]);
    expect(result['failures']).toEqual([
      {
        module: 'acme/c/null',
        calledFrom: 'acme/d/null 1.0.0: module "c"',
        message: expect.stringMatching(
          /^acme\/c\/null: no upstream version matches ">= 9\.0" \(upstream has: .*1\.1\.0.*\) \(called from acme\/d\/null 1\.0\.0: module "c"\)$/,
        ),
      },
      {
        module: 'acme/missing/null',
        calledFrom: 'acme/c/null 1.1.0: module "missing"',
        message: expect.stringMatching(/answered 404.*: the upstream has no such module \(called from acme\/c\/null 1\.1\.0: module "missing"\)$/),
      },
    ]);
    expect(result['providers']).toEqual([]);
  });

  it('says so in plain text: what it added, what it did not mirror, the cycle, what it could not find', async () => {
    const r = await runCli(['sync', '--from', upstream.url, '--module', 'acme/a/null@~> 1.0', '--into', 'newest'], here);
    expect(r.code).toBe(1);
    // A second run finds everything in place and fetches nothing; the reports are the same.
    expect(r.stdout).toMatch(/^Fetched 0 version\(s\) into newest\/ \(4 already there\)/);
    // The calls to a module's own folders are counted, not listed (--verbose lists them: summary.test.ts).
    expect(r.stdout).toContain('Not mirrored:\n  2 calls to a local folder (./..., ../...): part of the caller, its calls are followed (--verbose lists them)');
    expect(r.stdout).toContain(
      '  registry.example.com/acme/far/null "1.0.0" (acme/a/null 1.0.0 modules/inner: module "far"): other host: registry.example.com is not a registry this upstream stands in for',
    );
    expect(r.stdout).toContain('Cycles (each version is mirrored once):\n  acme/b/null 1.2.0 -> acme/d/null 1.0.0 -> acme/b/null 1.2.0');
    expect(r.stdout).toMatch(/Could not find, fetch or verify:\n {2}acme\/c\/null: no upstream version matches ">= 9\.0"/);
    expect(r.stderr).toMatch(/error: acme\/missing\/null versions: GET .* answered 404/);
  });

  it('mirrors every match when asked, and nothing called with --no-dependencies', async () => {
    const every = await syncJson(['--module', 'acme/a/null@~> 1.0', '--into', 'every', '--dependency-versions', 'every']);
    expect(every.code).toBe(1);
    expect(versionsIn(join(here, 'every'))).toEqual([
      'acme/a/null 1.0.0',
      'acme/b/null 1.0.0',
      'acme/b/null 1.2.0',
      'acme/c/null 1.0.0',
      'acme/c/null 1.1.0',
      'acme/d/null 1.0.0',
    ]);

    const alone = await syncJson(['--module', 'acme/a/null@~> 1.0', '--into', 'alone', '--no-dependencies']);
    expect(alone.code).toBe(0);
    expect(alone.summary.upstreams[0]).toMatchObject({ fetched: [{ module: 'acme/a/null', version: '1.0.0' }], notMirrored: [], failures: [], cycles: [] });
    expect(versionsIn(join(here, 'alone'))).toEqual(['acme/a/null 1.0.0']);
  });

  it('takes the same choices from the config, and checks them key by key', async () => {
    writeFiles(here, {
      'cfg/mirror.config.yaml': `sources:\n  - folder: drop\nsync:\n  - from: ${upstream.url}\n    modules: [acme/b/null@~> 1.0]\n    dependencies: false\n`,
      'bad/mirror.config.yaml': `sources:\n  - folder: drop\nsync:\n  - from: ${upstream.url}\n    for: []\n    dependencies: "no"\n    dependencyVersions: all\n    standsInFor: [localhost]\n`,
    });
    const r = await runCli(['sync'], join(here, 'cfg'));
    expect(r.code).toBe(0);
    expect(versionsIn(join(here, 'cfg/drop'))).toEqual(['acme/b/null 1.0.0', 'acme/b/null 1.2.0']);
    const bad = await runCli(['sync'], join(here, 'bad'));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/mirror\.config\.yaml:5: sync\[0\]\.for: expected a list of Terraform configuration folders/);
    expect(bad.stderr).toMatch(/:6: sync\[0\]\.dependencies: expected true or false, got "no"/);
    expect(bad.stderr).toMatch(/:7: sync\[0\]\.dependencyVersions: expected "newest" or "every", got "all"/);
    expect(bad.stderr).toMatch(/:8: sync\[0\]\.standsInFor\[0\]: "localhost" is not a registry host name/);
  });

  it('refuses bad flags and folders with a usage error, before fetching anything', async () => {
    for (const [args, message] of [
      [['--for', 'no-such-dir'], /--for .*no-such-dir: no such folder/],
      [['--for', '.'], /holds no \.tf or \.tf\.json files/],
      [['--module', 'acme/a/null', '--dependency-versions', 'all'], /Invalid --dependency-versions "all": expected newest or every/],
      [['--module', 'acme/a/null', '--stands-in-for', 'localhost'], /Invalid --stands-in-for "localhost"/],
    ] as [string[], RegExp][]) {
      const r = await runCli(['sync', '--from', upstream.url, '--into', 'refused', ...args], here);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
    expect(readdirSync(here)).not.toContain('refused');
  });
});

describe('sync --for a configuration, then terraform init from the mirror', () => {
  const CONFIGURATION = {
    'infra/main.tf':
      'terraform {\n  required_providers {\n    null = {\n      source  = "hashicorp/null"\n      version = "~> 3.0"\n    }\n  }\n}\n' +
      call('a', 'registry.terraform.io/acme/a/null', '~> 1.0') +
      call('shared', '../shared'),
    'shared/main.tf': call('e', 'acme/e/null') + call('private', 'app.terraform.io/acme/x/null', '1.0.0'),
  };

  it('mirrors every registry module init needs, and lists the providers it cannot carry without a provider folder', async () => {
    writeFiles(here, CONFIGURATION);
    const r = await runCli(['sync', '--from', upstream.url, '--for', 'infra', '--into', 'closure'], here);
    expect(r.code).toBe(1); // D's and C's calls cannot be satisfied, as above
    expect(versionsIn(join(here, 'closure'))).toEqual([
      'acme/a/null 1.0.0',
      'acme/b/null 1.2.0',
      'acme/c/null 1.1.0',
      'acme/d/null 1.0.0',
      'acme/e/null 1.0.0',
    ]);
    expect(r.stdout).toMatch(/^Fetched 5 version\(s\) into closure\/ \(0 already there\)/);
    expect(r.stdout).toContain('Added:\n  acme/a/null 1.0.0  (called from infra: module "a")\n');
    expect(r.stdout).toContain('  acme/e/null 1.0.0  (called from shared: module "e")');
    expect(r.stdout).toContain('  app.terraform.io/acme/x/null "1.0.0" (shared: module "private"): other host');
    expect(r.stdout).toContain(
      'Providers required (not mirrored: no provider folder; add "providers: - folder: DIR" to the config or pass --providers-into DIR):\n',
    );
    expect(r.stdout).toContain('  hashicorp/null "~> 3.0" (infra: required_providers)');
  });

  it("serves the closure so the client, with the host override, installs A and then B from A's call", async () => {
    const built = await runCli(['build', '--modules', 'closure', '--mirror', 'closure-dist', '--json'], here);
    expect(built.code, built.stderr).toBe(0);
    mirror = await serveMirror(here, { dir: join(here, 'closure-dist'), dataDir: join(here, 'closure-data') });
    // `host "registry.terraform.io" { services = { "modules.v1" = ".../v1/modules/" } }` in a CLI config.
    const modulesUrl = new URL('v1/modules/', mirror.url).href;
    const a = await install({ source: 'registry.terraform.io/acme/a/null', version: '~> 1.0', dest: join(here, 'init/a'), modulesUrl });
    expect(a.version).toBe('1.0.0');
    expectSameFiles(a, join(upstreamDir, 'mods/acme/a/null/1.0.0'));

    // What init does next: read the installed module's calls, and install each registry call from the same host block.
    const calls = extractVersion(
      readdirSync(a.dir)
        .filter((f) => f.endsWith('.tf'))
        .map((f) => ({ path: f, mode: 0o644, data: readFileSync(join(a.dir, f)) })),
    ).root.moduleCalls;
    const b = calls.find((c) => c.name === 'b')!;
    const source = parseModuleSource(b.source);
    expect(source).toMatchObject({ kind: 'registry', host: 'registry.terraform.io' });
    const address = source.kind === 'registry' ? `${source.host}/${source.address.namespace}/${source.address.name}/${source.address.provider}` : '';
    const installed = await install({ source: address, version: b.version, dest: join(here, 'init/b'), modulesUrl });
    expect(installed.version).toBe('1.2.0');
    expectSameFiles(installed, join(upstreamDir, 'mods/acme/b/null/1.2.0'));
  });
});
