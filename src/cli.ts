// The CLI only turns arguments into options and loads the command's module
// on demand, so `modmirror --version` stays fast in pipelines.

import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Values } from './commands/args.js';
import { BUCKET_OPTIONS, BUCKET_USAGE } from './commands/bucket-flags.js';
import { PASSPHRASE_OPTIONS } from './commands/key-flags.js';
import { MIRROR_OPTION } from './commands/mirror-flag.js';
import { exitCodeFor, MirrorError } from './errors.js';
import { EDITIONS } from './management/types.js';
import { VERSION } from './version.js';

type Options = NonNullable<ParseArgsConfig['options']>;

interface Command {
  summary: string;
  usage: string;
  options: Options;
  /** Names of the positional arguments; the first `required` of them must be given, no more than all; `missing` says what to give. */
  positionals?: { names: string[]; required: number; missing?: string };
  run: (values: Values, positionals: string[]) => Promise<number>;
}

/** `key create`'s flags, which `provider-key create` (its name before) takes too. */
const KEY_OPTIONS: Options = {
  name: { type: 'string' },
  email: { type: 'string' },
  out: { type: 'string' },
  algorithm: { type: 'string' },
  'expires-days': { type: 'string' },
  ...PASSPHRASE_OPTIONS,
  json: { type: 'boolean' },
};

const COMMANDS: Record<string, Command> = {
  build: {
    summary: 'Build the static registry from the configured module sources',
    usage: `modmirror build [--config FILE] [--modules DIR] [--mirror DIR] [--base-url URL] [--clean] [--strict]
                 [--prune] [--replace NS/NAME/PROVIDER@VERSION ...] [--json]

  --config FILE    config file (default: ./mirror.config.yaml)
  --modules DIR    build a folder laid out as <namespace>/<name>/<provider>/<version>/, no config needed
  --mirror DIR     the mirror to write (default: the config's "out", else ./dist)
  --base-url URL   absolute URL the mirror is served at (default: relative download locations)
  --clean          ignore the cache and rebuild every version (the result is the same, byte for byte)
  --strict         leave out a version with a file that cannot be read, and exit 1 (default: mirror it
                   with the documentation that could be read, and warn naming file:line:column)
  --prune          remove the published versions the sources no longer have (default: keep them);
                   each removal is recorded in the manifest
  --replace NS/NAME/PROVIDER@VERSION   take the sources' new content for that published version (a
                   moved tag) instead of failing it; recorded in the manifest (repeatable)
  --sign-key FILE  sign each new version's provenance (ARCHIVE.intoto.jsonl) with this armored OpenPGP
                   private key; passphrase from --passphrase-env VAR (default MODMIRROR_SIGNING_PASSPHRASE)
                   or --passphrase-file FILE, never the command line (default: unsigned provenance)
  --json           print one JSON summary and no progress

  Published versions are immutable: a version whose source now has other content fails (exit 1) and
  keeps its published archive; versions the sources no longer have stay until --prune.`,
    options: {
      'sign-key': { type: 'string' },
      ...PASSPHRASE_OPTIONS,
      clean: { type: 'boolean' },
      strict: { type: 'boolean' },
      prune: { type: 'boolean' },
      replace: { type: 'string', multiple: true },
      config: { type: 'string' },
      modules: { type: 'string' },
      ...MIRROR_OPTION,
      out: { type: 'string' },
      'base-url': { type: 'string' },
      json: { type: 'boolean' },
    },
    run: async (values) => (await import('./commands/build.js')).runBuild(values),
  },
  serve: {
    summary: 'Serve a built mirror over HTTP(S), with queries, download headers and counts',
    usage: `modmirror serve [--mirror DIR] [--host 127.0.0.1] [--port 8080] [--tls-cert FILE --tls-key FILE] [--base-url URL] [--data DIR] [--config FILE]
                [--access public|private] [--archive-url-ttl SECONDS] [--login-token-expiry 30d] [--sso-issuer URL ...] [--read-only] [--max-upload-mib N] [--quiet]
                [--log-format text|json] [--metrics-listen HOST:PORT] [--metrics-download-series N] [--usage-max-mib N]
                [--upstream URL [--upstream-ttl DURATION] [--upstream-ca FILE] [--upstream-token-env VAR | --upstream-token-file FILE]]

  --mirror DIR     the built mirror (default: the config's "out", else ./dist)
  --host HOST      address to listen on (default: 127.0.0.1)
  --port PORT      port (default: 8080; 0 picks a free one)
  --tls-cert FILE  PEM certificate: serve HTTPS (Terraform's discovery needs HTTPS)
  --tls-key FILE   PEM private key for --tls-cert
  --base-url URL   URL clients use to reach this server; discovery answers with it
  --data DIR       folder for download counts and management data (default: data)
  --config FILE    the config whose access, baseUrl, out and module settings apply (default:
                   ./mirror.config.yaml when there is one, even with --mirror)
  --access MODE    public: anyone reads the registry (default); private: every registry request needs a
                   token the management data knows, and each caller sees its organizations' modules
                   and in-house providers and those shared with them (default: the config's "access",
                   else public)
  --archive-url-ttl SECONDS  private: how long a signed archive URL stays valid (default: 900)
  --login-token-expiry DURATION  private: how long a token from terraform login works, a number and m,
                   h, d or w (default: 30d)
  --sso-issuer URL  private: offer single sign-on through this OpenID Connect provider on terraform login's
                   sign-in page (its issuer, exactly as its discovery document states it)
  --sso-client-id ID  the client this server is at the provider
  --sso-client-secret-file FILE | --sso-client-secret-env VAR  its client secret, never on the command line
  --sso-groups-claim NAME  the ID token claim listing the person's groups (default: groups)
  --sso-team GROUP=ORG/TEAM  members of GROUP are members of TEAM of ORG, and others are not (repeatable)
  --sso-create-users  make a user on first sign-in when none has the person's e-mail address (default:
                   refuse)
  --read-only      refuse publishing and deleting modules through the API (/api/v2/.../registry-modules);
                   a mirror on a read-only file system is refused anyway
  --max-upload-mib N  largest module upload through the API, in MiB (default: 64)
  --quiet          no per-request log lines (refused requests are still logged)
  --log-format F   text: one "GET /path 200 1.2ms" line per request (default); json: one JSON object per
                   request (id, method, route class, status, bytes, duration, organization, module, version)
  --metrics-listen HOST:PORT  serve GET /metrics (Prometheus) there only, not on --port; without it /metrics
                   is on --port, and in private mode answers only a site administrator's token
  --metrics-download-series N  module versions /metrics counts downloads of by name, the rest as "other"
                   (default: 1000)
  --usage-max-mib N  private: the bound of the usage record in the data folder (modmirror usage), in MiB
                   (default: 64); the oldest days go first
  --upstream URL   fill the mirror from this registry: a module or provider version it lacks is fetched
                   when asked for, published into the mirror and kept for good (default: the config's
                   upstream.url); a --mirror folder that does not exist starts as an empty mirror
  --upstream-ttl DURATION  how long an upstream version list is used before it is asked again: seconds,
                   or 90s, 10m, 1h (default: 10m)
  --upstream-ca FILE  PEM CA certificate(s) trusted for the upstream, beside Node.js's own and
                   NODE_EXTRA_CA_CERTS
  --upstream-token-env VAR  the variable holding the upstream's token (default: MODMIRROR_UPSTREAM_TOKEN,
                   else TF_TOKEN_<host>); sent to the upstream's host only
  --upstream-token-file FILE  read the upstream's token from this file instead`,
    options: {
      ...MIRROR_OPTION,
      dir: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'base-url': { type: 'string' },
      data: { type: 'string' },
      access: { type: 'string' },
      'archive-url-ttl': { type: 'string' },
      'login-token-expiry': { type: 'string' },
      'sso-issuer': { type: 'string' },
      'sso-client-id': { type: 'string' },
      'sso-client-secret-file': { type: 'string' },
      'sso-client-secret-env': { type: 'string' },
      'sso-groups-claim': { type: 'string' },
      'sso-team': { type: 'string', multiple: true },
      'sso-create-users': { type: 'boolean' },
      'read-only': { type: 'boolean' },
      'max-upload-mib': { type: 'string' },
      config: { type: 'string' },
      quiet: { type: 'boolean' },
      'log-format': { type: 'string' },
      'metrics-listen': { type: 'string' },
      'metrics-download-series': { type: 'string' },
      'usage-max-mib': { type: 'string' },
      upstream: { type: 'string' },
      'upstream-ttl': { type: 'string' },
      'upstream-ca': { type: 'string' },
      'upstream-token-env': { type: 'string' },
      'upstream-token-file': { type: 'string' },
    },
    run: async (values) => (await import('./commands/serve.js')).runServe(values),
  },
  dev: {
    summary: 'Preview the sources as you write them: build, serve, and rebuild on every save',
    usage: `modmirror dev [--config FILE] [--modules DIR] [--mirror DIR] [--host 127.0.0.1] [--port 8080]

  --config FILE    config file whose sources to preview (default: ./mirror.config.yaml)
  --modules DIR    preview a folder laid out as <namespace>/<name>/<provider>/<version>/, no config needed
  --mirror DIR     the preview mirror (default: a temporary folder, removed on exit); never the config's
                   "out" nor a folder inside a source
  --host HOST      address to listen on (default: 127.0.0.1)
  --port PORT      port (default: 8080; 0 picks a free one)

  Serves what modmirror serve serves, and rebuilds after each change to the sources or the config (a
  burst of changes, such as a git checkout, is one rebuild): open browse pages show the result without a
  reload. A version whose files do not parse keeps its last good build, and its file:line:column errors
  are printed and shown on its page until fixed. Local git sources are rebuilt when their tags change.`,
    options: {
      config: { type: 'string' },
      modules: { type: 'string' },
      ...MIRROR_OPTION,
      host: { type: 'string' },
      port: { type: 'string' },
    },
    run: async (values) => (await import('./commands/dev.js')).runDev(values),
  },
  deprecate: {
    summary: 'Mark a published version deprecated (with a reason and a link), or lift that with --undo',
    usage: `modmirror deprecate NAMESPACE/NAME/PROVIDER VERSION (--reason TEXT [--link URL] | --undo) [--mirror DIR] [--config FILE] [--sign-key FILE] [--json]

  --reason TEXT   why, shown by the browse page and in the versions and detail documents
  --link URL      where to read more (http or https)
  --undo          the version is no longer deprecated
  --mirror DIR    the mirror (default: the config's "out", else ./dist); or s3://BUCKET/PREFIX, a mirror
                  in a bucket, changed as publish --mirror s3:// changes it (with --endpoint, --region, --path-style)
  --sign-key FILE the key a signed mirror's truth is signed with (default: the config's provenance: key);
                  passphrase from --passphrase-env VAR or --passphrase-file FILE. A signed mirror is not
                  changed without it
  --json          print {"mirror", "module", "version", "deprecation", "changed"}

  Kept in the module's state, the mirror's truth: build, publish, bundle and unbundle carry it.`,
    options: {
      reason: { type: 'string' },
      link: { type: 'string' },
      undo: { type: 'boolean' },
      'sign-key': { type: 'string' },
      ...PASSPHRASE_OPTIONS,
      ...MIRROR_OPTION,
      out: { type: 'string' },
      config: { type: 'string' },
      json: { type: 'boolean' },
      ...BUCKET_OPTIONS,
    },
    positionals: { names: ['NAMESPACE/NAME/PROVIDER', 'VERSION'], required: 2 },
    run: async (values, positionals) => (await import('./commands/deprecate.js')).runDeprecate(values, positionals),
  },
  usage: {
    summary: 'Private registry: who downloaded which module version, and which deprecated versions are still used',
    usage: `modmirror usage [--since YYYY-MM-DD] [--module NS/NAME/PROVIDER] [--deprecated] [--json] [--data DIR] [--mirror DIR]
                [--from-log FILE]

  --since DAY      only downloads on that day (UTC) or later
  --module ADDR    only that module's versions
  --deprecated     only versions the mirror marks deprecated: who still downloads them
  --json           print {"filter", "usage": [{module, version, organization, team, user, downloads, firstDay,
                   lastDay, deprecation}]}
  --data DIR       the data folder serve --access private records usage in (default: data)
  --mirror DIR     the mirror whose deprecations to show (default: the config's "out", else ./dist)
  --from-log FILE  report from a static host's nginx access log (combined format) instead, by client network
                   (IPv4 /24, IPv6 /48)`,
    options: {
      since: { type: 'string' },
      module: { type: 'string' },
      deprecated: { type: 'boolean' },
      json: { type: 'boolean' },
      data: { type: 'string' },
      ...MIRROR_OPTION,
      dir: { type: 'string' },
      'from-log': { type: 'string' },
    },
    run: async (values) => (await import('./commands/usage.js')).runUsage(values),
  },
  'signing-key': {
    summary: 'Private registry: replace the key that signs archive URLs (every URL signed before stops working)',
    usage: `modmirror signing-key rotate [--data DIR] [--json]

  --data DIR   the data folder serve uses (default: data); a running server takes the new key within a second
  --json       print {"file"}: the key file written`,
    options: { data: { type: 'string' }, json: { type: 'boolean' } },
    positionals: { names: ['rotate'], required: 1 },
    run: async (values, positionals) => (await import('./commands/signing-key.js')).runSigningKey(values, positionals),
  },
  key: {
    summary: 'Make an OpenPGP key pair that signs bundles (bundle --sign-key) and in-house provider releases',
    usage: `modmirror key create --name NAME [--email ADDRESS] [--out DIR] [--algorithm rsa4096|curve25519] [--expires-days N]
                     [--passphrase-env VAR | --passphrase-file FILE] [--json]

  --name NAME        who signs, e.g. "Acme Release" (the key's user ID; also names the files)
  --email ADDRESS    the user ID's e-mail address
  --out DIR          where to write NAME.pub.asc, NAME.key.asc and NAME.rev.asc, the key's revocation certificate
                     (default: keys); never overwritten
  --algorithm A      rsa4096 (default: read by every OpenPGP implementation, Terraform's provider check
                     among them) or curve25519 (Ed25519, as gpg makes by default: small, made in milliseconds)
  --expires-days N   the key expires after N days (default: never)
  --passphrase-env VAR   the variable holding the passphrase that locks the private key
                     (default: MODMIRROR_SIGNING_PASSPHRASE, what signing: passphraseEnv reads)
  --passphrase-file FILE  read the passphrase from FILE's first line instead (- for standard input)
  --json             print {"keyId", "fingerprint", "algorithm", "publicKey", "privateKey", "revocation"} (the files written)

  The passphrase is never taken on the command line, where ps and shell history would show it.`,
    options: KEY_OPTIONS,
    positionals: { names: ['create'], required: 1 },
    run: async (values, positionals) => (await import('./commands/key.js')).runKey(values, positionals),
  },
  'provider-key': {
    summary: 'The same as modmirror key create (its name before; still works, with a note)',
    usage: `modmirror provider-key create ...: see modmirror key --help; the same flags, the same key pair.`,
    // The same table as key's: one command under two names.
    options: KEY_OPTIONS,
    positionals: { names: ['create'], required: 1 },
    run: async (values, positionals) => (await import('./commands/key.js')).runKey(values, positionals, 'provider-key'),
  },
  publish: {
    summary: 'Add one version to an existing mirror, atomically; refuses to change a published version',
    usage: `modmirror publish (--source DIR | --git REPO --ref REF) [--namespace NS --name NAME --provider P] [--version X.Y.Z]
                 [--mirror DIR|s3://BUCKET/PREFIX] [--config FILE] [--base-url URL] [--new-mirror] [--force] [--dry-run] [--no-spare] [--json]
       modmirror publish --provider-release DIR --namespace NS --type TYPE [--public-key FILE ...] [--hostname HOST]
                 [--signing-key FILE] [--mirror DIR] [--config FILE] [--base-url URL] [--new-mirror] [--dry-run] [--no-spare] [--json]

  --source DIR     a folder holding the version's files; a folder .../<namespace>/<name>/<provider>/<version>
                   whose last part is a version names its address, anything else needs the address flags
  --git REPO       a repository (path or clone URL); the config's entry for it gives address, path and tag prefix
  --ref REF        the tag (or commit) to publish; its name gives the version unless --version is set
  --namespace, --name, --provider   the module address, when the source does not say it
  --version X.Y.Z  the version, when the tag or folder name does not say it
  --mirror DIR     the mirror (default: the config's "out", else ./dist); it must exist
  --mirror s3://BUCKET/PREFIX   a mirror in a bucket: publish reads its manifest and the documents the
                   version changes, uploads what changed (archive first, manifest last) and writes the
                   manifest only if nobody else changed it meanwhile, else reads again and redoes the
                   change; many pipelines can publish into one bucket at once. With --endpoint URL,
                   --region REGION, --path-style (see modmirror push --help)
  --new-mirror     start a new mirror at --mirror when there is none (without it, a missing mirror is an error)
  --base-url URL   a new mirror's base URL (an existing mirror keeps its own)
  --force          replace a published version whose content differs (recorded in the manifest)
  --dry-run        say what would change, change nothing
  --no-spare       no effect, accepted for scripts that pass it: nothing is left writing beside the
                   mirror when publish returns
  --sign-key FILE  sign the version's provenance (ARCHIVE.intoto.jsonl) with this armored OpenPGP private
                   key; passphrase from --passphrase-env VAR or --passphrase-file FILE (default: unsigned)
  --json           print the result as JSON

  In-house providers (served over the provider registry protocol, providers.v1):
  --provider-release DIR   a release pipeline's output: terraform-provider-TYPE_VERSION_OS_ARCH.zip,
                   _SHA256SUMS, _SHA256SUMS.sig (binary), optional _manifest.json (GoReleaser's)
  --type TYPE      the provider type (widgets in acme/widgets); --namespace gives its namespace
  --public-key FILE   an armored public key the signature may be by (repeatable; default: the config
                   entry's keys for this namespace)
  --hostname HOST  the host users write in required_providers (default: the mirror's base URL's host)
  --signing-key FILE  sign an unsigned release with this armored private key (default: the config's
                   signing.key; passphrase from MODMIRROR_SIGNING_PASSPHRASE or signing.passphraseEnv)`,
    options: {
      'provider-release': { type: 'string' },
      type: { type: 'string' },
      'public-key': { type: 'string', multiple: true },
      hostname: { type: 'string' },
      'signing-key': { type: 'string' },
      'sign-key': { type: 'string' },
      ...PASSPHRASE_OPTIONS,
      source: { type: 'string' },
      git: { type: 'string' },
      ref: { type: 'string' },
      namespace: { type: 'string' },
      name: { type: 'string' },
      provider: { type: 'string' },
      version: { type: 'string' },
      ...MIRROR_OPTION,
      out: { type: 'string' },
      config: { type: 'string' },
      'base-url': { type: 'string' },
      'new-mirror': { type: 'boolean' },
      force: { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      'no-spare': { type: 'boolean' },
      json: { type: 'boolean' },
      ...BUCKET_OPTIONS,
    },
    run: async (values) => (await import('./commands/publish.js')).runPublish(values),
  },
  push: {
    summary: 'Upload a built mirror to an S3-compatible bucket: only what changed, archives first, the manifest last',
    usage: `modmirror push s3://BUCKET[/PREFIX] [--mirror DIR] [--endpoint URL] [--region REGION] [--path-style] [--prune]
                [--full] [--download-header] [--concurrency N] [--dry-run] [--json] [--config FILE]

  s3://BUCKET/PREFIX  the bucket (and the prefix in it) to upload to
  --mirror DIR     the built mirror to upload (default: the config's "out", else ./dist)
  --config FILE    the config whose cacheDir keeps what an interrupted push stored (default:
                   ./mirror.config.yaml when there is one)
  --prune          delete the objects the mirror no longer has, once the new manifest is in place
  --full           upload every object, not only what the bucket's record says differs (after the bucket
                   was changed by other means); archives already there must still have the same bytes
  --download-header  store each download object's location as its x-terraform-get header, for Ceph RGW
                   run with "rgw extended http attrs = x-terraform-get": Terraform then installs
                   straight from the bucket's website endpoint
  --concurrency N  objects in flight (default 16)
  --dry-run        list what would be uploaded, upload nothing
  --sign-key FILE  a signed mirror's key (default: the config's provenance: key): the root is signed again
                   where the bucket gives it a newer generation; passphrase as for publish
  --json           print one JSON summary and no progress
${BUCKET_USAGE}

  Objects get the content type and Cache-Control nginx sends for them (archives immutable, the rest a
  minute). What the bucket already holds is known from the record kept beside its manifest, so a second
  push uploads nothing. The manifest is written only if the bucket's is still the one read. An
  interrupted push resumes where it stopped when run again.`,
    options: {
      ...MIRROR_OPTION,
      ...BUCKET_OPTIONS,
      prune: { type: 'boolean' },
      full: { type: 'boolean' },
      'download-header': { type: 'boolean' },
      'sign-key': { type: 'string' },
      ...PASSPHRASE_OPTIONS,
      concurrency: { type: 'string' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      config: { type: 'string' },
    },
    // Two arguments are the form before --mirror: push DIR s3://BUCKET/PREFIX (runPush says so).
    positionals: {
      names: ['s3://BUCKET/PREFIX', 's3://BUCKET/PREFIX'],
      required: 1,
      missing: 'Name the bucket: modmirror push s3://BUCKET/PREFIX [--mirror DIR].',
    },
    run: async (values, positionals) => (await import('./commands/push.js')).runPush(values, positionals),
  },
  user: {
    summary: 'Management data: create a user (modmirror user create)',
    usage: `modmirror user create --username NAME --email ADDR [--password-file FILE | --password-env VAR] [--site-admin] [--data DIR] [--json]

  --password-file FILE   read the password from FILE's first line (- for standard input)
  --password-env VAR     read the password from the environment variable VAR
  --json                 accepted, as on every command: the user's id is printed as JSON anyway
  Without either password flag, the account has a random password and signs in with tokens only. A
  password is never taken on the command line, where ps and shell history would show it.`,
    options: {
      username: { type: 'string' },
      email: { type: 'string' },
      'password-file': { type: 'string' },
      'password-env': { type: 'string' },
      'site-admin': { type: 'boolean' },
      data: { type: 'string' },
      json: { type: 'boolean' },
    },
    positionals: { names: ['create'], required: 1 },
    run: async (values, positionals) => (await import('./commands/manage.js')).runUser(values, positionals),
  },
  org: {
    summary: 'Management data: create an organization, or set what it shares with others',
    usage: `modmirror org create --name NAME --email ADDR [--owner USERNAME] [--data DIR] [--json]
       modmirror org share --name NAME [--module-consumers ORG,ORG] [--global-module-sharing true|false]
                           [--provider-consumers ORG,ORG] [--global-provider-sharing true|false] [--data DIR]

  share: who reads the organization's modules and in-house providers in serve --access private.
  Consumers (a comma list, "" for none) turn that kind's global sharing off; global sharing on
  clears that kind's consumers. Prints the organization's sharing as JSON (create: its id); --json is
  accepted, as on every command.`,
    options: {
      name: { type: 'string' },
      email: { type: 'string' },
      owner: { type: 'string' },
      data: { type: 'string' },
      'module-consumers': { type: 'string' },
      'provider-consumers': { type: 'string' },
      'global-module-sharing': { type: 'string' },
      'global-provider-sharing': { type: 'string' },
      json: { type: 'boolean' },
    },
    positionals: { names: ['create|share'], required: 1 },
    run: async (values, positionals) => (await import('./commands/manage.js')).runOrg(values, positionals),
  },
  team: {
    summary: 'Management data: create a team in an organization',
    usage: `modmirror team create --org ORG --name NAME [--members USER,USER] [--data DIR] [--json]

  --org ORG            the organization the team is in (made with modmirror org create)
  --name NAME          the team's name, unique in its organization
  --members USER,USER  the users in the team, by username (a comma list; default: none)
  --data DIR           the management data folder serve reads (default: data)
  --json               accepted, as on every command: the team's id is printed as JSON anyway`,
    options: { org: { type: 'string' }, name: { type: 'string' }, members: { type: 'string' }, data: { type: 'string' }, json: { type: 'boolean' } },
    positionals: { names: ['create'], required: 1 },
    run: async (values, positionals) => (await import('./commands/manage.js')).runTeam(values, positionals),
  },
  token: {
    summary: 'Management data: create, list and revoke API tokens; a token is printed once, only its hash is kept',
    usage: `modmirror token create (--user NAME | --team NAME --org ORG | --org NAME) [--description TEXT] [--expires-in DURATION] [--data DIR] [--json]
       modmirror token list (--user NAME | --team NAME --org ORG | --org NAME) [--data DIR] [--json]
       modmirror token revoke ID [--data DIR] [--json]

  --user NAME      a token that acts as this user (by username)
  --team NAME      with --org ORG: a token that acts as this team of ORG (a service user)
  --org NAME       alone: the organization's token, which acts as the organization (a service user)
  --description TEXT     what the token is for, shown by list
  --expires-in DURATION  the token stops working after this long: a number and m, h, d or w (90d,
                   12h, 1w); default: never
  --data DIR       the management data folder serve reads (default: data)
  --json           create: print {"token","id","expires"} rather than the token alone; list: one JSON
                   object with the tokens; revoke: {"revoked"}

  create prints the token once, on standard output; the data folder keeps only its hash. list shows
  each token's id, description, creation, last use (to within a minute) and expiry, never the token.
  A running serve refuses a revoked or expired token from the next request on.`,
    options: {
      user: { type: 'string' },
      team: { type: 'string' },
      org: { type: 'string' },
      description: { type: 'string' },
      'expires-in': { type: 'string' },
      data: { type: 'string' },
      json: { type: 'boolean' },
    },
    positionals: { names: ['create|list|revoke', 'ID'], required: 1 },
    run: async (values, positionals) => (await import('./commands/manage.js')).runToken(values, positionals),
  },
  edition: {
    summary: `Management data: declare the edition (${EDITIONS.join(', ')})`,
    usage: `modmirror edition set NAME [--data DIR] [--json]

  NAME        one of ${EDITIONS.join(', ')} (default: self-hosted); the site-admin endpoints
              answer on self-hosted only; free allows one run task integration per organization,
              on at most ten workspaces
  --data DIR  the management data folder serve reads (default: data)
  --json      print {"edition"} once it is set (without it, nothing is printed)`,
    options: { data: { type: 'string' }, json: { type: 'boolean' } },
    positionals: { names: ['set', 'NAME'], required: 2 },
    run: async (values, positionals) => (await import('./commands/manage.js')).runEdition(values, positionals),
  },
  'run-task': {
    summary: "Management data: record a run task's result (creates the run and stage if needed); prints the ids",
    usage: `modmirror run-task record --run RUN_ID --task NAME --status STATUS [--org ORG --workspace NAME] [--stage post_plan]
                         [--stage-status STATUS] [--message TEXT] [--url URL] [--task-url URL] [--enforcement mandatory|advisory]
                         [--speculative] [--data DIR] [--json]

  statuses: pending, running, passed, failed, errored, canceled, unreachable; the stage's status follows
  its results unless --stage-status says otherwise (for example awaiting_override). Prints the ids as
  JSON (--json is accepted, as on every command).`,
    options: {
      run: { type: 'string' },
      org: { type: 'string' },
      workspace: { type: 'string' },
      stage: { type: 'string' },
      'stage-status': { type: 'string' },
      task: { type: 'string' },
      status: { type: 'string' },
      message: { type: 'string' },
      url: { type: 'string' },
      'task-url': { type: 'string' },
      enforcement: { type: 'string' },
      speculative: { type: 'boolean' },
      data: { type: 'string' },
      json: { type: 'boolean' },
    },
    positionals: { names: ['record'], required: 1 },
    run: async (values, positionals) => (await import('./commands/manage.js')).runRunTask(values, positionals),
  },
  verify: {
    summary: 'Check that a mirror agrees with itself and its archives match the manifest',
    usage: `modmirror verify [--mirror DIR|s3://BUCKET/PREFIX] [--complete] [--repair] [--config FILE] [--trust KEY.asc ...] [--json]

  --mirror DIR  the mirror (default: the config's "out", else ./dist); or s3://BUCKET/PREFIX, a mirror in a
              bucket, with --endpoint URL, --region REGION and --path-style as for modmirror push
  --complete  also report module versions whose required providers the mirror lacks
              for one of the config's platforms (default linux_amd64)
  --repair    first write every derived document (listings, indexes, each module's versions and
              details) again from the manifest, then check; changes no published version
  --config    the config file naming the platforms (default: mirror.config.yaml when present)
  --trust KEY.asc   a signed mirror: manifest.json and every module state must carry a good signature
              (FILE.asc, written by every write given --sign-key) by one of these armored public keys
              (repeatable); the archives are then checked against the signed states
  --json      print {"ok", "problems": [{"path", "message"}]}`,
    options: {
      ...MIRROR_OPTION,
      json: { type: 'boolean' },
      trust: { type: 'string', multiple: true },
      complete: { type: 'boolean' },
      repair: { type: 'boolean' },
      config: { type: 'string' },
      ...BUCKET_OPTIONS,
    },
    // A positional mirror is the form before --mirror (runVerify says so).
    positionals: { names: ['DIR'], required: 0 },
    run: async (values, positionals) => (await import('./commands/verify.js')).runVerify(values, positionals),
  },
  hosting: {
    summary:
      "Print a host configuration (nginx server block, Caddyfile site, CloudFront function) that serves a mirror with no modmirror process, or write the mirror's _headers",
    usage: `modmirror hosting nginx|caddy|cloudfront|headers [--mirror DIR] [--listen [ADDR:]PORT] [--base-url URL] [--config FILE] [--json]

  nginx|caddy       the host to configure
  cloudfront        the CloudFront viewer-response function that adds the download header in front of a
                    bucket filled by modmirror push (--listen does not apply)
  headers           write _headers into the mirror, for hosts that read one (Netlify, Cloudflare Pages);
                    every later write into the mirror keeps it up to date (--listen, --base-url do not apply)
  --mirror DIR      the built mirror the host serves (default: the config's "out", else ./dist)
  --listen ADDR:PORT  where the host listens (default: 80, every address)
  --base-url URL    absolute download locations under URL (default: what the mirror was built with)
  --config FILE     config whose baseUrl to use when the mirror is not built yet
  --json            print {"host", "mirror", "listen", "baseUrl", "config" (the text), "warnings"};
                    for headers, {"host", "mirror", "file", "versions", "changed"}`,
    options: {
      ...MIRROR_OPTION,
      dir: { type: 'string' },
      json: { type: 'boolean' },
      listen: { type: 'string' },
      'base-url': { type: 'string' },
      config: { type: 'string' },
    },
    positionals: {
      names: ['nginx|caddy|cloudfront|headers'],
      required: 1,
      missing: 'Name the host: modmirror hosting nginx, caddy or cloudfront, or modmirror hosting headers.',
    },
    run: async (values, positionals) => (await import('./commands/hosting.js')).runHosting(values, positionals),
  },
  bundle: {
    summary: 'Pack a mirror (or what changed since a manifest) into one .tar.gz with sha256 sums, to carry it in',
    usage: `modmirror bundle [--mirror DIR] --out FILE.tar.gz [--since MANIFEST] [--sign-key FILE [--passphrase-env VAR | --passphrase-file FILE]]
                 [--json]

  --mirror DIR       the mirror to pack (default: the config's "out", else ./dist)
  --out FILE         the bundle to write
  --since MANIFEST   a manifest.json of the receiving mirror: carry only the archives it lacks (and every index)
  --sign-key FILE    an armored OpenPGP private key (modmirror key create's NAME.key.asc, or gpg
                     --armor --export-secret-keys): write FILE.tar.gz.asc beside the bundle, its detached
                     signature (gpg --verify FILE.tar.gz.asc FILE.tar.gz checks it; unbundle --trust requires it)
  --passphrase-env VAR   the variable holding the key's passphrase (default: MODMIRROR_SIGNING_PASSPHRASE)
  --passphrase-file FILE  read the key's passphrase from FILE's first line instead (- for standard input)
  --json             print {"mirror", "out", "files", "bytes", "versions", "providerPackages", "skipped", "derived",
                     "sha256", "signature": {"file", "keyId"}}

  The key is read and unlocked before anything is written. A bundle written without --sign-key removes an
  older FILE.tar.gz.asc beside it, which signed other bytes.`,
    options: {
      ...MIRROR_OPTION,
      dir: { type: 'string' },
      out: { type: 'string' },
      since: { type: 'string' },
      'sign-key': { type: 'string' },
      ...PASSPHRASE_OPTIONS,
      json: { type: 'boolean' },
    },
    run: async (values) => (await import('./commands/bundle.js')).runBundle(values),
  },
  unbundle: {
    summary: 'Check every sha256 of a bundle, then merge it into a mirror atomically',
    usage: `modmirror unbundle FILE.tar.gz [--mirror DIR] [--trust KEY.asc ...] [--config FILE] [--no-spare] [--json]

  FILE           a bundle made by modmirror bundle
  --mirror DIR   the mirror to merge into (default: the config's "out", else ./dist; created if missing)
  --trust KEY.asc  an armored public key (repeatable; default: the config's trust: list): require
                 FILE.tar.gz.asc beside the bundle, a signature of its bytes by one of these keys, not expired
                 or revoked; refuse the bundle otherwise, before anything is written (exit 1)
  --config FILE  the config whose out and trust: apply (default: ./mirror.config.yaml when there is one)
  --no-spare     no effect, accepted for scripts that pass it (as publish --no-spare)
  --json         print {"mirror", "files", "added", "addedProviderPackages", "replaced", "versions", "modules",
                 "signature": {"checked", "keyId", "userId"} (or {"checked": false, "file"})}

  Without a trusted key, signatures are not checked (a FILE.tar.gz.asc beside the bundle gets a note).`,
    options: {
      ...MIRROR_OPTION,
      out: { type: 'string' },
      trust: { type: 'string', multiple: true },
      config: { type: 'string' },
      'no-spare': { type: 'boolean' },
      json: { type: 'boolean' },
    },
    positionals: { names: ['FILE.tar.gz'], required: 1, missing: 'Name the bundle: modmirror unbundle FILE.tar.gz [--mirror DIR].' },
    run: async (values, positionals) => (await import('./commands/unbundle.js')).runUnbundle(values, positionals),
  },
  sync: {
    summary: 'Copy module versions (with the modules they call) and provider packages from an upstream registry into folders the build reads',
    usage: `modmirror sync --from URL (--module NS/NAME/PROVIDER[@CONSTRAINT] | --provider [HOST/]NS/TYPE[@CONSTRAINT] | --for DIR)...
               [--into DIR] [--providers-into DIR] [--platform OS_ARCH]... [--token-env VAR]
               [--no-dependencies] [--dependency-versions newest|every] [--stands-in-for HOST]... [--json] [--verbose]

  --from URL        the upstream registry (its /.well-known/terraform.json names modules.v1)
  --module ADDR     copy every version matching the constraint: acme/vpc/aws@"~> 2.0" (repeatable)
  --provider ADDR   copy every provider version matching the constraint, for each platform:
                    registry.terraform.io/hashicorp/aws@"~> 5.0"; NS/TYPE is a provider of the --from host (repeatable)
  --for DIR         copy what terraform init of a configuration needs: the registry modules its module blocks
                    call, and the providers it requires (the versions of its .terraform.lock.hcl when it has
                    one) (repeatable); without --from, from the config's upstreams
  --platform OS_ARCH  a platform to copy provider packages for (repeatable; default: the config's platforms,
                    else linux_amd64)
  --providers-into DIR  the provider folder to fill, HOST/NS/TYPE/ as terraform providers mirror writes it
                    (default: the config's first providers folder)
  --into DIR        the folder to fill, <namespace>/<name>/<provider>/<version>/ (default: the config's first folder source)
  --config FILE     config that names the folder (default: ./mirror.config.yaml)
  --token-env VAR   variable holding the upstream's bearer token (default: MODMIRROR_SYNC_TOKEN, else TF_TOKEN_<host>)
  --no-dependencies copy only what --module/--for name, not the registry modules those versions call
  --dependency-versions newest|every   per call, the newest match (what terraform init picks; default) or every match
  --stands-in-for HOST  a public registry the upstream answers for (repeatable; default registry.terraform.io and
                    registry.opentofu.org); a call without a host means registry.terraform.io, one naming the
                    upstream's own host is followed too, others are reported as "other host"
  --json            print one JSON summary (fetched, present, failures, notMirrored, cycles, providers,
                    providerVersions, providerUnavailable), no progress
  --verbose         list every call not mirrored, each with its caller (default: the calls to a caller's own
                    folders, ./modules/..., counted on one line; the others once per source, constraint and reason)

  git::, local and URL sources, cycles and unsatisfiable calls are reported, never fatal to the rest; so is a
  platform the upstream has no provider package for. A provider package is kept only when its SHA256SUMS is
  signed by a key the upstream lists and its sha256 matches. Exit 1 when something wanted could not be found,
  fetched or verified.`,
    options: {
      from: { type: 'string' },
      module: { type: 'string', multiple: true },
      provider: { type: 'string', multiple: true },
      platform: { type: 'string', multiple: true },
      'providers-into': { type: 'string' },
      for: { type: 'string', multiple: true },
      into: { type: 'string' },
      config: { type: 'string' },
      'token-env': { type: 'string' },
      'no-dependencies': { type: 'boolean' },
      'dependency-versions': { type: 'string' },
      'stands-in-for': { type: 'string', multiple: true },
      json: { type: 'boolean' },
      verbose: { type: 'boolean' },
    },
    run: async (values) => (await import('./commands/sync.js')).runSync(values),
  },
};

/** Help pads command names to the longest, so the summaries line up whatever commands are added. */
const COMMAND_WIDTH = Math.max(...Object.keys(COMMANDS).map((name) => name.length));

const HELP = `modmirror ${VERSION}: Terraform/OpenTofu modules -> a static module registry

Usage: modmirror <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(COMMAND_WIDTH)} ${c.summary}`)
  .join('\n')}

Options:
  --help        show help (also: modmirror <command> --help)
  --version     print the version
  --debug       print stack traces on errors

Every command names its mirror with --mirror DIR (or s3://BUCKET/PREFIX where it takes a bucket); the
spellings before it (--out, --dir, a DIR argument) still work, with a note.

Exit codes: 0 ok, 1 failure, 2 usage error (a path given, or the default, that is not there among them).`;

export async function main(argv: string[]): Promise<number> {
  const debug = argv.includes('--debug');
  const args = argv.filter((a) => a !== '--debug');
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(HELP);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    console.log(VERSION);
    return 0;
  }
  const command = COMMANDS[name];
  try {
    if (!command) {
      const near = closest(name, Object.keys(COMMANDS));
      throw new MirrorError('USAGE', `Unknown command "${name}".${near ? ` Did you mean "${near}"?` : ''}`, {
        hint: 'Run modmirror --help for the list of commands.',
      });
    }
    if (rest.includes('--help') || rest.includes('-h')) {
      console.log(`Usage: ${command.usage}`);
      return 0;
    }
    let parsed: { values: Values; positionals: string[] };
    try {
      parsed = parseArgs({ args: rest, options: command.options, allowPositionals: true, strict: true }) as typeof parsed;
    } catch (error) {
      const unknownOption = (error as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION';
      const hint = unknownOption ? `modmirror ${name} --help lists its options.` : `Usage: ${command.usage}`;
      throw new MirrorError('USAGE', argumentProblem(error as NodeJS.ErrnoException, Object.keys(command.options)), { hint });
    }
    checkPositionals(name, command, parsed.positionals);
    return await command.run(parsed.values, parsed.positionals);
  } catch (error) {
    reportError(error, debug);
    return exitCodeFor(error);
  }
}

/** Node's parser explains an unknown option in its own terms; say which option, and the one that was probably meant. */
function argumentProblem(error: NodeJS.ErrnoException, options: string[]): string {
  const unknown = error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'(-{1,2}[^']*)'/.exec(error.message)?.[1] : undefined;
  if (unknown === undefined) return error.message;
  const near = closest(unknown.replace(/^-+/, '').split('=')[0]!, options);
  return `Unknown option ${unknown}.${near ? ` Did you mean --${near}?` : ''}`;
}

/** The candidate within two edits of `word` (or that it begins), if one is clearly meant. */
function closest(word: string, candidates: string[]): string | undefined {
  const scored = candidates.map((c) => ({ c, d: c.startsWith(word) && word.length >= 3 ? 0 : editDistance(word, c) })).sort((a, b) => a.d - b.d);
  return scored[0] && scored[0].d <= Math.min(2, Math.floor(word.length / 2)) ? scored[0].c : undefined;
}

/** Edits (insert, delete, substitute, swap two neighbours: "claen" is one slip from "clean") from `a` to `b`. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The command table decides how many positional arguments a command takes, for every command alike. */
function checkPositionals(name: string, command: Command, positionals: string[]): void {
  const { names, required, missing } = command.positionals ?? { names: [], required: 0 };
  if (positionals.length < required) {
    throw new MirrorError('USAGE', missing ?? `Missing ${names.slice(positionals.length, required).join(' ')}: modmirror ${name} ${names.join(' ')}.`, {
      hint: `Usage: ${command.usage}`,
    });
  }
  if (positionals.length > names.length) {
    throw new MirrorError('USAGE', `Unexpected argument "${positionals[names.length]}".`, { hint: `Usage: ${command.usage}` });
  }
}

export function reportError(error: unknown, debug: boolean): void {
  if (error instanceof MirrorError) {
    console.error(`error: ${error.message}`);
    if (error.hint) console.error(`hint: ${error.hint}`);
    if (debug && error.cause) console.error(error.cause);
    if (debug) console.error(error.stack);
  } else {
    console.error(`error: ${error instanceof Error ? (debug ? error.stack : error.message) : String(error)}`);
    if (!debug) console.error('hint: run again with --debug for the stack trace; this is a bug in modmirror, please report it.');
  }
}
