import { command, type Flags, type FlagValues } from '../args.js';
import { BUCKET_CREDENTIALS, BUCKET_OPTIONS, OLD_OUT, PASSPHRASE_OPTIONS } from './shared.js';

export const PUBLISH_OPTIONS = {
  source: {
    type: 'string',
    value: 'DIR',
    help: "a folder holding the version's files; a folder .../<namespace>/<name>/<provider>/<version> whose last part is a version names its address, anything else needs the address flags",
  },
  git: { type: 'string', value: 'REPO', help: "a repository (path or clone URL); the config's entry for it gives address, path and tag prefix" },
  ref: { type: 'string', value: 'REF', help: 'the tag (or commit) to publish; its name gives the version unless --version is set' },
  namespace: { type: 'string', value: 'NS', help: "the module's namespace, when the source does not say it (for --provider-release, the provider's)" },
  name: { type: 'string', value: 'NAME', help: "the module's name, when the source does not say it" },
  provider: { type: 'string', value: 'P', help: "the module's provider, when the source does not say it" },
  version: { type: 'string', value: 'X.Y.Z', help: 'the version, when the tag or folder name does not say it' },
  mirror: {
    type: 'string',
    value: 'DIR|s3://BUCKET/PREFIX',
    help: `the mirror (default: the config's "out", else ./dist); it must exist
s3://BUCKET/PREFIX: a mirror in a bucket: publish reads its manifest and the documents the version changes, uploads what changed (archive first, manifest last) and writes the manifest only if nobody else changed it meanwhile, else reads again and redoes the change; many pipelines can publish into one bucket at once`,
  },
  ...OLD_OUT,
  ...BUCKET_OPTIONS,
  config: {
    type: 'string',
    value: 'FILE',
    help: 'the config giving module addresses, metadata and git settings (default: ./mirror.config.yaml when there is one)',
  },
  'new-mirror': { type: 'boolean', help: 'start a new mirror at --mirror when there is none (without it, a missing mirror is an error)' },
  'base-url': { type: 'string', value: 'URL', help: "a new mirror's base URL (an existing mirror keeps its own)" },
  force: { type: 'boolean', help: 'replace a published version whose content differs (recorded in the manifest)' },
  'dry-run': { type: 'boolean', help: 'say what would change, change nothing' },
  'no-spare': { type: 'boolean', help: 'no effect, accepted for scripts that pass it: nothing is left writing beside the mirror when publish returns' },
  'sign-key': {
    type: 'string',
    value: 'FILE',
    help: "sign the version's provenance (ARCHIVE.intoto.jsonl) with this armored OpenPGP private key; passphrase from --passphrase-env VAR or --passphrase-file FILE (default: the config's provenance: key, else unsigned)",
  },
  ...PASSPHRASE_OPTIONS,
  json: { type: 'boolean', help: 'print the result as JSON' },
  'provider-release': {
    type: 'string',
    value: 'DIR',
    section: 'In-house providers (served over the provider registry protocol, providers.v1):',
    help: "a release pipeline's output: terraform-provider-TYPE_VERSION_OS_ARCH.zip, _SHA256SUMS, _SHA256SUMS.sig (binary), optional _manifest.json (GoReleaser's)",
  },
  type: { type: 'string', value: 'TYPE', help: 'the provider type (widgets in acme/widgets); --namespace gives its namespace' },
  'public-key': {
    type: 'string',
    multiple: true,
    value: 'FILE',
    help: "an armored public key the signature may be by (repeatable; default: the config entry's keys for this namespace)",
  },
  hostname: { type: 'string', value: 'HOST', help: "the host users write in required_providers (default: the mirror's base URL's host)" },
  'signing-key': {
    type: 'string',
    value: 'FILE',
    help: "sign an unsigned release with this armored private key (default: the config's signing.key; passphrase from MODMIRROR_SIGNING_PASSPHRASE or signing.passphraseEnv)",
  },
} as const satisfies Flags;

export type PublishFlags = FlagValues<typeof PUBLISH_OPTIONS>;

export const publish = command({
  summary: 'Add one version to an existing mirror, atomically; refuses to change a published version',
  usage: `modmirror publish (--source DIR | --git REPO --ref REF) [--namespace NS --name NAME --provider P] [--version X.Y.Z]
                 [--mirror DIR|s3://BUCKET/PREFIX] [--config FILE] [--base-url URL] [--new-mirror] [--force] [--dry-run] [--no-spare] [--json]
       modmirror publish --provider-release DIR --namespace NS --type TYPE [--public-key FILE ...] [--hostname HOST]
                 [--signing-key FILE] [--mirror DIR] [--config FILE] [--base-url URL] [--new-mirror] [--dry-run] [--no-spare] [--json]`,
  options: PUBLISH_OPTIONS,
  notes: BUCKET_CREDENTIALS,
  run: async (values) => (await import('../publish.js')).runPublish(values),
});
