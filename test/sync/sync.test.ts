// sync against a modmirror server on 127.0.0.1 as the upstream: versions
// matching a constraint land in the module folder as the build reads them,
// rebuild into the very same archives, and are never fetched twice; a sync
// killed in the middle of a download leaves nothing the build would read and
// is finished by the next run.

import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { ROOT, runCli, tempDir, writeFiles, mirrorManifest } from '../helpers.js';
import { startUpstream } from './upstream.js';

const upstreamDir = tempDir('mm-upstream-');
const here = tempDir('mm-sync-');
const requests: string[] = [];
let upstream: RunningServer;

const moduleFiles = (n: string) => ({
  'main.tf': `variable "v${n.replace(/\W/g, '_')}" {}\n`,
  'README.md': `# Net ${n}\n`,
  'modules/sub/main.tf': 'output "o" { value = 1 }\n',
});
const VERSIONS = ['1.0.0', '1.1.0', '2.0.0', '2.1.0-rc.1'];

beforeAll(async () => {
  const files: Record<string, string> = { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' };
  for (const v of VERSIONS) for (const [path, text] of Object.entries(moduleFiles(v))) files[`mods/acme/net/aws/${v}/${path}`] = text;
  files['mods/acme/other/aws/0.1.0/main.tf'] = 'variable "x" {}\n';
  upstream = await startUpstream(upstreamDir, files, (line) => requests.push(line));
});
afterAll(async () => {
  await upstream?.close();
});

const archiveRequests = (version: string) => requests.filter((l) => l.startsWith('GET ') && l.includes(`/net-aws-${version}.tar.gz `)).length;
const manifestOf = (dir: string) => mirrorManifest(dir) as { modules: Record<string, { versions: { version: string; sha256: string }[] }> };

describe('sync from a modmirror server', () => {
  it('copies the versions a constraint matches, as folders that build into the same archives', async () => {
    const r = await runCli(['sync', '--from', upstream.url, '--module', 'acme/net/aws@>= 1.0, < 2.0', '--into', 'synced'], here);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Fetched 2 version\(s\) into synced\/ \(0 already there\)/);
    expect(r.stderr).toMatch(/\[1\/2\] acme\/net\/aws 1\.0\.0: fetched 3 file\(s\)/);
    expect(readdirSync(join(here, 'synced/acme/net/aws')).sort()).toEqual(['1.0.0', '1.1.0']);
    for (const [path, text] of Object.entries(moduleFiles('1.1.0'))) expect(readFileSync(join(here, 'synced/acme/net/aws/1.1.0', path), 'utf8')).toBe(text);

    expect((await runCli(['build', '--modules', 'synced', '--mirror', 'inside'], here)).code).toBe(0);
    const theirs = manifestOf(join(upstreamDir, 'dist')).modules['acme/net/aws']!.versions;
    const ours = manifestOf(join(here, 'inside')).modules['acme/net/aws']!.versions;
    expect(ours).toEqual(theirs.filter((v) => v.version.startsWith('1.')).map((v) => expect.objectContaining({ version: v.version, sha256: v.sha256 })));
    // The folder is dated by the upstream's published_at, so the rebuilt detail says the same.
    const detail = (dir: string) => JSON.parse(readFileSync(join(dir, 'v1/modules/acme/net/aws/1.1.0/index.json'), 'utf8')).published_at;
    expect(detail(join(here, 'inside'))).toBe(detail(join(upstreamDir, 'dist')));
  });

  it("takes its upstreams from the config's sync list when no --from is given", async () => {
    const dir = tempDir('mm-sync-config-');
    writeFiles(dir, {
      'mirror.config.yaml': `sources:\n  - folder: drop\nsync:\n  - from: ${upstream.url}\n    modules:\n      - acme/net/aws@~> 1.0\n      - acme/other/aws\n`,
      'drop/.keep': '',
    });
    const r = await runCli(['sync'], dir);
    expect(r.stderr).not.toMatch(/error/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Fetched 3 version\(s\) into drop\/ \(0 already there\) from http:\/\/127\.0\.0\.1:\d+\./);
    expect(readdirSync(join(dir, 'drop/acme/net/aws')).sort()).toEqual(['1.0.0', '1.1.0']);
    writeFiles(dir, { 'bad.yaml': 'sources:\n  - folder: drop\nsync:\n  - from: ftp://x\n    modules: [acme/net]\n' });
    const bad = await runCli(['sync', '--config', 'bad.yaml'], dir);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/bad\.yaml:4: sync\[0\]\.from: expected the upstream registry's http\(s\) URL/);
    expect(bad.stderr).toMatch(/bad\.yaml:5: sync\[0\]\.modules\[0\]: Invalid module "acme\/net"/);
  });

  it('never fetches a version the folder already has', async () => {
    const before = archiveRequests('1.0.0');
    const r = await runCli(['sync', '--from', upstream.url, '--module', 'acme/net/aws', '--module', 'acme/other/aws@~> 0.1', '--into', 'synced'], here);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Fetched 3 version\(s\) into synced\/ \(2 already there\)/);
    expect(archiveRequests('1.0.0')).toBe(before);
    expect(archiveRequests('2.1.0-rc.1')).toBe(1);
    expect(readdirSync(join(here, 'synced/acme/net/aws')).sort()).toEqual(['1.0.0', '1.1.0', '2.0.0', '2.1.0-rc.1']);
    expect(readdirSync(join(here, 'synced/acme/other/aws'))).toEqual(['0.1.0']);
  });

  it("fills the config's folder source when --into is not given, and says when nothing matches", async () => {
    writeFiles(here, { 'cfg/mirror.config.yaml': 'sources:\n  - folder: drop\n', 'cfg/drop/.keep': '' });
    const r = await runCli(['sync', '--from', upstream.url, '--module', 'acme/net/aws@= 2.0.0'], join(here, 'cfg'));
    expect(r.code).toBe(0);
    expect(readdirSync(join(here, 'cfg/drop/acme/net/aws'))).toEqual(['2.0.0']);

    const none = await runCli(['sync', '--from', upstream.url, '--module', 'acme/net/aws@~> 3.0'], join(here, 'cfg'));
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/acme\/net\/aws: no upstream version matches "~> 3\.0" \(upstream has: /);
  });

  it('refuses bad arguments with a usage error', async () => {
    for (const [args, message] of [
      [['sync', '--module', 'a/b/c', '--into', 'x'], /--from URL/],
      [['sync', '--from', 'ftp://x/', '--module', 'a/b/c', '--into', 'x'], /Invalid --from/],
      [['sync', '--from', upstream.url, '--into', 'x'], /at least one module/],
      [['sync', '--from', upstream.url, '--module', 'a/b', '--into', 'x'], /Invalid module "a\/b"/],
      [['sync', '--from', upstream.url, '--module', 'a/b/c@>>1', '--into', 'x'], /Invalid version constraint ">>1"/],
      [['sync', '--from', upstream.url, '--module', 'a/b/c', '--into', 'x', '--token-env', 'MM_UNSET_TOKEN'], /MM_UNSET_TOKEN, which is not set/],
    ] as [string[], RegExp][]) {
      const r = await runCli(args, here);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
  });
});

describe('a sync killed in the middle of a download', () => {
  let stalled: Server;
  let stall = true;
  let onStalled: () => void = () => {};
  const counts = new Map<string, number>();

  beforeAll(async () => {
    // In front of the upstream: passes everything through, but can hold the 1.1.0 archive half sent.
    const relay = async (req: IncomingMessage, res: ServerResponse) => {
      const path = req.url ?? '/';
      counts.set(path, (counts.get(path) ?? 0) + 1);
      const answer = await fetch(new URL(path, upstream.url));
      const body = Buffer.from(await answer.arrayBuffer());
      const headers: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        // fetch has decoded the body: its length is the one to send.
        if (!['content-encoding', 'content-length', 'transfer-encoding', 'connection'].includes(name)) headers[name] = value;
      });
      headers['content-length'] = String(body.length);
      if (stall && path.endsWith('/net-aws-1.1.0.tar.gz')) {
        res.writeHead(200, headers);
        res.write(body.subarray(0, body.length >> 1));
        onStalled();
        return;
      }
      res.writeHead(answer.status, headers);
      res.end(body);
    };
    // A relay that fails (the upstream gone) drops the connection, which the client sees, rather than leave a rejection unhandled.
    stalled = createServer((req, res) => void relay(req, res).catch(() => res.destroy()));
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => {
    stalled.closeAllConnections();
    stalled.close();
  });

  it('leaves no half version for the build, and the next run fetches only what is missing', async () => {
    const from = `http://127.0.0.1:${(stalled.address() as { port: number }).port}/`;
    const reached = new Promise<void>((resolve) => (onStalled = resolve));
    const child = spawn(process.execPath, [join(ROOT, 'bin/modmirror.js'), 'sync', '--from', from, '--module', 'acme/net/aws@~> 1.0', '--into', 'killed'], {
      cwd: here,
      stdio: 'ignore',
    });
    const waited = await Promise.race([reached.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 15_000))]);
    child.kill('SIGKILL');
    expect(waited, 'the sync reached the stalled archive').toBe(true);
    await new Promise((resolve) => child.on('exit', resolve));

    const folder = join(here, 'killed/acme/net/aws');
    expect(readdirSync(folder).filter((n) => !n.startsWith('.'))).toEqual(['1.0.0']);
    const built = await runCli(['build', '--modules', 'killed', '--mirror', 'killed-dist', '--json'], here);
    expect(built.code).toBe(0);
    expect(JSON.parse(built.stdout)).toMatchObject({ versions: 1, warnings: [] });

    stall = false;
    const again = await runCli(['sync', '--from', from, '--module', 'acme/net/aws@~> 1.0', '--into', 'killed'], here);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/Fetched 1 version\(s\) into killed\/ \(1 already there\)/);
    expect(readdirSync(folder).sort()).toEqual(['1.0.0', '1.1.0']);
    const archive = (v: string) => [...counts].filter(([p]) => p.endsWith(`/net-aws-${v}.tar.gz`)).reduce((n, [, c]) => n + c, 0);
    expect(archive('1.0.0')).toBe(1);
    expect(archive('1.1.0')).toBe(2);
    expect(existsSync(join(folder, '1.1.0/main.tf'))).toBe(true);
  });
});
