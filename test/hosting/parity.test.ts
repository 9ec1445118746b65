// The same mirror from `modmirror serve` and from nginx with the block
// `modmirror hosting nginx` prints, read by the clients people use: Node's
// fetch (asks for gzip, deflate and br, and undoes them) and
// `curl --compressed`. Every kind of file the mirror holds must reach them
// byte for byte as it is on disk, and both hosts must agree on what a
// client can see (status, content type, download headers, caching).

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { freePort, runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';
import { startNginx } from './nginx-server.js';
import { writeReleaseFolder } from '../providers/zips.js';

const dir = tempDir();
const dist = join(dir, 'dist');
let serve: RunningServer;
let nginx: { stop: () => void } | undefined;
let hosts: Record<'serve' | 'nginx', string>;

const MODULE = 'acme/hello/null';
const PROVIDER = 'providers/registry.terraform.io/acme/widgets';
const PROVIDER_ZIP = 'terraform-provider-widgets_0.4.0_linux_amd64.zip';
/** Path on the host → file in dist/ that holds its body. */
const FILES: Record<string, string> = {
  '/.well-known/terraform.json': '.well-known/terraform.json',
  [`/v1/modules/${MODULE}/versions`]: `v1/modules/${MODULE}/versions`,
  [`/v1/modules/${MODULE}`]: `v1/modules/${MODULE}/index.json`,
  [`/v1/modules/${MODULE}/1.2.3`]: `v1/modules/${MODULE}/1.2.3/index.json`,
  [`/v1/modules/${MODULE}/1.2.3/download`]: `v1/modules/${MODULE}/1.2.3/download`,
  [`/v1/modules/${MODULE}/1.2.3/hello-null-1.2.3.tar.gz`]: `v1/modules/${MODULE}/1.2.3/hello-null-1.2.3.tar.gz`,
  // The version's provenance, beside its archive.
  [`/v1/modules/${MODULE}/1.2.3/hello-null-1.2.3.tar.gz.intoto.jsonl`]: `v1/modules/${MODULE}/1.2.3/hello-null-1.2.3.tar.gz.intoto.jsonl`,
  '/': 'index.html',
  '/browse/app.js': 'browse/app.js',
  '/browse/module.js': 'browse/module.js',
  '/browse/module-page.js': 'browse/module-page.js',
  '/browse/style.css': 'browse/style.css',
  '/browse/index.json': 'browse/index.json',
  // The provider network mirror (Terraform's http_mirror_source.go requires application/json for both JSON files).
  [`/${PROVIDER}/index.json`]: `${PROVIDER}/index.json`,
  [`/${PROVIDER}/0.4.0.json`]: `${PROVIDER}/0.4.0.json`,
  [`/${PROVIDER}/${PROVIDER_ZIP}`]: `${PROVIDER}/${PROVIDER_ZIP}`,
};

beforeAll(async () => {
  const files: Record<string, string> = { 'mirror.config.yaml': 'sources:\n  - folder: mods\nproviders:\n  - folder: releases\n    namespace: acme\n' };
  await writeReleaseFolder(join(dir, 'releases'), 'widgets', '0.4.0', ['linux_amd64']);
  // Large enough that both hosts compress the JSON documents (serve from 1 KB, nginx from 20 bytes).
  const variables = Array.from(
    { length: 60 },
    (_, i) => `variable "input_${i}" {\n  description = "Input number ${i} of the module"\n  default     = ${i}\n}\n`,
  ).join('');
  writeFiles(dir, {
    ...files,
    'mods/acme/hello/null/1.2.3/main.tf': variables,
    'mods/acme/hello/null/1.2.3/README.md': `# Hello\n\n${'A module. '.repeat(200)}\n`,
  });
  expect((await runCli(['build', '--json'], dir)).code).toBe(0);
  serve = await serveMirror(dir);
  const port = await freePort();
  const block = await runCli(['hosting', 'nginx', '--mirror', 'dist', '--listen', `127.0.0.1:${port}`], dir);
  expect(block.code).toBe(0);
  nginx = await startNginx(join(dir, 'nginx'), [block.stdout], [port]);
  hosts = { serve: serve.url.replace(/\/$/, ''), nginx: `http://127.0.0.1:${port}` };
});

afterAll(async () => {
  nginx?.stop();
  await serve?.close();
});

interface Seen {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

async function viaFetch(url: string): Promise<Seen> {
  const res = await fetch(url, { redirect: 'manual' });
  return { status: res.status, headers: Object.fromEntries(res.headers), body: Buffer.from(await res.arrayBuffer()) };
}

/** curl as a person runs it: `curl --compressed`, headers dumped to a file. Not sync: serve runs in this process. */
async function viaCurl(url: string): Promise<Seen> {
  const headersFile = join(dir, 'curl-headers');
  const { stdout: body } = await promisify(execFile)('curl', ['-s', '--compressed', '-D', headersFile, url], { encoding: 'buffer' });
  const lines = readFileSync(headersFile, 'latin1').trim().split(/\r?\n/);
  const status = Number(lines[0]!.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const at = line.indexOf(':');
    headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
  }
  return { status, headers, body };
}

/** What a client acts on; the rest (ETag form, Date, Server, Vary) differs by host and is listed in the README. */
function visible(seen: Seen) {
  return {
    status: seen.status,
    type: seen.headers['content-type']?.replace(/;\s*charset=utf-8$/i, ''),
    cacheControl: seen.headers['cache-control'],
    terraformGet: seen.headers['x-terraform-get'],
    serviceGet: seen.headers['x-service-get'],
  };
}

describe('every kind of file, from serve and from nginx', () => {
  for (const [path, file] of Object.entries(FILES)) {
    it(`${path} reaches fetch and curl --compressed as it is on disk`, async () => {
      const onDisk = readFileSync(join(dist, file));
      const answers: Record<string, ReturnType<typeof visible>> = {};
      for (const [host, base] of Object.entries(hosts)) {
        for (const [client, seen] of [
          ['fetch', await viaFetch(base + path)],
          ['curl', await viaCurl(base + path)],
        ] as const) {
          expect(seen.status, `${host} ${client}`).toBe(200);
          expect(seen.body.equals(onDisk), `${host} ${client}: body differs from ${file}`).toBe(true);
          answers[`${host} ${client}`] = visible(seen);
        }
      }
      const [first, ...rest] = Object.values(answers);
      for (const [who, answer] of Object.entries(answers).slice(1)) expect(answer, who).toEqual(first);
      expect(rest.length).toBe(3);
    });
  }

  it('never labels an archive with a Content-Encoding, whatever the client asks for', async () => {
    const archives = { [`/v1/modules/${MODULE}/1.2.3/hello-null-1.2.3.tar.gz`]: 'application/gzip', [`/${PROVIDER}/${PROVIDER_ZIP}`]: 'application/zip' };
    for (const [path, type] of Object.entries(archives)) {
      for (const base of Object.values(hosts)) {
        const res = await fetch(base + path, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
        expect(res.headers.get('content-encoding'), base + path).toBeNull();
        expect(res.headers.get('content-type'), base + path).toBe(type);
        expect(res.headers.get('cache-control'), base + path).toBe('public, max-age=31536000, immutable');
        await res.arrayBuffer();
      }
    }
  });

  it('answers every network mirror JSON file as application/json, and a provider it lacks with a 404', async () => {
    for (const base of Object.values(hosts)) {
      for (const file of ['index.json', '0.4.0.json']) {
        const res = await fetch(`${base}/${PROVIDER}/${file}`, { headers: { 'accept-encoding': 'gzip' } });
        expect(res.headers.get('content-type'), base + file).toBe('application/json');
        await res.arrayBuffer();
      }
      const missing = await fetch(`${base}/providers/registry.terraform.io/hashicorp/aws/index.json`);
      expect(missing.status, base).toBe(404);
      await missing.arrayBuffer();
    }
  });

  it('compresses JSON documents for clients that ask, on both hosts', async () => {
    for (const base of Object.values(hosts)) {
      const seen = await viaCurl(`${base}/v1/modules/${MODULE}/1.2.3`);
      expect(seen.headers['content-encoding'], base).toBe('gzip');
    }
  });

  it("serves the browse page's README renderer (markdown-it's browser build) byte for byte to fetch and curl --compressed, with the same headers", async () => {
    const file = 'browse/markdown-it.min.js';
    const onDisk = readFileSync(join(dist, file));
    const answers: Record<string, ReturnType<typeof visible>> = {};
    for (const [host, base] of Object.entries(hosts)) {
      for (const [client, seen] of [
        ['fetch', await viaFetch(`${base}/${file}`)],
        ['curl', await viaCurl(`${base}/${file}`)],
      ] as const) {
        expect(seen.status, `${host} ${client}`).toBe(200);
        expect(seen.body.equals(onDisk), `${host} ${client}: body differs from ${file}`).toBe(true);
        answers[`${host} ${client}`] = visible(seen);
      }
    }
    const [first] = Object.values(answers);
    for (const [who, answer] of Object.entries(answers)) expect(answer, who).toEqual(first);
  });

  it('answers the first listing page with the same modules', async () => {
    const [fromServe, fromNginx] = await Promise.all([viaFetch(`${hosts.serve}/v1/modules/`), viaFetch(`${hosts.nginx}/v1/modules/`)]);
    expect(fromServe.status).toBe(200);
    // serve shows live download counts (this run fetched archives); the static file says 0.
    const withoutCounts = (seen: Seen) => JSON.stringify(JSON.parse(seen.body.toString()), (key, value) => (key === 'downloads' ? undefined : value));
    expect(withoutCounts(fromServe)).toEqual(withoutCounts(fromNginx));
    expect(visible(fromServe)).toEqual(visible(fromNginx));
  });
});
