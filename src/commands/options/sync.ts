import { command, type Flags, type FlagValues } from '../args.js';

export const SYNC_OPTIONS = {
  from: { type: 'string', value: 'URL', help: 'the upstream registry (its /.well-known/terraform.json names modules.v1)' },
  module: { type: 'string', multiple: true, value: 'ADDR', help: 'copy every version matching the constraint: acme/vpc/aws@"~> 2.0" (repeatable)' },
  provider: {
    type: 'string',
    multiple: true,
    value: 'ADDR',
    help: 'copy every provider version matching the constraint, for each platform: registry.terraform.io/hashicorp/aws@"~> 5.0"; NS/TYPE is a provider of the --from host (repeatable)',
  },
  for: {
    type: 'string',
    multiple: true,
    value: 'DIR',
    help: "copy what terraform init of a configuration needs: the registry modules its module blocks call, and the providers it requires (the versions of its .terraform.lock.hcl when it has one) (repeatable); without --from, from the config's upstreams",
  },
  platform: {
    type: 'string',
    multiple: true,
    value: 'OS_ARCH',
    help: "a platform to copy provider packages for (repeatable; default: the config's platforms, else linux_amd64)",
  },
  'providers-into': {
    type: 'string',
    value: 'DIR',
    help: "the provider folder to fill, HOST/NS/TYPE/ as terraform providers mirror writes it (default: the config's first providers folder)",
  },
  into: { type: 'string', value: 'DIR', help: "the folder to fill, <namespace>/<name>/<provider>/<version>/ (default: the config's first folder source)" },
  config: { type: 'string', value: 'FILE', help: 'config that names the folder (default: ./mirror.config.yaml)' },
  'token-env': {
    type: 'string',
    value: 'VAR',
    help: "variable holding the upstream's bearer token (default: MODMIRROR_SYNC_TOKEN, else TF_TOKEN_<host>)",
  },
  'no-dependencies': { type: 'boolean', help: 'copy only what --module/--for name, not the registry modules those versions call' },
  'dependency-versions': {
    type: 'string',
    value: 'newest|every',
    help: 'per call, the newest match (what terraform init picks; default) or every match',
  },
  'stands-in-for': {
    type: 'string',
    multiple: true,
    value: 'HOST',
    help: 'a public registry the upstream answers for (repeatable; default registry.terraform.io and registry.opentofu.org); a call without a host means registry.terraform.io, one naming the upstream\'s own host is followed too, others are reported as "other host"',
  },
  json: {
    type: 'boolean',
    help: 'print one JSON summary (fetched, present, failures, notMirrored, cycles, providers, providerVersions, providerUnavailable), no progress',
  },
  verbose: {
    type: 'boolean',
    help: "list every call not mirrored, each with its caller (default: the calls to a caller's own folders, ./modules/..., counted on one line; the others once per source, constraint and reason)",
  },
} as const satisfies Flags;

export type SyncFlags = FlagValues<typeof SYNC_OPTIONS>;

export const sync = command({
  summary: 'Copy module versions (with the modules they call) and provider packages from an upstream registry into folders the build reads',
  usage: `modmirror sync --from URL (--module NS/NAME/PROVIDER[@CONSTRAINT] | --provider [HOST/]NS/TYPE[@CONSTRAINT] | --for DIR)...
               [--into DIR] [--providers-into DIR] [--platform OS_ARCH]... [--token-env VAR]
               [--no-dependencies] [--dependency-versions newest|every] [--stands-in-for HOST]... [--json] [--verbose]`,
  options: SYNC_OPTIONS,
  notes: `git::, local and URL sources, cycles and unsatisfiable calls are reported, never fatal to the rest; so is a
platform the upstream has no provider package for. A provider package is kept only when its SHA256SUMS is
signed by a key the upstream lists and its sha256 matches. Exit 1 when something wanted could not be found,
fetched or verified.`,
  run: async (values) => (await import('../sync.js')).runSync(values),
});
