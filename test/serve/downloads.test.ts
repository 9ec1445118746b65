// When a download counts (spec 2.9): a whole archive handed to the client,
// however soon the client hangs up after its last byte. The Go clients under
// test/clients (and Terraform, built on the same net/http) exit the moment
// they have read Content-Length bytes; CI once lost one of their counts that
// way. One such client hits that window rarely, so these tests send what Go's
// Transport sends and hang up at the same point, many at once, over raw
// sockets.

import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';

const dir = tempDir();
let server: RunningServer;

beforeAll(async () => {
  writeFiles(dir, {
    'mirror.config.yaml': 'sources:\n  - folder: mods\n',
    'mods/acme/net/aws/1.0.0/main.tf': 'variable "x" {}\n',
    'mods/acme/big/aws/1.0.0/main.tf': 'variable "x" {}\n',
  });
  // Incompressible, so the archive is larger than loopback's socket buffers and a client that stops reading stalls the server.
  mkdirSync(join(dir, 'mods/acme/big/aws/1.0.0/files'), { recursive: true });
  writeFileSync(join(dir, 'mods/acme/big/aws/1.0.0/files/blob.bin'), randomBytes(16 * 1024 * 1024));
  const built = await runCli(['build'], dir);
  expect(built.stderr).toBe('');
  expect(built.code).toBe(0);
  server = await serveMirror(dir);
}, 60_000);

/** GETs `path` and hangs up once `enough` says so, given the body bytes read and the Content-Length. */
function getAndHangUp(path: string, enough: (read: number, length: number) => boolean): Promise<void> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUser-Agent: Go-http-client/1.1\r\nAccept-Encoding: gzip\r\n\r\n`),
    );
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const length = Number(/^content-length: *(\d+)/im.exec(received.subarray(0, headEnd).toString('latin1'))?.[1]);
      if (enough(received.length - headEnd - 4, length)) {
        socket.destroy();
        resolve();
      }
    });
    socket.on('error', reject);
  });
}

const total = async (module: string): Promise<number> => {
  const res = await fetch(new URL(`/v2/modules/${module}/downloads/summary`, server.url));
  return ((await res.json()) as { data: { attributes: { total: number } } }).data.attributes.total;
};

it('counts every archive whose last byte the client read, even when it hangs up at once', async () => {
  const archive = '/v1/modules/acme/net/aws/1.0.0/net-aws-1.0.0.tar.gz';
  for (let round = 0; round < 20; round++) {
    await Promise.all(Array.from({ length: 20 }, () => getAndHangUp(archive, (read, length) => read >= length)));
  }
  // The count is taken on the server's 'close', a moment after the client's hang-up.
  await expect.poll(() => total('acme/net/aws')).toBe(400);
});

it('does not count an archive the client hung up on halfway', async () => {
  const archive = '/v1/modules/acme/big/aws/1.0.0/big-aws-1.0.0.tar.gz';
  await getAndHangUp(archive, (read) => read > 0);
  await getAndHangUp(archive, (read, length) => read >= length);
  await expect.poll(() => total('acme/big/aws')).toBe(1);
  // Settled: the half download is not counted late either.
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(await total('acme/big/aws')).toBe(1);
});
