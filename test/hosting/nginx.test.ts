// dist/ alone behind a real nginx from Debian's packages, configured with
// the block `modmirror hosting nginx` prints: the client flow Terraform and
// OpenTofu walk (discovery, versions, detail, download header and JSON body,
// archive fetch and unpack), and what a plain host cannot answer. Two
// servers: relative locations, and absolute ones under a base URL with a path.

import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extract } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, runCli, tempDir, writeFiles } from '../helpers.js';
import { clientRequest } from '../http-client.js';
import { startNginx } from './nginx-server.js';

const dir = tempDir();
const MODULE = {
  'main.tf': 'variable "name" {\n  type = string\n}\nresource "null_resource" "this" {}\n',
  'README.md': '# Hello\n\nA module.\n',
  'modules/child/main.tf': 'output "x" { value = 1 }\n',
  'scripts/run.sh': '#!/bin/sh\necho hi\n',
};

let nginx: { stop: () => void } | undefined;
let relative = '';
let absolute = '';

beforeAll(async () => {
  const files: Record<string, string> = { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' };
  for (const [path, content] of Object.entries(MODULE)) files[`mods/acme/hello/null/1.2.3/${path}`] = content;
  files['mods/acme/hello/null/1.0.0/main.tf'] = 'variable "old" {}\n';
  writeFiles(dir, files);
  const [port1, port2] = [await freePort(), await freePort()];
  relative = `http://127.0.0.1:${port1}`;
  absolute = `http://127.0.0.1:${port2}`;
  expect((await runCli(['build', '--json'], dir)).code).toBe(0);
  expect((await runCli(['build', '--json', '--mirror', 'dist-abs', '--base-url', `${absolute}/registry/`], dir)).code).toBe(0);

  const blocks: string[] = [];
  for (const [out, port] of [
    ['dist', port1],
    ['dist-abs', port2],
  ] as const) {
    const printed = await runCli(['hosting', 'nginx', '--mirror', out, '--listen', `127.0.0.1:${port}`], dir);
    expect(printed.stderr).toBe('');
    expect(printed.code).toBe(0);
    blocks.push(printed.stdout);
  }
  nginx = await startNginx(join(dir, 'nginx'), blocks, [port1, port2]);
});

afterAll(() => {
  nginx?.stop();
});

const get = (url: string | URL) => clientRequest(url);

async function unpack(data: Buffer, into: string): Promise<Record<string, string>> {
  mkdirSync(into, { recursive: true });
  await new Promise<void>((resolve, reject) => {
    const sink = extract({ cwd: into });
    sink.on('finish', resolve).on('error', reject);
    sink.end(data);
  });
  const files: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const e of readdirSync(join(into, rel), { withFileTypes: true })) {
      const path = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(path);
      else files[path] = readFileSync(join(into, path), 'utf8');
    }
  };
  walk('');
  return files;
}

/** The registry protocol's walk for source HOST/acme/hello/null (the real installer runs in test/clients/). */
async function clientFlow(host: string, unpackInto: string): Promise<void> {
  const discoveryUrl = new URL('/.well-known/terraform.json', host);
  const discovery = await get(discoveryUrl);
  expect(discovery.status).toBe(200);
  expect(discovery.headers['content-type']).toBe('application/json');
  const modules = new URL(String(discovery.json()['modules.v1']), discoveryUrl);

  const versions = await get(new URL('acme/hello/null/versions', modules));
  expect(versions.status).toBe(200);
  expect(versions.headers['content-type']).toBe('application/json');
  expect(versions.headers['cache-control']).toBe('public, max-age=60');
  const listed = (versions.json()['modules'] as { versions: { version: string }[] }[])[0]!.versions.map((v) => v.version);
  expect(listed).toEqual(['1.2.3', '1.0.0']);

  // Detail at a folder path without the trailing slash: its index.json, no redirect.
  const detail = await get(new URL('acme/hello/null', modules));
  expect(detail.status).toBe(200);
  expect(detail.headers['content-type']).toBe('application/json');
  expect(detail.json()).toMatchObject({ id: 'acme/hello/null/1.2.3', version: '1.2.3' });
  const versionDetail = await get(new URL('acme/hello/null/1.0.0', modules));
  expect(versionDetail.json()['id']).toBe('acme/hello/null/1.0.0');

  const downloadUrl = new URL('acme/hello/null/1.2.3/download', modules);
  const download = await get(downloadUrl);
  expect(download.status).toBe(200);
  expect(download.headers['content-type']).toBe('application/json');
  const location = String(download.json()['location']);
  expect(download.headers['x-terraform-get']).toBe(location);
  expect(download.headers['x-service-get']).toBe(location);
  expect(download.headers['access-control-expose-headers']).toMatch(/X-Terraform-Get/);

  // go-getter decides by the resolved URL's extension.
  const archiveUrl = new URL(location, downloadUrl);
  expect(archiveUrl.pathname).toMatch(/\.tar\.gz$/);
  const archive = await get(archiveUrl);
  expect(archive.status).toBe(200);
  expect(archive.headers['content-type']).toBe('application/gzip');
  expect(archive.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  expect(await unpack(archive.body, unpackInto)).toEqual(MODULE);
}

describe('a plain nginx serving dist/', () => {
  it('answers the whole client flow with relative locations', async () => {
    await clientFlow(relative, join(dir, 'unpacked-relative'));
    expect((await get(`${relative}/v1/modules/acme/hello/null/1.2.3/download`)).headers['x-terraform-get']).toBe('./hello-null-1.2.3.tar.gz');
  });

  it('answers it with absolute locations under a base URL with a path, discovery at the host root', async () => {
    const discovery = await get(`${absolute}/.well-known/terraform.json`);
    expect(discovery.json()['modules.v1']).toBe(`${absolute}/registry/v1/modules/`);
    await clientFlow(absolute, join(dir, 'unpacked-absolute'));
    expect((await get(`${absolute}/registry/v1/modules/?offset=15`)).status).toBe(501);
    const download = await get(`${absolute}/registry/v1/modules/acme/hello/null/1.2.3/download`);
    expect(download.headers['x-terraform-get']).toBe(`${absolute}/registry/v1/modules/acme/hello/null/1.2.3/hello-null-1.2.3.tar.gz`);
  });

  it('serves listings, JSON errors, and says clearly what needs modmirror serve', async () => {
    const listing = await get(`${relative}/v1/modules/`);
    expect(listing.status).toBe(200);
    expect(listing.headers['access-control-allow-origin']).toBe('*');
    expect((listing.json()['modules'] as unknown[]).length).toBe(1);
    expect((await get(`${relative}/v1/modules/acme`)).json()['modules']).toHaveLength(1);
    expect((await get(`${relative}/v1/modules/?offset=0&limit=15`)).status).toBe(200);

    for (const [path, status, text] of [
      ['/v1/modules/?offset=15&limit=15', 501, 'need modmirror serve'],
      ['/v1/modules/acme?provider=null', 501, 'filters (provider, namespace, verified) need modmirror serve'],
      ['/v1/modules/acme/hello?verified=true', 501, 'need modmirror serve'],
      ['/v1/modules/search?q=hello', 501, 'search needs modmirror serve'],
      ['/v1/modules/acme/nothing/null/versions', 404, 'Not found'],
      ['/v1/modules/acme/hello/null/9.9.9/download', 404, 'Not found'],
    ] as const) {
      const res = await get(`${relative}${path}`);
      expect(res.status, path).toBe(status);
      expect(res.headers['content-type'], path).toBe('application/json');
      expect((res.json()['errors'] as string[])[0], path).toContain(text);
      // A failed download carries no location: Terraform must not follow one.
      expect(res.headers['x-terraform-get'], path).toBeUndefined();
    }
    // The browse page, where the build writes one, is the root.
    if (existsSync(join(dir, 'dist/index.html'))) {
      const page = await get(`${relative}/`);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html');
    }
    const summary = await get(`${relative}/v2/modules/acme/hello/null/downloads/summary`);
    expect(summary.headers['content-type']).toBe('application/json');
    expect(summary.json()).toMatchObject({ data: { type: 'module-downloads-summary' } });
  });
});
