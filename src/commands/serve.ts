import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { ACCESS_MODES, baseUrlFlag, moduleMeta, resolveMirrorConfig, type Access, type ResolvedConfig } from '../config/index.js';
import { DEFAULT_UPSTREAM_TTL_SECONDS, parseDuration } from '../config/upstream.js';
import { MirrorError } from '../errors.js';
import type { SsoOptions } from '../login/sso.js';
import { durationSeconds } from '../management/tokens.js';
import { startServer, UPSTREAM_PROVIDERS_DIR } from '../serve/index.js';
import { takeInProviders } from '../upstream/providers.js';
import { DEFAULT_DOWNLOAD_SERIES } from '../serve/metrics.js';
import { LOG_FORMATS, type LogFormat } from '../serve/request-log.js';
import { provenanceSigningKey } from './key-flags.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';
import { mirrorFlag, requireMirror } from './mirror-flag.js';
import type { ServeFlags } from './options/serve.js';

export async function runServe(values: ServeFlags): Promise<number> {
  const port = Number(values.port ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new MirrorError('USAGE', `Invalid --port "${values.port}": expected an integer from 0 to 65535.`);
  }
  const cert = values['tls-cert'];
  const key = values['tls-key'];
  if ((cert === undefined) !== (key === undefined)) {
    throw new MirrorError('USAGE', 'HTTPS needs both --tls-cert and --tls-key.', { hint: 'Pass both files, or neither for plain HTTP.' });
  }
  const baseUrl = baseUrlFlag(values['base-url'], 'serve');
  const quiet = values.quiet === true;
  // The mirror the config's `out` names, as build and publish write it, unless --mirror says otherwise.
  const config = servedConfig(mirrorFlag(values, 'serve', 'dir'), values.config);
  const dir = config.outDir;
  const access = values.access ?? config.access;
  if (!ACCESS_MODES.includes(access as Access))
    throw new MirrorError('USAGE', `Invalid --access "${access}": expected public or private.`, { hint: 'Run modmirror serve --help.' });
  const ttl = Number(values['archive-url-ttl'] ?? 900);
  if (!Number.isInteger(ttl) || ttl < 1)
    throw new MirrorError('USAGE', `Invalid --archive-url-ttl "${values['archive-url-ttl']}": expected a whole number of seconds, 1 or more.`);
  const loginExpiry = values['login-token-expiry'] ?? '30d';
  const loginSeconds = durationSeconds(loginExpiry);
  if (loginSeconds === undefined)
    throw new MirrorError('USAGE', `Invalid --login-token-expiry "${loginExpiry}": give a number and m, h, d or w, such as 30d or 12h.`);
  const sso = ssoOptions(values);
  if (sso && access !== 'private')
    throw new MirrorError('USAGE', '--sso-issuer works with --access private: single sign-on gives people tokens, which only a private registry asks for.');
  const mib = Number(values['max-upload-mib'] ?? 64);
  if (!Number.isFinite(mib) || mib <= 0)
    throw new MirrorError('USAGE', `Invalid --max-upload-mib "${values['max-upload-mib']}": expected a positive number of MiB.`);
  const logFormat = values['log-format'] ?? 'text';
  if (!LOG_FORMATS.includes(logFormat as LogFormat))
    throw new MirrorError('USAGE', `Invalid --log-format "${logFormat}": expected text or json.`, { hint: 'Run modmirror serve --help.' });
  const metricsListen = values['metrics-listen'];
  const series = Number(values['metrics-download-series'] ?? DEFAULT_DOWNLOAD_SERIES);
  if (!Number.isInteger(series) || series < 0)
    throw new MirrorError('USAGE', `Invalid --metrics-download-series "${values['metrics-download-series']}": expected a whole number, 0 or more.`);
  const usageMib = Number(values['usage-max-mib'] ?? 64);
  if (!Number.isFinite(usageMib) || usageMib <= 0)
    throw new MirrorError('USAGE', `Invalid --usage-max-mib "${values['usage-max-mib']}": expected a positive number of MiB.`);
  const upstream = upstreamOf(values, config);
  const readOnly = values['read-only'] === true;
  // The key a signed mirror's writes (the API's, the upstream's fills) sign with: the config's provenance: key, read before serving.
  const signer = readOnly ? undefined : await provenanceSigningKey({}, 'serve', config);
  const dataDir = resolve(values.data ?? 'data');
  // A cache starts empty: with an upstream, a mirror folder that does not exist yet is made, holding nothing.
  if (upstream && !existsSync(dir)) {
    const { build } = await import('../builder/index.js');
    await build({ ...config, sources: [], providerFolders: [] });
    console.log(`started an empty mirror at ${relative(process.cwd(), dir) || '.'}/ to fill from the upstream`);
  }
  await requireMirror(dir, 'serve');
  const server = await startServer({
    ...(upstream ? { upstream: { ...upstream, limits: config.limits, providers: upstreamProviders(config, dataDir, signer) } } : {}),
    dir,
    host: values.host ?? '127.0.0.1',
    port,
    dataDir,
    tls: cert !== undefined && key !== undefined ? { cert, key } : undefined,
    baseUrl: baseUrl === '' ? undefined : baseUrl,
    access: access as Access,
    archiveUrlTtlSeconds: ttl,
    loginTokenSeconds: loginSeconds,
    sso,
    publishing: {
      cacheDir: config.cacheDir,
      imageHosts: config.imageHosts,
      moduleMeta: (address) => moduleMeta(config, address),
      maxUploadBytes: Math.floor(mib * 1024 * 1024),
      readOnly,
      ...(signer ? { signer } : {}),
    },
    log: quiet ? undefined : (line) => console.log(line),
    logFormat: logFormat as LogFormat,
    usageMaxBytes: Math.floor(usageMib * 1024 * 1024),
    metrics: { downloadSeries: series, ...(metricsListen !== undefined ? { listen: hostAndPort(metricsListen, '--metrics-listen') } : {}) },
    // Refusals are logged even with --quiet: they are the audit trail.
    audit: (line) => console.log(line),
  });
  if (server.metricsUrl) console.log(`metrics at ${server.metricsUrl}`);
  if (upstream) console.log(`filling the mirror from ${upstream.url.href} (version lists kept ${upstream.ttlSeconds} s)`);
  console.log(
    `modmirror serving ${relative(process.cwd(), dir) || '.'} at ${server.url}${access === 'private' ? ' (private: every registry request needs a token)' : ''}`,
  );
  await new Promise<void>((done) => {
    const stop = (signal: string) => {
      if (!quiet) console.log(`${signal}: finishing open requests, then stopping`);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void server.close().then(done);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  return 0;
}

/**
 * The config serve reads even with --mirror: it may set `access: private`, so a
 * config that cannot be read stops serve rather than serving the mirror
 * publicly; the message says why serve reads it.
 */
function servedConfig(dir: string | undefined, file: string | undefined) {
  try {
    return resolveMirrorConfig({ out: dir, config: file });
  } catch (error) {
    if (!(error instanceof MirrorError) || !error.code.startsWith('CONFIG')) throw error;
    const why = 'serve reads the config (even with --mirror) for its access mode, base URL and module settings, so it does not start without it';
    throw new MirrorError(error.code, error.message, {
      hint: `${error.hint ? `${error.hint} ` : ''}${why}; fix it, or pass --config FILE naming another.`,
      cause: error,
    });
  }
}

/** `HOST:PORT` (`[::1]:9100` for IPv6): both parts are needed, so a metrics port is never opened on every address by accident. */
function hostAndPort(value: string, flag: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value);
  const port = Number(match?.[3]);
  if (!match || port > 65535) {
    throw new MirrorError('USAGE', `Invalid ${flag} "${value}": expected HOST:PORT, such as 127.0.0.1:9100 or [::1]:9100.`, {
      hint: 'Name the address to listen on too: 0.0.0.0:9100 listens on every IPv4 address.',
    });
  }
  return { host: match[1] ?? match[2]!, port };
}

interface UpstreamFlags {
  url: URL;
  ttlSeconds: number;
  ca?: string[];
  token?: string;
  followCalls: boolean;
}

/** --upstream and its settings, each flag over the config's `upstream:`; the token from a variable or a file, never the command line. */
function upstreamOf(values: ServeFlags, config: ResolvedConfig): UpstreamFlags | undefined {
  const u = config.upstream;
  const url = values.upstream ?? u.url;
  const flagged = (['upstream-ttl', 'upstream-ca', 'upstream-token-env', 'upstream-token-file'] as const).find((f) => values[f] !== undefined);
  if (url === undefined) {
    if (flagged) throw new MirrorError('USAGE', `--${flagged} needs --upstream URL (or an upstream: block in the config).`);
    return undefined;
  }
  if (!/^https?:\/\/[^/]+/.test(url) || !URL.canParse(url))
    throw new MirrorError('USAGE', `Invalid --upstream "${url}": expected the upstream registry's http(s) URL, such as https://registry.terraform.io.`);
  const ttlFlag = values['upstream-ttl'];
  const ttlSeconds = ttlFlag === undefined ? (u.ttlSeconds ?? DEFAULT_UPSTREAM_TTL_SECONDS) : parseDuration(ttlFlag);
  if (ttlSeconds === undefined) throw new MirrorError('USAGE', `Invalid --upstream-ttl "${ttlFlag}": expected a duration such as 600, 90s, 10m or 1h.`);
  const caFile = values['upstream-ca'] ?? u.ca;
  const ca = caFile === undefined ? undefined : [readPem(caFile)];
  const from = new URL(url);
  const token = upstreamToken(values['upstream-token-env'] ?? u.tokenEnv, values['upstream-token-file'] ?? u.tokenFile, from);
  return { url: from, ttlSeconds, ...(ca ? { ca } : {}), ...(token !== undefined ? { token } : {}), followCalls: u.followCalls };
}

function readPem(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new MirrorError('PATH_NOT_FOUND', `Cannot read the CA file "${file}" (--upstream-ca): ${(error as Error).message}`, { cause: error });
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----'))
    throw new MirrorError('USAGE', `The CA file "${file}" (--upstream-ca) holds no PEM certificate.`, {
      hint: "Give the CA certificate that signed the upstream's certificate, as PEM (-----BEGIN CERTIFICATE-----).",
    });
  return text;
}

/**
 * The upstream's bearer token: from the variable --upstream-token-env names,
 * or the first line of --upstream-token-file, else MODMIRROR_UPSTREAM_TOKEN
 * or Terraform's own TF_TOKEN_<host> (dots as _, dashes as __).
 */
function upstreamToken(variable: string | undefined, file: string | undefined, from: URL): string | undefined {
  if (variable !== undefined && file !== undefined) throw new MirrorError('USAGE', 'Give --upstream-token-env or --upstream-token-file, not both.');
  if (variable !== undefined) {
    const value = process.env[variable];
    if (!value)
      throw new MirrorError('USAGE', `--upstream-token-env names ${variable}, which is not set.`, {
        hint: `Export ${variable} with the upstream's token, or leave --upstream-token-env out.`,
      });
    return value;
  }
  if (file !== undefined) {
    let value: string;
    try {
      value = readFileSync(file, 'utf8').split('\n', 1)[0]!.trim();
    } catch (error) {
      throw new MirrorError('PATH_NOT_FOUND', `Cannot read the token file "${file}" (--upstream-token-file): ${(error as Error).message}`, { cause: error });
    }
    if (value === '') throw new MirrorError('USAGE', `The token file "${file}" (--upstream-token-file) is empty.`);
    return value;
  }
  const terraformName = `TF_TOKEN_${from.hostname.replace(/-/g, '__').replace(/\./g, '_')}`;
  return process.env['MODMIRROR_UPSTREAM_TOKEN'] || process.env[terraformName] || undefined;
}

/** The provider packages the cache fetches: kept in the data folder, for the config's platforms, published into the mirror a version at a time. */
function upstreamProviders(config: ResolvedConfig, dataDir: string, signer: PrivateSigningKey | undefined) {
  const into = join(dataDir, UPSTREAM_PROVIDERS_DIR);
  return { into, platforms: config.platforms, path: config.providersPath, commit: takeInProviders(config, into, signer) };
}

/** The --sso-* flags: undefined without --sso-issuer; every other problem a usage error naming the flag. */
function ssoOptions(values: ServeFlags): SsoOptions | undefined {
  const issuer = values['sso-issuer'];
  const others = (Object.keys(values) as (keyof ServeFlags)[]).filter((k) => k.startsWith('sso-') && k !== 'sso-issuer' && values[k] !== undefined);
  if (issuer === undefined) {
    if (others.length > 0) throw new MirrorError('USAGE', `--${others[0]} needs --sso-issuer.`, { hint: 'Run modmirror serve --help.' });
    return undefined;
  }
  if (!URL.canParse(issuer)) throw new MirrorError('USAGE', `Invalid --sso-issuer "${issuer}": expected a URL.`);
  const clientId = values['sso-client-id'];
  if (!clientId) throw new MirrorError('USAGE', '--sso-issuer needs --sso-client-id.');
  const file = values['sso-client-secret-file'];
  const env = values['sso-client-secret-env'];
  if ((file === undefined) === (env === undefined))
    throw new MirrorError('USAGE', '--sso-issuer needs the client secret: --sso-client-secret-file FILE or --sso-client-secret-env VAR (one of them).');
  let clientSecret: string | undefined;
  try {
    clientSecret = env !== undefined ? process.env[env] : readFileSync(file!, 'utf8').split(/\r?\n/, 1)[0];
  } catch (error) {
    throw new MirrorError('USAGE', `Cannot read --sso-client-secret-file "${file}": ${(error as Error).message}`);
  }
  if (!clientSecret)
    throw new MirrorError(
      'USAGE',
      env !== undefined ? `The environment variable ${env} (--sso-client-secret-env) is not set.` : `--sso-client-secret-file "${file}" is empty.`,
    );
  const teams: NonNullable<SsoOptions['teams']> = {};
  for (const entry of values['sso-team'] ?? []) {
    const match = /^(.+)=([^/=]+)\/([^/=]+)$/.exec(entry);
    if (!match) throw new MirrorError('USAGE', `Invalid --sso-team "${entry}": expected GROUP=ORG/TEAM.`);
    teams[match[1]!] = { organization: match[2]!, team: match[3]! };
  }
  return {
    issuer,
    clientId,
    clientSecret,
    groupsClaim: values['sso-groups-claim'] ?? 'groups',
    teams,
    createUsers: values['sso-create-users'] === true,
  };
}
