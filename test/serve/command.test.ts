// `modmirror serve` as a process: prints its URL, logs requests, stops
// cleanly on SIGTERM after finishing what is in flight, and rejects bad flags.

import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { beforeAll, expect, it } from 'vitest';
import { makeCertificates, mirrorManifest, runCli, spawnServe, tempDir, writeFiles } from '../helpers.js';

const dir = tempDir();

beforeAll(async () => {
  writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n', 'mods/a/b/c/1.0.0/main.tf': 'variable "x" {}\n' });
  expect((await runCli(['build', '--json'], dir)).code).toBe(0);
});

it('prints the URL, logs each request and stops on SIGTERM with exit 0', async () => {
  const { child, url, stdout, exited } = await spawnServe(['--port', '0'], dir, /at (http:\/\/127\.0\.0\.1:\d+\/)/);
  const res = await request(new URL('v1/modules/a/b/c/versions', url));
  expect(res.statusCode).toBe(200);
  await res.body.dump();
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(stdout()).toMatch(/GET \/v1\/modules\/a\/b\/c\/versions 200 \d+\.\dms/);
});

it('rejects bad flags and a missing mirror with exit 2', async () => {
  const badPort = await runCli(['serve', '--port', 'http'], dir);
  expect(badPort.code).toBe(2);
  expect(badPort.stderr).toMatch(/Invalid --port "http"/);
  const halfTls = await runCli(['serve', '--tls-cert', 'x.pem'], dir);
  expect(halfTls.code).toBe(2);
  expect(halfTls.stderr).toMatch(/both --tls-cert and --tls-key/);
  const noMirror = await runCli(['serve', '--mirror', 'nothing-here'], dir);
  expect(noMirror.code).toBe(2);
  expect(noMirror.stderr).toMatch(/does not exist[\s\S]*hint: Did you build the mirror\?/);
});

it('refuses a module state it cannot read, naming it, and an older mirror without its versions index, saying how to add one', async () => {
  cpSync(join(dir, 'dist'), join(dir, 'broken'), { recursive: true, dereference: true });
  writeFileSync(join(dir, 'broken/state/a/b.c.json'), '{"format":');
  const broken = await runCli(['serve', '--mirror', 'broken'], dir);
  expect(broken.code).toBe(1);
  expect(broken.stderr).toMatch(/module state "[^"]*broken\/state\/a\/b\.c\.json" is unreadable[\s\S]*hint: Run modmirror verify/);

  // What an older modmirror wrote: the whole truth in manifest.json, no states; here without its versions index.
  cpSync(join(dir, 'dist'), join(dir, 'old'), { recursive: true, dereference: true });
  const manifest = mirrorManifest(join(dir, 'old'));
  writeFileSync(join(dir, 'old/manifest.json'), JSON.stringify({ ...manifest, format: 2 }));
  rmSync(join(dir, 'old/state'), { recursive: true });
  const old = await runCli(['serve', '--mirror', 'old'], dir);
  expect(old.code).toBe(1);
  expect(old.stderr).toMatch(/Cannot load versions-index\.json from "[^"]*old": ENOENT[\s\S]*hint: A mirror built by an older modmirror/);
});

it('serves privately when the config says `access: private` (audit lines even with --quiet), and names a bad value', async () => {
  const privateDir = tempDir();
  writeFiles(privateDir, { 'mirror.config.yaml': 'access: private\nsources:\n  - folder: mods\n', 'mods/a/b/c/1.0.0/main.tf': 'variable "x" {}\n' });
  expect((await runCli(['build', '--json'], privateDir)).code).toBe(0);
  const { child, url, stdout, exited } = await spawnServe(['--port', '0', '--quiet'], privateDir, /at (http:\/\/127\.0\.0\.1:\d+\/) \(private/);
  const res = await request(new URL('v1/modules/a/b/c/versions', url));
  expect(res.statusCode).toBe(401);
  await res.body.dump();
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(stdout()).toContain('refused GET /v1/modules/a/b/c/versions 401 who=anonymous why="no bearer token"');
  // A bad value: a usage error in the flag, a config error naming file, line and key in the config.
  expect((await runCli(['serve', '--access', 'secret'], privateDir)).stderr).toMatch(/Invalid --access "secret": expected public or private/);
  writeFiles(privateDir, { 'mirror.config.yaml': 'access: secret\nsources:\n  - folder: mods\n' });
  const bad = await runCli(['serve'], privateDir);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toMatch(/mirror\.config\.yaml:1: access: expected public or private, got "secret"/);
  // Even with --mirror: that config may make the mirror private, so serve says why it will not start without it.
  const withDir = await runCli(['serve', '--mirror', 'dist', '--port', '0'], privateDir);
  expect(withDir.code).toBe(1);
  expect(withDir.stderr).toMatch(/serve reads the config \(even with --mirror\) for its access mode.*pass --config FILE naming another/);
});

it('`hosting nginx` says that static files are public by nature', async () => {
  const printed = await runCli(['hosting', 'nginx', '--mirror', 'dist'], dir);
  expect(printed.code).toBe(0);
  expect(printed.stdout).toContain('# Static files are public by nature');
});

it('says what is wrong when it cannot start: a port in use, swapped TLS files (exit 1, no "bug" hint)', async () => {
  const { createServer } = await import('node:net');
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  const port = (busy.address() as { port: number }).port;
  const taken = await runCli(['serve', '--port', String(port)], dir);
  busy.close();
  expect(taken.code).toBe(1);
  expect(taken.stderr).toMatch(new RegExp(`Cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`));
  expect(taken.stderr).not.toMatch(/bug/);

  const certs = makeCertificates(tempDir());
  const swapped = await runCli(['serve', '--port', '0', '--tls-cert', certs.key, '--tls-key', certs.cert], dir);
  expect(swapped.code).toBe(1);
  expect(swapped.stderr).toMatch(/Cannot serve HTTPS: ".*" holds a private key and ".*" a certificate: the two are swapped\./);
  expect(swapped.stderr).not.toMatch(/bug|PEM routines/);
  const missing = await runCli(['serve', '--port', '0', '--tls-cert', 'nope.pem', '--tls-key', certs.key], dir);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/Cannot read the TLS certificate "nope\.pem"/);
});
