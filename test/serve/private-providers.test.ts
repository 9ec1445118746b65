// `serve --access private` with a provider network mirror beside the
// modules. Terraform's network mirror source sends the mirror host's
// credentials (a `credentials` block), like the module registry calls;
// mirrored providers belong to no organization, so any caller with a token
// the data knows reads them and nobody without one does.

import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { runCli, tempDir } from '../helpers.js';
import { writeProviderInputs } from '../providers/zips.js';
import { startPrivateServer, userToken } from './private-site.js';

let server: RunningServer;
let token: string;
let audit: string[];

beforeAll(async () => {
  const dir = tempDir('mm-private-providers-');
  await writeProviderInputs(dir);
  const built = await runCli(['build', '--json'], dir);
  if (built.code !== 0) throw new Error(built.stderr);
  token = await userToken(dir);
  audit = [];
  server = await startPrivateServer(dir, audit);
}, 120_000);

const PATHS = [
  'providers/registry.terraform.io/hashicorp/random/index.json',
  'providers/registry.terraform.io/hashicorp/random/3.6.0.json',
  'providers/registry.terraform.io/hashicorp/random/terraform-provider-random_3.6.0_linux_amd64.zip',
  'providers-index.json',
];

async function get(path: string, bearer?: string) {
  const res = await request(new URL(path, server.url), { headers: { 'accept-encoding': 'gzip', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) } });
  const body = await res.body.arrayBuffer();
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(body) };
}

describe('a private registry’s provider network mirror', () => {
  it('answers a caller with a known token, never from a shared cache, the zip as stored', async () => {
    for (const path of PATHS) {
      const res = await get(path, token);
      expect(res.status, path).toBe(200);
      expect(res.headers['cache-control'], path).toMatch(/^private/);
      if (path.endsWith('.zip')) {
        expect(res.headers['content-encoding']).toBeUndefined();
        expect(res.body.subarray(0, 2).toString('latin1')).toBe('PK');
      }
    }
  });

  it('names each zip with a signed, expiring URL, which Terraform fetches with no token', async () => {
    const doc = JSON.parse((await get('providers/registry.terraform.io/hashicorp/random/3.6.0.json', token)).body.toString('utf8'));
    const url: string = doc.archives.linux_amd64.url;
    expect(url).toMatch(/^terraform-provider-random_3\.6\.0_linux_amd64\.zip\?expires=\d+&token=at-\w+&signature=[\w-]+$/);
    const zip = await get(`providers/registry.terraform.io/hashicorp/random/${url}`);
    expect(zip.status).toBe(200);
    expect(zip.body.subarray(0, 2).toString('latin1')).toBe('PK');
    // The signature names one zip: the same query on another one, or an altered one, is refused.
    const query = url.slice(url.indexOf('?'));
    expect((await get(`providers/registry.terraform.io/hashicorp/random/terraform-provider-random_3.6.0_darwin_arm64.zip${query}`)).status).toBe(403);
    const altered = await get(
      `providers/registry.terraform.io/hashicorp/random/${url.replace(/signature=(.)/, (_, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`)}`,
    );
    expect(altered.status).toBe(403);
    expect(JSON.parse(altered.body.toString('utf8')).errors[0]).toMatch(/not one the registry signed/);
  });

  it('refuses a request without a token or with an unknown one (401, audited)', async () => {
    for (const path of PATHS) {
      expect((await get(path)).status, path).toBe(401);
      expect((await get(path, 'mm.unknown')).status, path).toBe(401);
    }
    expect(audit.some((line) => line.includes('/providers/registry.terraform.io/hashicorp/random/index.json') && line.includes('who=anonymous'))).toBe(true);
    expect(audit.join('\n')).not.toContain(token);
  });
});
