// `modmirror hosting nginx`: a complete nginx `server` block that serves a
// built mirror with no modmirror process, the way Terraform and OpenTofu need
// it (README "Static hosts"):
// - files without an extension (versions, download, summary) are JSON;
// - a protocol path that is a folder answers its index.json, without a redirect;
// - the download path answers 200 with its JSON body (what OpenTofu reads) and
//   X-Terraform-Get / X-Service-Get (what Terraform reads), derived from the
//   request path by one rule, so no per-version configuration is needed;
// - archives are cached long, everything else briefly; CORS for a browse page;
// - search, later listing pages and listing filters, which need
//   `modmirror serve`, answer a clear JSON error instead of a wrong first page.

import { CACHE_LONG, CACHE_SHORT, CORS_HEADERS, DOWNLOAD_HEADERS, JSON_TYPE, RELEASE_SIGNATURE_TYPE, RELEASE_SUMS_TYPE } from '../protocol/headers.js';
import { basePathOf, PROVENANCE_SUFFIX } from '../protocol/paths.js';
import { escapeRegExp, FILE_TYPES, LISTING_PATH, locationTemplate, NEEDS_SERVE, type HostingOptions } from './rules.js';

/** nginx variables captured from the download path; the names avoid clashes with a site's own. */
const VARS = { namespace: '$mm_namespace', name: '$mm_name', provider: '$mm_provider', version: '$mm_version' };

const DOWNLOAD_PATH = '^/v1/modules/(?<mm_namespace>[^/]+)/(?<mm_name>[^/]+)/(?<mm_provider>[^/]+)/(?<mm_version>[^/]+)/download$';

export function nginxServerBlock(options: HostingOptions): string {
  const prefix = basePathOf(options.baseUrl);
  const location = locationTemplate(options.baseUrl, VARS);
  const listen = options.listen.host === undefined ? String(options.listen.port) : `${options.listen.host}:${options.listen.port}`;
  const cors = Object.entries(CORS_HEADERS).map(([name, value]) => `add_header ${name} "${value}" always;`);
  const json = (message: string) => `'${JSON.stringify({ errors: [message] })}\\n'`;
  const lines = [
    `# nginx server block for the modmirror mirror in ${options.dir}`,
    '# (written by `modmirror hosting nginx`). Put it inside the http block, e.g. as',
    '# /etc/nginx/conf.d/modmirror.conf, then `nginx -t` and reload.',
    '# Terraform looks hosts up over HTTPS only: add `listen 443 ssl;` with',
    '# ssl_certificate and ssl_certificate_key, or give clients a CLI config `host` block.',
    '# Static files are public by nature: whoever reaches this host reads every module.',
    '# For per-organization access use `modmirror serve --access private`, or put the host',
    '# behind authentication of your own (README "Private registry").',
    'server {',
    `    listen ${listen};`,
    '    server_name _;',
    `    root "${options.dir}";`,
    '',
    '    # Protocol paths without an extension (versions, download, downloads/summary)',
    '    # are JSON. The types are set here so the block does not depend on mime.types.',
    '    types {',
    ...FILE_TYPES.map(([ext, type]) => `        ${type} ${ext};`),
    '    }',
    `    default_type ${JSON_TYPE};`,
    '    charset off;',
    '    gzip on;',
    `    gzip_types ${JSON_TYPE};`,
    '    # Terraform gives each request 10 s; keep connections for the next one.',
    '    keepalive_timeout 30s;',
    '',
    ...(prefix === '/'
      ? []
      : [
          `    # The mirror is published under ${prefix} (its baseUrl); discovery stays at the host's root.`,
          `    rewrite "^${escapeRegExp(prefix.slice(0, -1))}(/.*)$" $1 break;`,
          '',
        ]),
    '    # Registry errors are JSON (spec 7.2), also for a path that does not exist.',
    '    error_page 404 @modmirror_not_found;',
    '    location @modmirror_not_found {',
    ...indent(8, cors),
    `        return 404 ${json(NEEDS_SERVE.notFound)};`,
    '    }',
    '',
    '    location = /v1/modules/search {',
    ...indent(8, cors),
    `        return 501 ${json(NEEDS_SERVE.search)};`,
    '    }',
    '',
    '    # One rule for every version: the archive sits beside `download`, named',
    '    # <name>-<provider>-<version>.tar.gz. 200 with the JSON body for OpenTofu,',
    '    # the headers for Terraform (only on success, so a 404 carries none).',
    `    location ~ "${DOWNLOAD_PATH}" {`,
    ...DOWNLOAD_HEADERS.map((h) => `        add_header ${h} "${location}";`),
    `        add_header Cache-Control "${CACHE_SHORT}";`,
    ...indent(8, cors),
    '        try_files $uri =404;',
    '    }',
    '',
    "    # Module archives, and the network mirror's provider packages (providers/HOSTNAME/NAMESPACE/TYPE/*.zip),",
    "    # never gzipped (gzip_types is JSON only): Terraform checks a zip's bytes against zh:.",
    '    # Its index.json and VERSION.json files are JSON by their extension (location /).',
    '    location ~ "\\.(zip|tar\\.gz)$" {',
    `        add_header Cache-Control "${CACHE_LONG}";`,
    ...indent(8, cors),
    '        try_files $uri =404;',
    '    }',
    '',
    "    # Each version's provenance beside its archive: JSON, written once as the archive is.",
    `    location ~ "${PROVENANCE_SUFFIX.replace(/\./g, '\\.')}$" {`,
    `        default_type ${JSON_TYPE};`,
    `        add_header Cache-Control "${CACHE_LONG}";`,
    ...indent(8, cors),
    '        try_files $uri =404;',
    '    }',
    '',
    "    # In-house providers (providers.v1): each release's SHA256SUMS and its binary signature,",
    '    # the bytes that were signed, never gzipped. Their versions and download documents are',
    "    # files without an extension, JSON like the modules' (location /).",
    '    location ~ "_SHA256SUMS$" {',
    `        default_type "${RELEASE_SUMS_TYPE}";`,
    `        add_header Cache-Control "${CACHE_LONG}";`,
    ...indent(8, cors),
    '        try_files $uri =404;',
    '    }',
    '    location ~ "_SHA256SUMS\\.sig$" {',
    `        default_type ${RELEASE_SIGNATURE_TYPE};`,
    `        add_header Cache-Control "${CACHE_LONG}";`,
    ...indent(8, cors),
    '        try_files $uri =404;',
    '    }',
    '',
    '    # Only the first, unfiltered page of each listing is a file: refuse a later page',
    '    # or a filter rather than answer the first page again (a client would loop).',
    `    location ~ "${LISTING_PATH}" {`,
    '        if ($args ~ "(^|&)(offset=0*[1-9]|provider=[^&]|namespace=[^&]|verified=true)") {',
    `            return 501 ${json(NEEDS_SERVE.laterPage)};`,
    '        }',
    `        add_header Cache-Control "${CACHE_SHORT}";`,
    ...indent(8, cors),
    '        try_files $uri $uri/index.json =404;',
    '    }',
    '',
    '    location / {',
    `        add_header Cache-Control "${CACHE_SHORT}";`,
    ...indent(8, cors),
    '        # A protocol path that is a folder is its index.json, with or without the',
    '        # slash; the root is the browse page, index.html.',
    '        try_files $uri $uri/index.json $uri/index.html =404;',
    '    }',
    '}',
  ];
  return `${lines.join('\n')}\n`;
}

function indent(spaces: number, lines: string[]): string[] {
  return lines.map((line) => `${' '.repeat(spaces)}${line}`);
}
