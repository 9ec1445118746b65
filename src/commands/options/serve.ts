import { command, type Flags, type FlagValues } from '../args.js';
import { OLD_DIR } from './shared.js';

export const SERVE_OPTIONS = {
  mirror: { type: 'string', value: 'DIR', help: `the built mirror (default: the config's "out", else ./dist)` },
  ...OLD_DIR,
  host: { type: 'string', value: 'HOST', help: 'address to listen on (default: 127.0.0.1)' },
  port: { type: 'string', value: 'PORT', help: 'port (default: 8080; 0 picks a free one)' },
  'tls-cert': { type: 'string', value: 'FILE', help: "PEM certificate: serve HTTPS (Terraform's discovery needs HTTPS)" },
  'tls-key': { type: 'string', value: 'FILE', help: 'PEM private key for --tls-cert' },
  'base-url': { type: 'string', value: 'URL', help: 'URL clients use to reach this server; discovery answers with it' },
  data: { type: 'string', value: 'DIR', help: 'folder for download counts and management data (default: data)' },
  config: {
    type: 'string',
    value: 'FILE',
    help: 'the config whose access, baseUrl, out and module settings apply (default: ./mirror.config.yaml when there is one, even with --mirror)',
  },
  access: {
    type: 'string',
    value: 'MODE',
    help: `public: anyone reads the registry (default); private: every registry request needs a token the management data knows, and each caller sees its organizations' modules and in-house providers and those shared with them (default: the config's "access", else public)`,
  },
  'archive-url-ttl': { type: 'string', value: 'SECONDS', help: 'private: how long a signed archive URL stays valid (default: 900)' },
  'login-token-expiry': {
    type: 'string',
    value: 'DURATION',
    help: 'private: how long a token from terraform login works, a number and m, h, d or w (default: 30d)',
  },
  'sso-issuer': {
    type: 'string',
    value: 'URL',
    help: "private: offer single sign-on through this OpenID Connect provider on terraform login's sign-in page (its issuer, exactly as its discovery document states it)",
  },
  'sso-client-id': { type: 'string', value: 'ID', help: 'the client this server is at the provider' },
  'sso-client-secret-file': { type: 'string', value: 'FILE', help: 'its client secret, read from FILE, never on the command line' },
  'sso-client-secret-env': { type: 'string', value: 'VAR', help: 'its client secret, from the variable VAR instead' },
  'sso-groups-claim': { type: 'string', value: 'NAME', help: "the ID token claim listing the person's groups (default: groups)" },
  'sso-team': {
    type: 'string',
    multiple: true,
    value: 'GROUP=ORG/TEAM',
    help: 'members of GROUP are members of TEAM of ORG, and others are not (repeatable)',
  },
  'sso-create-users': { type: 'boolean', help: "make a user on first sign-in when none has the person's e-mail address (default: refuse)" },
  'read-only': {
    type: 'boolean',
    help: 'refuse publishing and deleting modules through the API (/api/v2/.../registry-modules); a mirror on a read-only file system is refused anyway',
  },
  'max-upload-mib': { type: 'string', value: 'N', help: 'largest module upload through the API, in MiB (default: 64)' },
  quiet: { type: 'boolean', help: 'no per-request log lines (refused requests are still logged)' },
  'log-format': {
    type: 'string',
    value: 'F',
    help: 'text: one "GET /path 200 1.2ms" line per request (default); json: one JSON object per request (id, method, route class, status, bytes, duration, organization, module, version)',
  },
  'metrics-listen': {
    type: 'string',
    value: 'HOST:PORT',
    help: "serve GET /metrics (Prometheus) there only, not on --port; without it /metrics is on --port, and in private mode answers only a site administrator's token",
  },
  'metrics-download-series': {
    type: 'string',
    value: 'N',
    help: 'module versions /metrics counts downloads of by name, the rest as "other" (default: 1000)',
  },
  'usage-max-mib': {
    type: 'string',
    value: 'N',
    help: 'private: the bound of the usage record in the data folder (modmirror usage), in MiB (default: 64); the oldest days go first',
  },
  upstream: {
    type: 'string',
    value: 'URL',
    help: "fill the mirror from this registry: a module or provider version it lacks is fetched when asked for, published into the mirror and kept for good (default: the config's upstream.url); a --mirror folder that does not exist starts as an empty mirror",
  },
  'upstream-ttl': {
    type: 'string',
    value: 'DURATION',
    help: 'how long an upstream version list is used before it is asked again: seconds, or 90s, 10m, 1h (default: 10m)',
  },
  'upstream-ca': {
    type: 'string',
    value: 'FILE',
    help: "PEM CA certificate(s) trusted for the upstream, beside Node.js's own and NODE_EXTRA_CA_CERTS",
  },
  'upstream-token-env': {
    type: 'string',
    value: 'VAR',
    help: "the variable holding the upstream's token (default: MODMIRROR_UPSTREAM_TOKEN, else TF_TOKEN_<host>); sent to the upstream's host only",
  },
  'upstream-token-file': { type: 'string', value: 'FILE', help: "read the upstream's token from this file instead" },
} as const satisfies Flags;

export type ServeFlags = FlagValues<typeof SERVE_OPTIONS>;

export const serve = command({
  summary: 'Serve a built mirror over HTTP(S), with queries, download headers and counts',
  usage: `modmirror serve [--mirror DIR] [--host 127.0.0.1] [--port 8080] [--tls-cert FILE --tls-key FILE] [--base-url URL] [--data DIR] [--config FILE]
                [--access public|private] [--archive-url-ttl SECONDS] [--login-token-expiry 30d] [--sso-issuer URL ...] [--read-only] [--max-upload-mib N] [--quiet]
                [--log-format text|json] [--metrics-listen HOST:PORT] [--metrics-download-series N] [--usage-max-mib N]
                [--upstream URL [--upstream-ttl DURATION] [--upstream-ca FILE] [--upstream-token-env VAR | --upstream-token-file FILE]]`,
  options: SERVE_OPTIONS,
  run: async (values) => (await import('../serve.js')).runServe(values),
});
