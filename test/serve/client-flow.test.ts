// The registry protocol over serve's HTTPS, with a throwaway CA made by this
// test: discovery, versions, the download answer, the archive, unpacked, and
// the unpacked files are the module's files. The real installer, Terraform's
// own libraries, runs against serve in test/clients/.

import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extract } from 'tar';
import { Agent } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { makeCertificates, runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';
import { clientRequest } from '../http-client.js';

const dir = tempDir();
let server: RunningServer;
let agent: Agent;

const MODULE = {
  'main.tf': 'resource "null_resource" "this" {}\n',
  'variables.tf': 'variable "name" {\n  type = string\n}\n',
  'README.md': '# Hello\n\nA module.\n',
  'modules/child/main.tf': 'output "x" { value = 1 }\n',
};

beforeAll(async () => {
  const certs = makeCertificates(dir);
  const files: Record<string, string> = { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' };
  for (const [path, content] of Object.entries(MODULE)) files[`mods/acme/hello/null/1.2.3/${path}`] = content;
  writeFiles(dir, files);
  expect((await runCli(['build', '--json'], dir)).code).toBe(0);
  server = await serveMirror(dir, { tls: { cert: certs.cert, key: certs.key } });
  agent = new Agent({ connect: { ca: readFileSync(certs.ca) } });
});
afterAll(async () => {
  await server?.close();
  await agent?.close();
});

it('walks discovery, versions, download and the archive over HTTPS as an HTTP client that asks for gzip', async () => {
  // The real installer (Terraform's go-getter stack) runs in test/clients/; this checks serve's TLS and the protocol's documents.
  expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/$/);
  const get = (url: URL) => clientRequest(url, { dispatcher: agent });
  const discoveryUrl = new URL('/.well-known/terraform.json', server.url);
  const modulesBase = new URL((await get(discoveryUrl)).json()['modules.v1'], discoveryUrl);

  const versions = (await get(new URL('acme/hello/null/versions', modulesBase))).json() as { modules: { versions: { version: string }[] }[] };
  const version = versions.modules[0]!.versions[0]!.version;
  expect(version).toBe('1.2.3');

  const downloadUrl = new URL(`acme/hello/null/${version}/download`, modulesBase);
  const download = await get(downloadUrl);
  expect(download.status).toBe(200);
  const location = String(download.headers['x-terraform-get']);
  expect(download.json()).toEqual({ location });
  // go-getter decides by the extension of the resolved URL's path.
  const archiveUrl = new URL(location, downloadUrl);
  expect(archiveUrl.pathname).toMatch(/\.tar\.gz$/);

  const archive = await get(archiveUrl);
  expect(archive.status).toBe(200);
  expect(archive.wireEncoding).toBeUndefined();
  const unpacked = join(dir, 'unpacked');
  mkdirSync(unpacked);
  await new Promise<void>((resolve, reject) => {
    const sink = extract({ cwd: unpacked });
    sink.on('finish', resolve).on('error', reject);
    sink.end(archive.body);
  });
  const listFiles = (d: string, prefix = ''): string[] =>
    readdirSync(join(d, prefix), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(d, join(prefix, e.name)) : [join(prefix, e.name)]));
  expect(listFiles(unpacked).sort()).toEqual(Object.keys(MODULE).sort());
  for (const [path, content] of Object.entries(MODULE)) expect(readFileSync(join(unpacked, path), 'utf8')).toBe(content);
});
