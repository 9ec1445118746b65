// The mirrors the serve benchmarks load, in the folder layout
// (<ns>/<name>/<provider>/<version>/), built with the CLI afterwards:
// generateMirror gives 10,000 small modules with one version each plus one
// module with many versions, so its `versions` file is large (benchmark
// serve); generateVersionedMirror gives modules × 10 versions (serve-memory).

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRng } from '../corpus/random.mjs';
import { mapLimited } from '../util.mjs';
import { SEED } from './settings.mjs';

export const VOCAB = ['network', 'storage', 'logging', 'database', 'cache', 'queue', 'identity', 'compute', 'dns', 'monitoring', 'backup', 'secrets'];
export const NAMESPACES = ['acme', 'platform', 'infra', 'security', 'data', 'edge', 'core', 'shared', 'team-alpha', 'team-beta', 'ops', 'labs'];
export const PROVIDERS = [
  ['aws', 'hashicorp/aws', '>= 5.0'],
  ['google', 'hashicorp/google', '>= 5.10'],
  ['azurerm', 'hashicorp/azurerm', '~> 3.100'],
];
const RESOURCES = {
  aws: ['s3_bucket', 'sqs_queue', 'iam_role', 'security_group', 'cloudwatch_log_group'],
  google: ['storage_bucket', 'pubsub_topic', 'compute_network', 'dns_managed_zone'],
  azurerm: ['storage_account', 'key_vault', 'virtual_network', 'log_analytics_workspace'],
};
export const SEARCH_WORD = VOCAB[0];

/** Files of one small module: a resource, a few variables and outputs, a README whose first line carries vocabulary words. */
function smallModule(r, name, provider) {
  const [prov, source, constraint] = provider;
  const resource = `${prov}_${r.pick(RESOURCES[prov])}`;
  const words = r.sample(VOCAB, 2);
  const main = `terraform {
  required_version = ">= 1.3"
  required_providers {
    ${prov} = {
      source  = "${source}"
      version = "${constraint}"
    }
  }
}

resource "${resource}" "this" {
  count = var.create ? 1 : 0
  name  = var.name
  tags  = var.tags
}
`;
  const variables = `variable "create" {
  description = "Whether to create the ${words[0]} resources."
  type        = bool
  default     = true
}

variable "name" {
  description = "Name of the ${words[1]} ${resource.replace(/_/g, ' ')}."
  type        = string
}

variable "tags" {
  description = "Tags to add to every resource."
  type        = map(string)
  default     = {}
}

variable "retention_in_days" {
  description = "How long to keep ${words[0]} data."
  type        = number
  default     = ${r.pick([7, 14, 30, 90, 365])}
}
`;
  const outputs = `output "id" {
  description = "ID of the ${resource.replace(/_/g, ' ')}."
  value       = try(${resource}.this[0].id, null)
}

output "name" {
  description = "Name of the ${words[1]} resource."
  value       = var.name
}
`;
  const readme = `# ${name}\n\nTerraform module that manages ${words[0]} and ${words[1]} resources on ${prov}.\n\n## Usage\n\n\`\`\`hcl\nmodule "${name}" {\n  source = "..."\n  name   = "example"\n}\n\`\`\`\n`;
  return { files: { 'main.tf': main, 'variables.tf': variables, 'outputs.tf': outputs, 'README.md': readme }, words };
}

/** One version of the big module: one provider, so each entry of `versions` is about 370 bytes. */
function bigVersion(i) {
  const main = `terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.${i % 40}"
    }
  }
}

variable "name" {
  description = "Name of the network."
  type        = string
}

resource "aws_vpc" "this" {
  cidr_block = "10.${i % 256}.0.0/16"
  tags       = { Name = var.name }
}

output "id" {
  description = "ID of the VPC."
  value       = aws_vpc.this.id
}
`;
  const readme = `# big\n\nTerraform module that manages network and dns resources on aws, with many releases.\n`;
  return { 'main.tf': main, 'README.md': readme };
}

function bigVersionName(i) {
  return `${1 + Math.floor(i / 100)}.${Math.floor(i / 10) % 10}.${i % 10}`;
}

async function writeFiles(dir, files) {
  for (const [rel, text] of Object.entries(files)) {
    const path = join(dir, rel);
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, text);
  }
}

/** Writes the folder layout; returns the module list and how many READMEs carry SEARCH_WORD. */
export async function generateMirror(dir, { modules, bigVersions }) {
  const r = createRng(SEED);
  const list = [];
  for (let i = 0; i < modules; i++) {
    const provider = PROVIDERS[i % PROVIDERS.length];
    const ns = NAMESPACES[Math.floor(i / PROVIDERS.length) % NAMESPACES.length];
    const name = `${r.pick(VOCAB)}-${r.pick(['stack', 'service', 'baseline', 'cluster', 'bucket', 'zone', 'vault'])}-${String(i).padStart(5, '0')}`;
    const { files, words } = smallModule(r, name, provider);
    list.push({ ns, name, provider: provider[0], version: '1.0.0', files, words });
  }
  await mapLimited(list, 16, (m) => writeFiles(join(dir, m.ns, m.name, m.provider, m.version), m.files));
  const big = { ns: 'acme', name: 'big', provider: 'aws', versions: Array.from({ length: bigVersions }, (_, i) => bigVersionName(i)) };
  await mapLimited(big.versions, 16, (v, i) => writeFiles(join(dir, big.ns, big.name, big.provider, v), bigVersion(i)));
  const searchHits = list.filter((m) => m.words.includes(SEARCH_WORD) || m.name.includes(SEARCH_WORD)).length + 1; // + big
  return { list, big, searchHits, totalModules: modules + 1, totalVersions: modules + bigVersions };
}

/** Writes `modules` × `versions` modules of one main.tf each (variables, a resource, outputs; no two versions alike, so the build's cache never hits). */
export async function generateVersionedMirror(dir, { modules, versions }) {
  const r = createRng(SEED + 1);
  const list = [];
  for (let i = 0; i < modules; i++) {
    const provider = PROVIDERS[i % PROVIDERS.length];
    const ns = NAMESPACES[Math.floor(i / PROVIDERS.length) % NAMESPACES.length];
    const name = `${r.pick(VOCAB)}-${r.pick(['stack', 'service', 'baseline', 'cluster', 'bucket', 'zone', 'vault'])}-${String(i).padStart(5, '0')}`;
    const { files } = smallModule(r, name, provider);
    list.push({
      ns,
      name,
      provider: provider[0],
      key: `${ns}/${name}/${provider[0]}`,
      text: `${files['main.tf']}\n${files['variables.tf']}\n${files['outputs.tf']}`,
    });
  }
  const jobs = list.flatMap((m) => Array.from({ length: versions }, (_, v) => [m, `1.${v}.0`]));
  await mapLimited(jobs, 16, ([m, version]) =>
    writeFiles(join(dir, m.ns, m.name, m.provider, version), { 'main.tf': `${m.text}\nlocals {\n  module  = "${m.name}"\n  release = "${version}"\n}\n` }),
  );
  return { list: list.map(({ text, ...m }) => m), versions: jobs.length, latest: `1.${versions - 1}.0` };
}
