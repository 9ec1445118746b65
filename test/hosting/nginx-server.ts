// A real nginx from Debian's packages for the static-host tests, started as
// the user running the tests with every path in a temp folder, serving the
// server blocks `modmirror hosting nginx` prints.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { request } from 'undici';
import { freePort, runCli } from '../helpers.js';

const CANDIDATES = ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx'];

/** nginx's path; installs Debian's package when it is missing (.ci/run installs it too), and fails if it cannot. */
export function findNginx(): string {
  const find = () => CANDIDATES.find((p) => existsSync(p));
  if (!find()) {
    try {
      execFileSync('sh', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx'], { stdio: 'pipe', timeout: 300_000 });
    } catch (error) {
      throw new Error(`nginx is missing and apt-get could not install it: ${(error as Error).message}`, { cause: error });
    }
  }
  const found = find();
  if (!found) throw new Error('nginx is missing after apt-get install nginx');
  return found;
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}:\n${log()}`);
    try {
      await request(`http://127.0.0.1:${port}/`).then((r) => r.body.dump());
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port}:\n${log()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Starts nginx in `prefix` with the given server blocks, once every port answers. */
export async function startNginx(prefix: string, blocks: string[], ports: number[]): Promise<{ stop: () => void }> {
  const nginx = findNginx();
  mkdirSync(join(prefix, 'logs'), { recursive: true });
  writeFileSync(join(prefix, 'sites.conf'), blocks.join('\n'));
  // No master process to drop privileges, every path in the temp folder.
  writeFileSync(
    join(prefix, 'nginx.conf'),
    [
      'master_process off;',
      `pid ${prefix}/nginx.pid;`,
      `error_log ${prefix}/logs/error.log;`,
      'events {}',
      'http {',
      `  access_log ${prefix}/logs/access.log;`,
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${prefix}/${t};`),
      `  include ${prefix}/sites.conf;`,
      '}',
      '',
    ].join('\n'),
  );
  let output = '';
  const child = spawn(nginx, ['-p', prefix, '-e', `${prefix}/logs/error.log`, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const log = () => `${output}${existsSync(join(prefix, 'logs/error.log')) ? readFileSync(join(prefix, 'logs/error.log'), 'utf8') : ''}`;
  for (const port of ports) await waitForPort(port, child, log);
  return { stop: () => void child.kill('SIGTERM') };
}

/**
 * nginx serving `mirrorDir` with exactly the block `modmirror hosting nginx`
 * prints, on a plain port and, with the given certificate, the same block
 * over TLS on another (Terraform requires https for discovery and network
 * mirrors), on the given ports or free ones.
 */
export async function startPrintedNginx(
  prefix: string,
  mirrorDir: string,
  certs: { cert: string; key: string },
  ports?: { plainPort: number; tlsPort: number },
): Promise<{ stop: () => void; plainPort: number; tlsPort: number }> {
  // Given ports serve a mirror built with a baseUrl naming one of them.
  const { plainPort, tlsPort } = ports ?? { plainPort: await freePort(), tlsPort: await freePort() };
  const printed = await runCli(['hosting', 'nginx', '--mirror', mirrorDir, '--listen', `127.0.0.1:${plainPort}`], dirname(prefix));
  if (printed.code !== 0) throw new Error(`hosting nginx failed: ${printed.stderr}`);
  const tlsBlock = printed.stdout.replace(
    `listen 127.0.0.1:${plainPort};`,
    `listen 127.0.0.1:${tlsPort} ssl;\n    ssl_certificate ${certs.cert};\n    ssl_certificate_key ${certs.key};`,
  );
  const nginx = await startNginx(prefix, [printed.stdout, tlsBlock], [plainPort]);
  return { ...nginx, plainPort, tlsPort };
}
