// What Terraform itself does with the provider network mirror: `terraform
// init` with a CLI configuration `provider_installation { network_mirror }`
// (and no other method, so nothing can come from elsewhere) installs a
// provider from a `terraform providers mirror` folder and one from a release
// folder, over HTTPS from `modmirror serve` with a test CA; a mirror whose
// VERSION.json lists no matching hash is refused. Runs when terraform is on
// PATH (this machine has 1.11.4; fresh CI machines do not).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { hasTerraform, makeCertificates, runCli, serveMirror, tempDir, terraformInit, type TerraformResult } from '../helpers.js';
import { startPrivateServer, userToken } from '../serve/private-site.js';
import { writeProviderInputs } from './zips.js';

const servers: RunningServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

function init(dir: string, mirror: RunningServer, ca: string, token?: string): Promise<TerraformResult> {
  const credentials = token === undefined ? '' : `credentials "${new URL(mirror.url).host}" {\n  token = "${token}"\n}\n`;
  const files = {
    'cli.tfrc': `${credentials}provider_installation {\n  network_mirror {\n    url = "${mirror.url}providers/"\n  }\n}\n`,
    'infra/main.tf':
      'terraform {\n  required_providers {\n    random  = { source = "hashicorp/random", version = "~> 3.5" }\n    widgets = { source = "acme/widgets", version = "0.4.0" }\n  }\n}\n',
  };
  return terraformInit(dir, files, { SSL_CERT_FILE: ca });
}

describe.skipIf(!hasTerraform)('terraform init from the network mirror (real client)', () => {
  it('installs both providers over HTTPS, and refuses a package matching no listed hash', async () => {
    const dir = tempDir('mm-tf-providers-');
    const certs = makeCertificates(dir);
    await writeProviderInputs(dir);
    expect((await runCli(['build'], dir)).code).toBe(0);
    const tls = { cert: certs.cert, key: certs.key };
    const mirror = await serveMirror(dir, { tls });
    servers.push(mirror);
    const ok = await init(join(dir, 'good'), mirror, certs.ca);
    expect(ok.output).toContain('Installed hashicorp/random v3.6.0');
    expect(ok.output).toContain('Installed acme/widgets v0.4.0');
    expect(ok.code).toBe(0);
    const lock = readFileSync(join(dir, 'good/infra/.terraform.lock.hcl'), 'utf8');
    const h1 = JSON.parse(readFileSync(join(dir, 'dist/providers/registry.terraform.io/hashicorp/random/3.6.0.json'), 'utf8')).archives.linux_amd64.hashes[0];
    expect(lock).toContain(h1);

    // Both hashes wrong: Terraform needs one listed hash to match (PackageMatchesAnyHash).
    const bad = join(dir, 'dist/providers/registry.terraform.io/hashicorp/random/3.6.0.json');
    const doc = JSON.parse(readFileSync(bad, 'utf8'));
    doc.archives.linux_amd64.hashes = ['h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', `zh:${'0'.repeat(64)}`];
    writeFileSync(bad, JSON.stringify(doc));
    // A fresh server: the running one keeps the documents of the mirror generation it loaded.
    const tampered = await serveMirror(dir, { dataDir: join(dir, 'data2'), tls });
    servers.push(tampered);
    const refused = await init(join(dir, 'bad'), tampered, certs.ca);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/doesn't\s+match\s+the\s+any\s+of\s+the\s+expected\s+checksums/);
  }, 180_000);

  it('sends the mirror host’s credentials to a private registry’s network mirror and fetches the zip by its signed URL; refused without them', async () => {
    const dir = tempDir('mm-tf-private-providers-');
    const certs = makeCertificates(dir);
    await writeProviderInputs(dir);
    expect((await runCli(['build'], dir)).code).toBe(0);
    const token = await userToken(dir);
    const mirror = await startPrivateServer(dir, [], { port: 0, tls: { cert: certs.cert, key: certs.key } });
    servers.push(mirror);
    const ok = await init(join(dir, 'member'), mirror, certs.ca, token);
    expect(ok.output).toContain('Installed hashicorp/random v3.6.0');
    expect(ok.code).toBe(0);
    const refused = await init(join(dir, 'anonymous'), mirror, certs.ca);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/rejected the given authentication\s+credentials/);
  }, 180_000);
});
