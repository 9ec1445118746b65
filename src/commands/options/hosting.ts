import { command, type Flags, type FlagValues } from '../args.js';
import { OLD_DIR } from './shared.js';

export const HOSTING_OPTIONS = {
  mirror: { type: 'string', value: 'DIR', help: `the built mirror the host serves (default: the config's "out", else ./dist)` },
  ...OLD_DIR,
  listen: { type: 'string', value: 'ADDR:PORT', help: 'where the host listens (default: 80, every address)' },
  'base-url': { type: 'string', value: 'URL', help: 'absolute download locations under URL (default: what the mirror was built with)' },
  config: { type: 'string', value: 'FILE', help: 'config whose baseUrl to use when the mirror is not built yet' },
  json: {
    type: 'boolean',
    help: 'print {"host", "mirror", "listen", "baseUrl", "config" (the text), "warnings"};\nfor headers, {"host", "mirror", "file", "versions", "changed"}',
  },
} as const satisfies Flags;

export type HostingFlags = FlagValues<typeof HOSTING_OPTIONS>;

export const hosting = command({
  summary:
    "Print a host configuration (nginx server block, Caddyfile site, CloudFront function) that serves a mirror with no modmirror process, or write the mirror's _headers",
  usage: 'modmirror hosting nginx|caddy|cloudfront|headers [--mirror DIR] [--listen [ADDR:]PORT] [--base-url URL] [--config FILE] [--json]',
  arguments: [
    ['nginx|caddy', 'the host to configure'],
    [
      'cloudfront',
      'the CloudFront viewer-response function that adds the download header in front of a bucket filled by modmirror push (--listen does not apply)',
    ],
    [
      'headers',
      'write _headers into the mirror, for hosts that read one (Netlify, Cloudflare Pages); every later write into the mirror keeps it up to date (--listen, --base-url do not apply)',
    ],
  ],
  options: HOSTING_OPTIONS,
  positionals: {
    names: ['nginx|caddy|cloudfront|headers'],
    required: 1,
    missing: 'Name the host: modmirror hosting nginx, caddy or cloudfront, or modmirror hosting headers.',
  },
  run: async (values, positionals) => (await import('../hosting.js')).runHosting(values, positionals),
});
