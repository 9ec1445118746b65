// `modmirror hosting caddy`: the Caddyfile site block equivalent to the nginx
// one (./nginx.ts): JSON for extension-less files, folders answer their
// index.json, the download headers derived from the path by one rule, cache
// lifetimes, CORS, and JSON errors for what needs `modmirror serve`.

import {
  CACHE_LONG,
  CACHE_SHORT,
  CORS_HEADERS,
  DOWNLOAD_HEADERS,
  JSON_TYPE,
  PROVIDER_ZIP_TYPE,
  RELEASE_SIGNATURE_TYPE,
  RELEASE_SUMS_TYPE,
} from '../protocol/headers.js';
import { basePathOf, PROVENANCE_SUFFIX } from '../protocol/paths.js';
import { escapeRegExp, LISTING_PATH, locationTemplate, NEEDS_SERVE, type HostingOptions } from './rules.js';

/** Caddy placeholders for the groups of the `download` path_regexp matcher below. */
const VARS = { namespace: '{re.download.1}', name: '{re.download.2}', provider: '{re.download.3}', version: '{re.download.4}' };

export function caddySiteBlock(options: HostingOptions): string {
  const prefix = basePathOf(options.baseUrl);
  const location = locationTemplate(options.baseUrl, VARS);
  // `header` runs before `uri strip_prefix`, so its matchers see the path with the base path's prefix.
  const optionalPrefix = prefix === '/' ? '' : `(?:${escapeRegExp(prefix.slice(0, -1))})?`;
  const listing = LISTING_PATH.replace('^', `^${optionalPrefix}`);
  // Backquotes are Caddyfile's raw strings: the JSON needs no escaping.
  const json = (message: string) => `\`${JSON.stringify({ errors: [message] })}\``;
  const lines = [
    `# Caddyfile site block for the modmirror mirror in ${options.dir}`,
    '# (written by `modmirror hosting caddy`). With a host name as the site address',
    '# instead of http://:PORT, Caddy serves HTTPS with its own certificates, which',
    "# Terraform's discovery needs.",
    '# Static files are public by nature: whoever reaches this host reads every module.',
    '# For per-organization access use `modmirror serve --access private` (README "Private registry").',
    `http://:${options.listen.port} {`,
    ...(options.listen.host === undefined ? [] : [`\tbind ${options.listen.host.replace(/^\[|\]$/g, '')}`]),
    `\troot * "${options.dir}"`,
    '\tencode gzip',
    ...(prefix === '/'
      ? []
      : [`\t# The mirror is published under ${prefix} (its baseUrl); discovery stays at the host's root.`, `\turi strip_prefix ${prefix.slice(0, -1)}`]),
    '',
    ...Object.entries(CORS_HEADERS).map(([name, value]) => `\theader ${name} "${value}"`),
    '\t# Protocol paths without an extension (versions, download, downloads/summary, folders) are JSON.',
    '\t@no_extension {',
    '\t\tpath_regexp ^(.*/)?[^/.]*$',
    '\t\tnot path /',
    '\t}',
    `\theader @no_extension Content-Type ${JSON_TYPE}`,
    '\t@archive path *.tar.gz *.zip',
    `\theader @archive Cache-Control "${CACHE_LONG}"`,
    '\t# Provider packages of the network mirror; `encode` leaves application/zip alone, so never a Content-Encoding.',
    '\t@provider_zip path *.zip',
    `\theader @provider_zip Content-Type ${PROVIDER_ZIP_TYPE}`,
    "\t# Each version's provenance beside its archive: JSON, written once as the archive is.",
    `\t@provenance path *${PROVENANCE_SUFFIX}`,
    `\theader @provenance Content-Type ${JSON_TYPE}`,
    `\theader @provenance Cache-Control "${CACHE_LONG}"`,
    `\t@not_archive not path *.tar.gz *.zip *_SHA256SUMS *_SHA256SUMS.sig *${PROVENANCE_SUFFIX}`,
    `\theader @not_archive Cache-Control "${CACHE_SHORT}"`,
    "\t# In-house providers (providers.v1): each release's SHA256SUMS and its binary signature, as signed.",
    '\t@release_sums path *_SHA256SUMS',
    `\theader @release_sums Content-Type "${RELEASE_SUMS_TYPE}"`,
    '\t@release_signature path *_SHA256SUMS.sig',
    `\theader @release_signature Content-Type ${RELEASE_SIGNATURE_TYPE}`,
    '\t@release_files path *_SHA256SUMS *_SHA256SUMS.sig',
    `\theader @release_files Cache-Control "${CACHE_LONG}"`,
    '',
    '\t# One rule for every version: the archive sits beside `download`, named',
    '\t# <name>-<provider>-<version>.tar.gz. 200 with the JSON body for OpenTofu, the headers for Terraform.',
    `\t@download path_regexp download ^${optionalPrefix}/v1/modules/([^/]+)/([^/]+)/([^/]+)/([^/]+)/download$`,
    ...DOWNLOAD_HEADERS.map((h) => `\theader @download ${h} "${location}"`),
    '',
    '\t@search path /v1/modules/search',
    `\trespond @search ${json(NEEDS_SERVE.search)} 501`,
    '\t# Only the first, unfiltered page of each listing is a file: refuse a later page or a filter',
    '\t# rather than answer the first page again (a client would loop).',
    "\t# (The request's original path: try_files below has rewritten it by the time `respond` runs.)",
    `\t@later_page expression \`{http.request.orig_uri.path}.matches("${listing}") && ({query.provider} != "" || {query.namespace} != "" || {query.verified} == "true" || {query.offset}.matches("^0*[1-9]"))\``,
    `\trespond @later_page ${json(NEEDS_SERVE.laterPage)} 501`,
    '',
    '\t# A protocol path that is a folder is its index.json, with or without the slash; the root is the browse page.',
    '\ttry_files {path} {path}/index.json {path}/index.html',
    '\tfile_server',
    '',
    '\t# Registry errors are JSON (spec 7.2).',
    '\thandle_errors {',
    `\t\theader Content-Type ${JSON_TYPE}`,
    ...DOWNLOAD_HEADERS.map((h) => `\t\theader -${h}`),
    '\t\t@not_found expression {err.status_code} == 404',
    `\t\trespond @not_found ${json(NEEDS_SERVE.notFound)} 404`,
    '\t\trespond `{"errors":["{err.status_text}"]}` {err.status_code}',
    '\t}',
    '}',
  ];
  return `${lines.join('\n')}\n`;
}
