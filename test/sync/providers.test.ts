// sync of provider packages from a providers.v1 upstream started here
// (provider-upstream.ts): the folder it writes is the `terraform providers
// mirror` layout, its h1: hashes equal Go's dirhash (test/clients/provider-hash,
// the call Terraform makes) and its zh: sha256sum's; each of Terraform's
// checks refuses what it should, a 503 is retried, a 404 platform reported;
// a sync killed mid-download (the built CLI, SIGKILL) leaves nothing visible
// half-written and the next run finishes it.

import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGoProgram } from '../clients/go-build.js';
import { ROOT, runCli, tempDir, writeFiles } from '../helpers.js';
import { startProviderUpstream, type ProviderUpstream } from './provider-upstream.js';

const run = promisify(execFile);
const dir = tempDir('mm-sync-prov-');
let upstream: ProviderUpstream;
let host = '';
let goHash = '';

beforeAll(async () => {
  upstream = await startProviderUpstream(dir, [
    {
      namespace: 'acme',
      type: 'widget',
      versions: { '1.0.0': ['linux_amd64', 'darwin_arm64'], '1.1.0': ['linux_amd64', 'darwin_arm64'], '2.0.0': ['linux_amd64'] },
    },
    {
      namespace: 'acme',
      type: 'broken',
      versions: Object.fromEntries(['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0', '1.5.0', '1.6.0'].map((v) => [v, ['linux_amd64']])),
    },
    { namespace: 'acme', type: 'slow', versions: { '0.1.0': ['linux_amd64'], '0.2.0': ['linux_amd64'] } },
  ]);
  host = new URL(upstream.url).host;
  goHash = (await buildGoProgram(join(import.meta.dirname, '../clients/provider-hash'))).binary;
}, 240_000);
afterAll(() => upstream?.close());

const json = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
const visible = (folder: string) =>
  readdirSync(folder)
    .filter((n) => !n.startsWith('.'))
    .sort();
const zipRequests = (name: string) => upstream.requests.filter((p) => p.endsWith(`/${name}`)).length;

describe('sync --provider', () => {
  const folder = () => join(dir, 'providers', host, 'acme/widget');

  it("writes the terraform providers mirror layout, with h1: from Go's dirhash and zh: from sha256sum, retrying a 503", async () => {
    upstream.faults.flaky.set('/v1/providers/acme/widget/versions', 2);
    const r = await runCli(
      [
        'sync',
        '--from',
        upstream.url,
        '--provider',
        'acme/widget@~> 1.0',
        '--platform',
        'linux_amd64',
        '--platform',
        'darwin_arm64',
        '--providers-into',
        'providers',
      ],
      dir,
    );
    expect(r.stderr).not.toMatch(/error:/);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/acme\/widget versions: answered 503; retrying in 0\.\d s \(attempt 2 of 5\)/);
    expect(r.stderr).toMatch(/acme\/widget 1\.0\.0: SHA256SUMS signed by [0-9A-F]{16}/);
    expect(r.stdout).toContain(
      `Fetched 4 provider package(s) into providers/ (0 already there) from ${new URL(upstream.url).origin}. Run modmirror build to serve them.`,
    );
    expect(r.stdout).toContain(
      `Added providers:\n  ${host}/acme/widget 1.1.0 linux_amd64, darwin_arm64\n  ${host}/acme/widget 1.0.0 linux_amd64, darwin_arm64`,
    );

    expect(visible(folder())).toEqual([
      '1.0.0.json',
      '1.1.0.json',
      'index.json',
      'terraform-provider-widget_1.0.0_darwin_arm64.zip',
      'terraform-provider-widget_1.0.0_linux_amd64.zip',
      'terraform-provider-widget_1.1.0_darwin_arm64.zip',
      'terraform-provider-widget_1.1.0_linux_amd64.zip',
    ]);
    expect(readdirSync(folder()).filter((n) => n.startsWith('.'))).toEqual([]);
    expect(json(join(folder(), 'index.json'))).toEqual({ versions: { '1.0.0': {}, '1.1.0': {} } });
    const doc = json(join(folder(), '1.1.0.json'));
    expect(Object.keys(doc.archives)).toEqual(['darwin_arm64', 'linux_amd64']);
    for (const [platform, archive] of Object.entries(doc.archives as Record<string, { url: string; hashes: string[] }>)) {
      const name = `terraform-provider-widget_1.1.0_${platform}.zip`;
      expect(archive.url).toBe(name);
      const zip = join(folder(), name);
      // The bytes are the upstream's, unchanged.
      expect(readFileSync(zip).equals(upstream.zips.get(name)!)).toBe(true);
      const go = (await run(goHash, [zip])).stdout.split('  ')[0];
      const sum = (await run('sha256sum', [zip])).stdout.split(' ')[0];
      expect(archive.hashes).toEqual([go, `zh:${sum}`]);
    }
  });

  it('fetches nothing again for a version already complete, only a platform it lacks; a platform the upstream lacks is reported', async () => {
    const before = zipRequests('terraform-provider-widget_1.0.0_linux_amd64.zip');
    const r = await runCli(
      [
        'sync',
        '--from',
        upstream.url,
        '--provider',
        `${host}/acme/widget`,
        '--platform',
        'linux_amd64',
        '--platform',
        'darwin_arm64',
        '--providers-into',
        'providers',
        '--json',
      ],
      dir,
    );
    expect(r.code).toBe(0);
    expect(zipRequests('terraform-provider-widget_1.0.0_linux_amd64.zip')).toBe(before);
    const report = JSON.parse(r.stdout);
    expect(report.ok).toBe(true);
    expect(report.upstreams[0].providerVersions).toEqual([
      { provider: `${host}/acme/widget`, version: '2.0.0', fetched: ['linux_amd64'], present: [] },
      { provider: `${host}/acme/widget`, version: '1.1.0', fetched: [], present: ['linux_amd64', 'darwin_arm64'] },
      { provider: `${host}/acme/widget`, version: '1.0.0', fetched: [], present: ['linux_amd64', 'darwin_arm64'] },
    ]);
    expect(report.upstreams[0].providerUnavailable).toEqual([{ provider: `${host}/acme/widget`, version: '2.0.0', platform: 'darwin_arm64' }]);
    expect(json(join(folder(), 'index.json'))).toEqual({ versions: { '1.0.0': {}, '1.1.0': {}, '2.0.0': {} } });
    expect(Object.keys(json(join(folder(), '2.0.0.json')).archives)).toEqual(['linux_amd64']);

    const text = await runCli(
      ['sync', '--from', upstream.url, '--provider', 'acme/widget@2.0.0', '--platform', 'darwin_arm64', '--providers-into', 'providers'],
      dir,
    );
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`No provider package for a platform (the upstream answered 404):\n  ${host}/acme/widget 2.0.0 darwin_arm64`);
  });

  it("refuses each package that fails one of Terraform's checks, keeps the others, and writes nothing for the refused", async () => {
    const f = upstream.faults;
    f.badSignature.add('broken/1.0.0');
    f.unlistedKey.add('broken/1.1.0');
    f.wrongZip.add('broken/1.2.0/linux_amd64');
    f.missingLine.add('broken/1.3.0/linux_amd64');
    f.truncated.add('broken/1.4.0/linux_amd64');
    f.signedBroken.add('broken/1.5.0/linux_amd64');
    const r = await runCli(['sync', '--from', upstream.url, '--provider', 'acme/broken', '--providers-into', 'providers'], dir);
    expect(r.code).toBe(1);
    const key = `${host}/acme/broken`.replace(/\./g, '\\.');
    expect(r.stderr).toMatch(new RegExp(`error: ${key} 1\\.0\\.0: error checking signature: .*[Ss]igned digest did not match`));
    expect(r.stderr).toMatch(
      new RegExp(`error: ${key} 1\\.1\\.0: authentication signature from unknown issuer \\(signed by [0-9A-F]{16}; the registry lists [0-9A-F]{16}\\)`),
    );
    expect(r.stderr).toMatch(
      new RegExp(`error: ${key} 1\\.2\\.0 linux_amd64: archive has incorrect SHA-256 checksum [0-9a-f]{64} \\(expected [0-9a-f]{64}\\)`),
    );
    expect(r.stderr).toMatch(
      new RegExp(`error: ${key} 1\\.3\\.0 linux_amd64: checksum list has no SHA-256 hash for "terraform-provider-broken_1\\.3\\.0_linux_amd64\\.zip"`),
    );
    expect(r.stderr).toMatch(new RegExp(`error: ${key} 1\\.4\\.0 linux_amd64: archive has incorrect SHA-256 checksum`));
    expect(r.stderr).toMatch(
      new RegExp(
        `error: ${key} 1\\.5\\.0 linux_amd64: the package matches its signed checksum but is not a zip Terraform can install: .*not a readable zip file`,
      ),
    );
    expect(r.stderr.match(/^error: /gm)).toHaveLength(6);
    expect(r.stdout).toMatch(/Could not find, fetch or verify:\n/);

    const folder = join(dir, 'providers', host, 'acme/broken');
    expect(visible(folder)).toEqual(['1.6.0.json', 'index.json', 'terraform-provider-broken_1.6.0_linux_amd64.zip']);
    expect(json(join(folder, 'index.json'))).toEqual({ versions: { '1.6.0': {} } });

    // Mended upstream: the next run takes the refused versions and leaves 1.6.0 alone.
    for (const set of [f.badSignature, f.unlistedKey, f.wrongZip, f.missingLine, f.truncated, f.signedBroken]) set.clear();
    const again = await runCli(['sync', '--from', upstream.url, '--provider', 'acme/broken', '--providers-into', 'providers'], dir);
    expect(again.stderr).not.toMatch(/error:/);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Fetched 6 provider package(s) into providers/ (1 already there) from ');
    expect(Object.keys(json(join(folder, 'index.json')).versions)).toEqual(['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0', '1.5.0', '1.6.0']);
  });

  it('refuses bad provider arguments and a missing provider folder with a usage error', async () => {
    for (const [args, message] of [
      [['--provider', 'acme'], /Invalid provider "acme": expected HOST\/NAMESPACE\/TYPE or NAMESPACE\/TYPE/],
      [['--provider', 'acme/widget@'], /nothing follows "@"/],
      [['--provider', 'acme/widget@>>1'], /Invalid version constraint ">>1"/],
      [['--provider', 'example.com/acme/widget'], /does not answer for example\.com/],
      [['--provider', 'acme/widget', '--platform', 'linux'], /Invalid --platform "linux"/],
    ] as [string[], RegExp][]) {
      const r = await runCli(['sync', '--from', upstream.url, ...args, '--providers-into', 'p'], dir);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
    const none = await runCli(['sync', '--from', upstream.url, '--provider', 'acme/widget'], tempDir('mm-sync-prov-none-'));
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      /Name the provider folder to fill with --providers-into DIR, or list one in mirror\.config\.yaml under "providers: - folder: DIR"/,
    );
  });

  it("takes providers and platforms from a sync: entry, into the config's first provider folder, and names file:line:key for mistakes", async () => {
    const cfg = join(dir, 'cfg');
    writeFiles(cfg, {
      'mirror.config.yaml': `sources:\n  - folder: mods\nproviders:\n  - folder: provs\nplatforms: [linux_amd64]\nsync:\n  - from: ${upstream.url}\n    providers:\n      - acme/slow@0.2.0\n    platforms: [linux_amd64, darwin_arm64]\n`,
      'mods/.keep': '',
      'provs/.keep': '',
      'bad.yaml': `sources:\n  - folder: mods\nsync:\n  - from: ${upstream.url}\n    providers:\n      - acme\n    platforms: [linux]\n`,
    });
    const r = await runCli(['sync'], cfg);
    expect(r.stderr).not.toMatch(/error:/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${host}/acme/slow 0.2.0 linux_amd64`);
    expect(r.stdout).toContain(`No provider package for a platform (the upstream answered 404):\n  ${host}/acme/slow 0.2.0 darwin_arm64`);
    expect(visible(join(cfg, 'provs', host, 'acme/slow'))).toEqual(['0.2.0.json', 'index.json', 'terraform-provider-slow_0.2.0_linux_amd64.zip']);

    const bad = await runCli(['sync', '--config', 'bad.yaml'], cfg);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/bad\.yaml:6: sync\[0\]\.providers\[0\]: Invalid provider "acme"/);
    expect(bad.stderr).toMatch(/bad\.yaml:7: sync\[0\]\.platforms\[0\]: "linux" is not an OS_ARCH platform/);
  });
});

describe('sync --for a configuration with required_providers and a lock file', () => {
  it('mirrors the locked versions, refuses a package whose hashes the lock file does not list, and the newest match of an unlocked requirement', async () => {
    const zh = (name: string) => `zh:${createHash('sha256').update(upstream.zips.get(name)!).digest('hex')}`;
    writeFiles(dir, {
      'infra/main.tf': `terraform {\n  required_providers {\n    widget = {\n      source  = "${host}/acme/widget"\n      version = ">= 1.0"\n    }\n    slow = {\n      source  = "${host}/acme/slow"\n    }\n    null = {\n      source  = "hashicorp/null"\n    }\n  }\n}\n`,
      'infra/.terraform.lock.hcl':
        `provider "${host}/acme/widget" {\n  version     = "1.0.0"\n  constraints = ">= 1.0"\n  hashes = [\n    "${zh('terraform-provider-widget_1.0.0_linux_amd64.zip')}",\n    "${zh('terraform-provider-widget_1.0.0_darwin_arm64.zip')}",\n  ]\n}\n` +
        `provider "${host}/acme/slow" {\n  version = "0.1.0"\n  hashes = [\n    "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",\n  ]\n}\n`,
      'unlocked/main.tf': `terraform {\n  required_providers {\n    widget = {\n      source  = "${host}/acme/widget"\n      version = "~> 1.0"\n    }\n  }\n}\n`,
    });
    const r = await runCli(
      ['sync', '--from', upstream.url, '--for', 'infra', '--for', 'unlocked', '--into', 'for-mods', '--providers-into', 'for-provs', '--json'],
      dir,
    );
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout).upstreams[0];
    expect(report.providerVersions).toEqual([
      { provider: `${host}/acme/widget`, version: '1.1.0', fetched: ['linux_amd64'], present: [], calledFrom: 'unlocked: required_providers' },
      { provider: `${host}/acme/widget`, version: '1.0.0', fetched: ['linux_amd64'], present: [], calledFrom: 'infra/.terraform.lock.hcl' },
    ]);
    expect(report.failures).toEqual([
      // A bare address is registry.terraform.io's, which the upstream stands in for by default: it is asked, and lacks it.
      {
        provider: 'registry.terraform.io/hashicorp/null',
        message: expect.stringMatching(
          /hashicorp\/null\/versions answered 404: .*the upstream has no such provider \(required by infra: required_providers\)$/,
        ),
      },
      expect.objectContaining({
        provider: `${host}/acme/slow`,
        version: '0.1.0',
        platform: 'linux_amd64',
        message: expect.stringMatching(/doesn't match any of the checksums previously recorded in the dependency lock file/),
      }),
    ]);
    expect(existsSync(join(dir, 'for-provs', host, 'acme/slow/0.1.0.json'))).toBe(false);
    expect(Object.keys(json(join(dir, 'for-provs', host, 'acme/widget/index.json')).versions)).toEqual(['1.0.0', '1.1.0']);

    writeFiles(dir, { 'broken/main.tf': 'terraform {}\n', 'broken/.terraform.lock.hcl': 'provider "acme/widget" {\n  version = "1.0.0"\n}\n' });
    const bad = await runCli(['sync', '--from', upstream.url, '--for', 'broken', '--into', 'for-mods', '--providers-into', 'for-provs'], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/broken\/\.terraform\.lock\.hcl:2: provider block "acme\/widget": expected one label HOST\/NAMESPACE\/TYPE/);
  });
});

describe('a provider sync killed in the middle of a download', () => {
  it('leaves nothing visible half-written, and the next run completes the version', async () => {
    const file = 'terraform-provider-slow_0.1.0_linux_amd64.zip';
    upstream.faults.stall.add(file);
    const reached = new Promise<void>((resolve) => (upstream.onStall = () => resolve()));
    const child = spawn(
      process.execPath,
      [join(ROOT, 'bin/modmirror.js'), 'sync', '--from', upstream.url, '--provider', 'acme/slow', '--providers-into', 'killed'],
      { cwd: dir, stdio: 'ignore' },
    );
    const waited = await Promise.race([reached.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 15_000))]);
    child.kill('SIGKILL');
    expect(waited, 'the sync reached the stalled package').toBe(true);
    await new Promise((resolve) => child.on('exit', resolve));

    const folder = join(dir, 'killed', host, 'acme/slow');
    // Versions are taken newest first: 0.2.0 is whole, 0.1.0 is only in the hidden scratch folder.
    expect(visible(folder)).toEqual(['0.2.0.json', 'index.json', 'terraform-provider-slow_0.2.0_linux_amd64.zip']);
    expect(json(join(folder, 'index.json'))).toEqual({ versions: { '0.2.0': {} } });
    expect(readdirSync(folder).filter((n) => n.startsWith('.'))).toEqual([`.0.1.0.partial-${child.pid}`]);

    upstream.faults.stall.clear();
    const again = await runCli(['sync', '--from', upstream.url, '--provider', 'acme/slow', '--providers-into', 'killed'], dir);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Fetched 1 provider package(s) into killed/ (1 already there) from ');
    expect(readdirSync(folder).sort()).toEqual(['0.1.0.json', '0.2.0.json', 'index.json', file, 'terraform-provider-slow_0.2.0_linux_amd64.zip']);
    expect(readFileSync(join(folder, file)).equals(upstream.zips.get(file)!)).toBe(true);
    expect(existsSync(join(folder, `.0.1.0.partial-${child.pid}`))).toBe(false);
  });
});
