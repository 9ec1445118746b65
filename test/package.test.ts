// The package as users get it (test/packed.ts): packed, installed outside the
// checkout, and run from there. The README's quick start runs here too, as
// written, in an empty folder with that `modmirror` on PATH; the other blocks
// the docs mark to run are test/docs-run.test.ts's.

import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, hasTerraform, makeRepo, mirrorManifest, ROOT, tempDir, writeFiles } from './helpers.js';
import { cleanEnv, installPacked, type PackedInstall } from './packed.js';
import { testKey, signRelease } from './providers/keys.js';
import { writeReleaseFolder } from './providers/zips.js';

const dir = tempDir('mm-package-');
const work = join(dir, 'work');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
let packed: PackedInstall;
let prefix: string;
let installed: string;

/** The installed CLI, from the work folder. */
const modmirror = (args: string[]) => packed.modmirror(args, work);

const timings: Record<string, number> = {};
async function timed<T>(name: string, step: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await step();
  } finally {
    timings[name] = Math.round(performance.now() - started) / 1000;
  }
}

beforeAll(async () => {
  packed = await installPacked(dir);
  ({ prefix, installed } = packed);
  Object.assign(timings, packed.timings);
  writeFiles(work, { 'mods/acme/plain/null/0.1.0/main.tf': 'variable "name" {\n  type = string\n}\n', 'mods/acme/plain/null/0.1.0/README.md': '# plain\n' });
}, 300_000);
afterAll(() => console.info(`package test steps (s): ${JSON.stringify(timings)}`));

describe('the installed package', () => {
  it('is a copy outside the checkout, and says its version', async () => {
    expect(lstatSync(installed).isSymbolicLink()).toBe(false);
    expect(relative(ROOT, realpathSync(installed)).startsWith('..')).toBe(true);
    const version = await modmirror(['--version']);
    expect(version).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    // The bundled CLI that bin/ runs, beside tsc's whole output: the bundle's folder once was
    // lib/bundle/, where src/bundle/ compiles to, and its clean-up emptied that. The build's packing thread
    // runs tsc's lib/pack/worker.js.
    for (const file of ['lib/cli-bundle/cli.js', 'lib/bundle/create.js', 'lib/pack/worker.js']) expect(existsSync(join(installed, file)), file).toBe(true);
  });

  it('builds the bundled samples with the shipped config, and a plain folder, each verified', async () => {
    const samples = await timed('build samples', () =>
      modmirror(['build', '--config', join(installed, 'mirror.config.yaml'), '--mirror', 'samples', '--json']),
    );
    expect(samples.stderr).toBe('');
    expect(samples.code).toBe(0);
    expect(JSON.parse(samples.stdout)).toMatchObject({ modules: 4, versions: 7, errors: [] });
    const plain = await modmirror(['build', '--modules', 'mods', '--mirror', 'plain', '--json']);
    expect(plain.stderr).toBe('');
    expect(JSON.parse(plain.stdout)).toMatchObject({ modules: 1, versions: 1, errors: [] });
    for (const out of ['samples', 'plain']) {
      // The browse page's files, which come from the package (markdown-it's from its dependency) rather than from the modules.
      expect(readFileSync(join(work, out, 'index.html'), 'utf8')).toContain('<html');
      expect(readFileSync(join(work, out, 'browse/markdown-it.min.js'), 'utf8')).toMatch(/^\/\*! markdown-it /);
      expect((await modmirror(['verify', '--mirror', out])).code, `verify ${out}`).toBe(0);
    }
  });

  it('publishes a tagged version from git into the mirror, and refuses a ref the repository lacks', async () => {
    makeRepo(join(work, 'terraform-aws-net'), [
      { date: '2024-03-01T00:00:00Z', files: { 'main.tf': 'variable "cidr" {}\n', 'README.md': '# net\n' }, tags: ['v1.2.0'] },
      { date: '2024-04-01T00:00:00Z', files: { 'main.tf': 'variable "cidr" {}\nvariable "name" {}\n' }, tags: ['v1.3.0'] },
    ]);
    const published = await modmirror(['publish', '--git', 'terraform-aws-net', '--ref', 'v1.2.0', '--namespace', 'acme', '--mirror', 'plain', '--json']);
    expect(published.stderr).toBe('');
    const result = JSON.parse(published.stdout);
    expect(result).toMatchObject({ module: 'acme/net/aws', version: '1.2.0', outcome: 'published' });
    const archive = readFileSync(join(work, 'plain/v1/modules/acme/net/aws/1.2.0/net-aws-1.2.0.tar.gz'));
    expect(createHash('sha256').update(archive).digest('hex')).toBe(result.sha256);
    expect((await modmirror(['verify', '--mirror', 'plain'])).code).toBe(0);
    // --no-spare: the next publish leaves nothing being copied beside the mirror.
    const next = await modmirror(['publish', '--git', 'terraform-aws-net', '--ref', 'v1.3.0', '--namespace', 'acme', '--mirror', 'plain', '--no-spare']);
    expect(next.stderr).toBe('');
    expect(next.code).toBe(0);
    const spares = () => readdirSync(work).filter((name) => name.startsWith('.plain.spare'));
    expect(spares()).toEqual([]);
    // Still none a moment later: a detached copy would have shown by now.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(spares()).toEqual([]);
    expect((await modmirror(['verify', '--mirror', 'plain'])).code).toBe(0);
    const missing = await modmirror(['publish', '--git', 'terraform-aws-net', '--ref', 'v9.9.9', '--namespace', 'acme', '--mirror', 'plain']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('has no commit "v9.9.9"');
  });

  it('prints an nginx config for the mirror', async () => {
    const nginx = await modmirror(['hosting', 'nginx', '--mirror', 'samples']);
    expect(nginx.code).toBe(0);
    expect(nginx.stdout).toContain(join(work, 'samples'));
    expect(nginx.stdout).toContain('X-Terraform-Get');
  });

  it('serves discovery and an archive byte for byte to a client that asks for gzip', async () => {
    const server = await startInstalledServe('samples');
    try {
      // Node's fetch, like Go's client, sends Accept-Encoding and undoes any Content-Encoding.
      const get = (url: URL) => fetch(url, { headers: { 'accept-encoding': 'gzip' } });
      const discoveryUrl = new URL('/.well-known/terraform.json', server.url);
      const modulesV1 = new URL(((await (await get(discoveryUrl)).json()) as Record<string, string>)['modules.v1']!, discoveryUrl);
      const downloadUrl = new URL('acme/network/aws/2.0.0/download', modulesV1);
      const download = await get(downloadUrl);
      expect(download.status).toBeLessThan(300);
      const location = download.headers.get('x-terraform-get');
      expect(location).toMatch(/\.tar\.gz$/);
      expect(await download.json()).toEqual({ location });
      const archiveUrl = new URL(location!, downloadUrl);
      const archive = await get(archiveUrl);
      expect(archive.status).toBe(200);
      const received = Buffer.from(await archive.arrayBuffer());
      const onDisk = readFileSync(join(work, 'samples', decodeURIComponent(archiveUrl.pathname)));
      const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
      expect(sha(received)).toBe(sha(onDisk));
      expect(archive.headers.get('content-encoding')).toBeNull();
    } finally {
      await server.stop();
    }
  });

  it('builds, verifies and serves an in-house provider release, its signature checked (openpgp.js and yauzl as installed)', async () => {
    const key = await testKey(work, 'Package Release');
    await writeReleaseFolder(join(work, 'releases'), 'widgets', '1.0.0', ['linux_amd64']);
    await signRelease(join(work, 'releases'), 'widgets', '1.0.0', key);
    writeFiles(work, {
      'providers.yaml': `out: with-providers\nsources:\n  - folder: mods\nproviders:\n  - folder: releases\n    namespace: acme\n    registry: true\n    hostname: registry.example.com\n    keys: [${key.publicFile}]\n`,
    });
    const built = await modmirror(['build', '--config', 'providers.yaml', '--json']);
    expect(built.stderr).toBe('');
    expect(JSON.parse(built.stdout)).toMatchObject({ providerPackages: 1, errors: [] });
    expect((await modmirror(['verify', '--mirror', 'with-providers'])).code).toBe(0);
    const server = await startInstalledServe('with-providers');
    try {
      const get = (path: string) => fetch(new URL(path, server.url), { headers: { 'accept-encoding': 'gzip' } });
      const tree = 'providers/registry.example.com/acme/widgets';
      const version = await get(`${tree}/1.0.0.json`);
      expect(version.headers.get('content-type')).toMatch(/^application\/json/);
      const { url } = ((await version.json()) as { archives: Record<string, { url: string }> }).archives['linux_amd64']!;
      const zip = await get(`${tree}/${url}`);
      expect(zip.headers.get('content-encoding')).toBeNull();
      expect(Buffer.from(await zip.arrayBuffer()).equals(readFileSync(join(work, 'releases', url)))).toBe(true);
      const versions = await get('v1/providers/acme/widgets/versions');
      expect(((await versions.json()) as { versions: { version: string }[] }).versions.map((v) => v.version)).toEqual(['1.0.0']);
    } finally {
      await server.stop();
    }
  });

  it('fails a build whose packing thread cannot start, saying why, and leaves the mirror as it was', async () => {
    // An install that lost its worker file: the build must stop with the reason, not wait for archives forever.
    const worker = join(installed, 'lib', 'pack', 'worker.js');
    const before = readFileSync(join(work, 'plain', 'manifest.json'));
    renameSync(worker, `${worker}.gone`);
    try {
      const failed = await modmirror(['build', '--clean', '--modules', 'mods', '--mirror', 'plain']);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain('error: The archive packing thread failed:');
      expect(failed.stderr).toContain('worker.js');
    } finally {
      renameSync(`${worker}.gone`, worker);
    }
    expect(readFileSync(join(work, 'plain', 'manifest.json')).equals(before)).toBe(true);
    expect((await modmirror(['verify', '--mirror', 'plain'])).code).toBe(0);
  });
});

describe("the README's quick start", () => {
  // Offline like every test: the quick start's module needs no provider, and the mirror is on 127.0.0.1.
  it('runs as written in an empty folder, up to terraform init installing the module from the mirror', async () => {
    const { script, port } = quickStart();
    // The one change: a free port for the README's 8080, which another program may hold.
    const free = await freePort();
    const folder = join(dir, 'quick-start');
    mkdirSync(folder);
    const terraformLine = /^\s*(?:[A-Z_]+=\S*\s+)*(?:terraform|tofu)\b/;
    const lines = script.replaceAll(port, String(free)).split('\n');
    const run = hasTerraform ? lines : lines.filter((line) => !terraformLine.test(line));
    if (!hasTerraform) console.info('quick start: terraform is not on PATH, so its line was left out; every modmirror command ran');
    const result = await timed('quick start', () => packed.runScript(run.join('\n'), folder));
    expect(result.code, result.output).toBe(0);
    // What each step left: the registry, checked; the server's answer; the module as Terraform installed it.
    expect(result.output).toContain('dist/ is consistent.');
    const manifest = mirrorManifest(join(folder, 'dist')) as {
      modules: Record<string, { versions: { version: string }[] }>;
    };
    expect(manifest.modules['acme/hello/null']?.versions.map((v) => v.version)).toEqual(['1.0.0']);
    expect(result.output).toMatch(/"version": "1\.0\.0"/);
    if (hasTerraform) {
      expect(result.output).toContain('Terraform has been successfully initialized!');
      const installed = readFileSync(join(folder, 'infra', '.terraform', 'modules', 'hello', 'main.tf'), 'utf8');
      expect(installed).toBe(readFileSync(join(folder, 'modules', 'acme', 'hello', 'null', '1.0.0', 'main.tf'), 'utf8'));
    }
  }, 120_000);
});

/** The shell block under the README's "Quick start" heading, marked for this test, and the port it serves on. */
function quickStart(): { script: string; port: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Quick start\n');
  expect(start, 'README.md has a "## Quick start" heading').toBeGreaterThan(-1);
  const section = readme.slice(start + 1, readme.indexOf('\n## ', start + 1));
  const block = /<!-- quick-start:[^>]*-->\n```sh\n([\s\S]*?)\n```/.exec(section);
  expect(block, 'the quick start has a ```sh block after a <!-- quick-start: ... --> marker').not.toBeNull();
  const port = /--port (\d+)/.exec(block![1]!)?.[1];
  expect(port, 'the quick start serves with --port N').toBeDefined();
  return { script: block![1]!, port: port! };
}

/** `modmirror serve --port 0` from the installed package; its URL comes from the line it prints. */
async function startInstalledServe(out: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(
    join(prefix, 'bin', 'modmirror'),
    ['serve', '--mirror', out, '--host', '127.0.0.1', '--port', '0', '--data', 'data', '--quiet'],
    { cwd: work, env: { ...cleanEnv(), NO_COLOR: '1' } },
  );
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${output}`)), 20_000);
    const onData = (d: Buffer) => {
      output += d.toString();
      const found = /at (https?:\/\/\S+)/.exec(output);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${output}`)));
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.on('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { url, stop };
}
