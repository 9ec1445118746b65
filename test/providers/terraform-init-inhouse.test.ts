// What Terraform itself does with an in-house provider: `terraform init` of
// a configuration whose required_providers source is the mirror's own host
// (localhost:PORT/acme/widgets) finds providers.v1 by service discovery,
// reads the versions and download documents modmirror wrote as static files,
// fetches the zip, SHA256SUMS and its signature by their relative URLs, and
// installs the provider, reporting the key that signed it. Over HTTPS from
// `modmirror serve` with a test CA (SSL_CERT_FILE). A mirror whose signature
// was made by another key is refused. Runs when terraform is on PATH (this
// machine has 1.11.4; fresh CI machines do not).

import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/serve/index.js';

import {
  type CliResult,
  freePort,
  hasTerraform,
  makeCertificates,
  mirrorManifest,
  runCli,
  serveMirror,
  tempDir,
  terraformInit,
  type TerraformResult,
  writeFiles,
} from '../helpers.js';
import { testKey, signRelease, type TestKey } from './keys.js';
import { startPrivateServer, userToken } from '../serve/private-site.js';
import { writeReleaseFolder } from './zips.js';

const servers: RunningServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

function init(dir: string, host: string, ca: string, token?: string): Promise<TerraformResult> {
  const files = {
    // No provider_installation block: Terraform's default, direct installation from the source's own registry.
    'cli.tfrc': token === undefined ? '' : `credentials "${host}" {\n  token = "${token}"\n}\n`,
    'infra/main.tf': `terraform {\n  required_providers {\n    widgets = { source = "${host}/acme/widgets", version = "~> 1.0" }\n  }\n}\n`,
  };
  return terraformInit(dir, files, { SSL_CERT_FILE: ca });
}

/**
 * acme's widgets at each of `versions` (linux_amd64) in releases/, signed by `key` (with `sign`'s date, when given), published
 * over providers.v1 at localhost on a free port, checked against `key`; then `modmirror build`.
 */
async function buildInHouse(
  dir: string,
  key: TestKey,
  versions: string[],
  sign: { date?: Date } = {},
): Promise<{ port: number; host: string; built: CliResult }> {
  const port = await freePort();
  const host = `localhost:${port}`;
  writeFiles(dir, {
    'mirror.config.yaml': `providers:\n  - folder: releases\n    namespace: acme\n    registry: true\n    hostname: ${host}\n    keys: [${key.publicFile}]\n`,
  });
  for (const version of versions) await writeReleaseFolder(join(dir, 'releases'), 'widgets', version, ['linux_amd64']);
  for (const version of versions) await signRelease(join(dir, 'releases'), 'widgets', version, key, sign);
  return { port, host, built: await runCli(['build'], dir) };
}

describe.skipIf(!hasTerraform)('terraform init of an in-house provider (real client)', () => {
  it('installs it from providers.v1 over HTTPS with its signature checked and its key ID reported; refuses a signature by another key', async () => {
    const dir = tempDir('mm-tf-inhouse-');
    const certs = makeCertificates(dir);
    const keys = tempDir('mm-tf-keys-');
    const acme = await testKey(keys, 'Acme Release');
    const stranger = await testKey(keys, 'Stranger');
    const { port, host, built } = await buildInHouse(dir, acme, ['1.0.0', '1.1.0']);
    expect(built.stderr).toBe('');
    expect(built.code).toBe(0);
    const tls = { cert: certs.cert, key: certs.key };
    const mirror = await serveMirror(dir, { port, tls });
    servers.push(mirror);

    const ok = await init(join(dir, 'good'), host, certs.ca);
    expect(ok.output).toContain(`Installed ${host}/acme/widgets v1.1.0 (self-signed, key ID ${acme.keyId})`);
    expect(ok.code).toBe(0);
    const lock = readFileSync(join(dir, 'good/infra/.terraform.lock.hcl'), 'utf8');
    const manifest = mirrorManifest(join(dir, 'dist'));
    const [h1, zh] = manifest.providers[`${host}/acme/widgets`].versions[0].archives[0].hashes;
    // From a registry (not a mirror) Terraform records the zh: of every platform SHA256SUMS lists, and the h1: it computed.
    expect(lock).toContain(h1);
    expect(lock).toContain(zh);

    // The 1.1.0 signature replaced by one another key made: Terraform refuses the package.
    await servers.pop()!.close();
    const sig = join(dir, 'dist/providers', host, 'acme/widgets/terraform-provider-widgets_1.1.0_SHA256SUMS.sig');
    await signRelease(join(dir, 'releases'), 'widgets', '1.1.0', stranger);
    copyFileSync(join(dir, 'releases/terraform-provider-widgets_1.1.0_SHA256SUMS.sig'), `${sig}.new`);
    execFileSync('mv', [`${sig}.new`, sig]);
    const tampered = await serveMirror(dir, { port, dataDir: join(dir, 'data2'), tls });
    servers.push(tampered);
    const refused = await init(join(dir, 'bad'), host, certs.ca);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/authentication\s+signature\s+from\s+unknown\s+issuer/);
    // verify says the same of the mirror.
    const verify = await runCli(['verify', '--mirror', 'dist'], dir);
    expect(verify.code).toBe(1);
    expect(verify.stderr + verify.stdout).toContain('terraform-provider-widgets_1.1.0_SHA256SUMS.sig');
  }, 180_000);

  it('installs a release signed while its key was valid after that key has expired (rotation), as verify says', async () => {
    const dir = tempDir('mm-tf-inhouse-expired-');
    const certs = makeCertificates(dir);
    const day = 86_400_000;
    const old = await testKey(dir, 'Old Release');
    const { port, host, built } = await buildInHouse(dir, old, ['1.0.0'], { date: new Date(old.created.getTime() + 2 * day) });
    expect(built.code).toBe(0);
    const mirror = await startServer({
      dir: join(dir, 'dist'),
      host: '127.0.0.1',
      port,
      dataDir: join(dir, 'data'),
      tls: { cert: certs.cert, key: certs.key },
      log: () => {},
    });
    servers.push(mirror);
    const ok = await init(join(dir, 'good'), host, certs.ca);
    expect(ok.output).toContain(`Installed ${host}/acme/widgets v1.0.0 (self-signed, key ID ${old.keyId})`);
    expect(ok.code).toBe(0);
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).stderr).toContain(`signing key ${old.keyId} expired on`);
  }, 180_000);

  it("private mode: sends the host's credentials for the documents, and fetches the zip, SHA256SUMS and signature by signed URLs; refused without credentials", async () => {
    const dir = tempDir('mm-tf-inhouse-private-');
    const certs = makeCertificates(dir);
    const acme = await testKey(dir, 'Acme Release');
    const { port, host, built } = await buildInHouse(dir, acme, ['1.0.0']);
    expect(built.code).toBe(0);
    const token = await userToken(dir);
    const mirror = await startPrivateServer(dir, [], { port, tls: { cert: certs.cert, key: certs.key }, log: () => {} });
    servers.push(mirror);
    const ok = await init(join(dir, 'member'), host, certs.ca, token);
    expect(ok.output).toContain(`Installed ${host}/acme/widgets v1.0.0 (self-signed, key ID ${acme.keyId})`);
    expect(ok.code).toBe(0);
    const refused = await init(join(dir, 'anonymous'), host, certs.ca);
    expect(refused.code).toBe(1);
    // Discovery answers anyone (terraform login asks before it has a token); the versions are refused.
    expect(refused.output).toMatch(/requires authentication\s+credentials/);
  }, 180_000);
});
