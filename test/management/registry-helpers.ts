// What the registry-module tests share: requests as go-tfe v1.110 sends them,
// byte for byte, and module tarballs as go-slug makes them (files at the root).

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { c as createTar } from 'tar';
import { TOKENS, type Caller, type Harness } from './helpers.js';
import { mirrorManifest, tempDir, writeFiles } from '../helpers.js';
import { moduleStateFile, moduleStatesIn } from '../../src/mirror/manifest.js';
import { MANIFEST_FILE } from '../../src/protocol/paths.js';

/** The headers go-tfe v1 sets on every API call (NewRequest). */
export const GO_TFE = { accept: 'application/vnd.api+json', 'user-agent': 'go-tfe' };

/** go-tfe's JSON:API bodies (jsonapi.MarshalPayloadWithoutIncluded, then json.Encoder): attributes in key order, a newline at the end. */
export const createBody = (name: string, provider: string) =>
  `{"data":{"type":"registry-modules","attributes":{"name":"${name}","provider":"${provider}","registry-name":"private"}}}\n`;
export const createVersionBody = (version: string, commitSha: string | null = null) =>
  `{"data":{"type":"registry-module-versions","attributes":{"commit-sha":${JSON.stringify(commitSha)},"version":"${version}"}}}\n`;

export function goTfe(h: Harness, caller: Caller, method: string, path: string, body?: string) {
  return h.call(caller, method, path, body, body === undefined ? GO_TFE : { ...GO_TFE, 'content-type': 'application/vnd.api+json' });
}

/** go-tfe's Upload (doForeignPUTRequest): PUT to the link as given, octet-stream, no Authorization unless `token`. */
export async function upload(url: string, bytes: Buffer, token?: string): Promise<{ status: number; text: string }> {
  const res = await request(url, {
    method: 'PUT',
    headers: {
      accept: 'application/json, */*',
      'content-type': 'application/octet-stream',
      'user-agent': 'go-tfe',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: bytes,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

/** A module's files, different for each version so a wrong install cannot pass. */
export function moduleFiles(version: string): Record<string, string> {
  return {
    'main.tf': `variable "name" {\n  type    = string\n  default = "${version}"\n}\noutput "version" {\n  value = "${version}"\n}\n`,
    'README.md': `# Uploaded ${version}\n`,
    'modules/sub/main.tf': 'output "sub" {\n  value = 1\n}\n',
  };
}

/** A tar.gz with the files at its root, as go-slug packs a folder. */
export async function slug(files: Record<string, string>): Promise<Buffer> {
  const dir = tempDir('mm-slug-');
  writeFiles(dir, files);
  return tarOf(dir, readdirSync(dir).sort());
}

export async function tarOf(cwd: string, entries: string[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const stream = createTar({ gzip: true, cwd, portable: true }, entries);
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** The mirror's truth as text, to compare: manifest.json and every module's state file. */
export const manifestText = (h: Harness) => {
  const dist = join(h.dir, 'dist');
  return [MANIFEST_FILE, ...moduleStatesIn(dist).map(moduleStateFile)].map((rel) => `${rel}\n${readFileSync(join(dist, rel), 'utf8')}`).join('\n');
};
/** The mirror's whole manifest (the root with every module's state), as modmirror reads it. */
export const manifestOf = (h: Harness) =>
  mirrorManifest(join(h.dir, 'dist')) as {
    modules: Record<string, { versions: { version: string; sha256: string }[] }>;
    removed?: { module: string; version: string; sha256: string; by: string; at: string }[];
  };

/** The record of the removal of `module`'s `version` (each module's state keeps its own, so the ledger is in module order, not by time). */
export const removalOf = (h: Harness, module: string, version: string) => manifestOf(h).removed?.find((r) => r.module === module && r.version === version);

/** Create (if needed), CreateVersion and Upload, as a pipeline does; returns the upload's answer and the version's link. */
export async function publishThroughApi(h: Harness, caller: Caller, name: string, version: string, bytes?: Buffer) {
  const created = await goTfe(h, caller, 'POST', '/api/v2/organizations/acme/registry-modules', createBody(name, 'aws'));
  if (created.status !== 201 && created.status !== 422) throw new Error(created.text);
  const v = await goTfe(h, caller, 'POST', `/api/v2/registry-modules/acme/${name}/aws/versions`, createVersionBody(version));
  if (v.status !== 201) throw new Error(v.text);
  const put = await upload(v.json.data.links.upload, bytes ?? (await slug(moduleFiles(version))));
  return { put, link: v.json.data.links.upload as string };
}

export const tokenOf = (caller: Caller) => TOKENS[caller];
