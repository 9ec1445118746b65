// What the tests of dependency-update bots (Renovate, Dependabot) share: a
// mirror of the sample module acme/hello/null and an in-house provider
// registry.example.com/acme/widgets, served over HTTPS (Dependabot discovers
// over HTTPS only) by `modmirror serve` and by nginx with the block `modmirror
// hosting nginx` prints. Neither bot can run here, so the tests send what
// their sources send; each host comes twice: built without a baseUrl
// (relative URLs) and with one naming that host (absolute URLs).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from 'undici';
import { expect } from 'vitest';
import { startServer } from '../../src/serve/index.js';
import { startPrintedNginx } from '../hosting/nginx-server.js';
import { freePort, makeCertificates, runCli, tempDir, writeFiles } from '../helpers.js';
import { signRelease, testKey } from '../providers/keys.js';
import { writeReleaseFolder } from '../providers/zips.js';
import { writeModules } from './install.js';

export interface BotHost {
  /** `serve` or `nginx`, and whether the mirror was built with a baseUrl. */
  name: string;
  /** https://127.0.0.1:PORT/ */
  url: string;
  /** The mirror folder it serves. */
  dist: string;
}

export interface BotMirror {
  dir: string;
  /** Trusts the test CA, as a bot given the site's CA bundle does. */
  dispatcher: Agent;
  hosts: BotHost[];
  stop(): Promise<void>;
}

/** The hosts a BotMirror serves, in its `hosts` order: tests are named before the mirror exists. */
export const BOT_HOSTS = [
  'modmirror serve',
  'nginx (hosting nginx)',
  'modmirror serve, built with a baseUrl',
  'nginx (hosting nginx), built with a baseUrl',
] as const;

/** In-house releases: version -> platforms. */
export const PROVIDER_RELEASES: Record<string, string[]> = { '1.0.0': ['darwin_arm64', 'linux_amd64'], '1.1.0': ['linux_amd64'] };

export async function startBotMirror(prefix: string): Promise<BotMirror> {
  const dir = tempDir(prefix);
  const certs = makeCertificates(dir);
  const key = await testKey(dir, 'Acme Release');
  writeFiles(dir, {
    'mirror.config.yaml': `sources:\n  - folder: mods\nproviders:\n  - folder: releases\n    namespace: acme\n    registry: true\n    hostname: registry.example.com\n    keys: [${key.publicFile}]\nplatforms: [linux_amd64, darwin_arm64]\n`,
  });
  writeModules(dir);
  for (const [version, platforms] of Object.entries(PROVIDER_RELEASES)) {
    await writeReleaseFolder(join(dir, 'releases'), 'widgets', version, platforms);
    await signRelease(join(dir, 'releases'), 'widgets', version, key);
  }
  const servePort = await freePort();
  const nginxPorts = { plainPort: await freePort(), tlsPort: await freePort() };
  const builds: [string, string[]][] = [
    ['dist', []],
    ['dist-serve', ['--base-url', `https://127.0.0.1:${servePort}/`]],
    ['dist-nginx', ['--base-url', `https://127.0.0.1:${nginxPorts.tlsPort}/`]],
  ];
  for (const [out, extra] of builds) {
    const built = await runCli(['build', '--mirror', out, ...extra], dir);
    expect(built.stderr, out).toBe('');
    expect(built.code, out).toBe(0);
  }
  const tls = { cert: certs.cert, key: certs.key };
  const common = { host: '127.0.0.1', tls, log: () => {} };
  const serve = await startServer({ ...common, dir: join(dir, 'dist'), port: 0, dataDir: join(dir, 'data') });
  const serveAbsolute = await startServer({
    ...common,
    dir: join(dir, 'dist-serve'),
    port: servePort,
    dataDir: join(dir, 'data-serve'),
    baseUrl: `https://127.0.0.1:${servePort}/`,
  });
  const nginx = await startPrintedNginx(join(dir, 'nginx'), join(dir, 'dist'), certs);
  const nginxAbsolute = await startPrintedNginx(join(dir, 'nginx-abs'), join(dir, 'dist-nginx'), certs, nginxPorts);
  return {
    dir,
    dispatcher: new Agent({ connect: { ca: readFileSync(certs.ca) } }),
    hosts: [
      { name: BOT_HOSTS[0], url: serve.url, dist: join(dir, 'dist') },
      { name: BOT_HOSTS[1], url: `https://127.0.0.1:${nginx.tlsPort}/`, dist: join(dir, 'dist') },
      { name: BOT_HOSTS[2], url: serveAbsolute.url, dist: join(dir, 'dist-serve') },
      { name: BOT_HOSTS[3], url: `https://127.0.0.1:${nginxPorts.tlsPort}/`, dist: join(dir, 'dist-nginx') },
    ],
    async stop() {
      nginx.stop();
      nginxAbsolute.stop();
      await serve.close();
      await serveAbsolute.close();
    },
  };
}

/** The network mirror's hashes of one in-house version (`h1:` and `zh:` of each zip), as `terraform init` records them in a lock file. */
export function lockHashesOf(dist: string, version: string): string[] {
  const doc = JSON.parse(readFileSync(join(dist, `providers/registry.example.com/acme/widgets/${version}.json`), 'utf8')) as {
    archives: Record<string, { hashes: string[] }>;
  };
  return [...new Set(Object.values(doc.archives).flatMap((a) => a.hashes))].sort();
}
