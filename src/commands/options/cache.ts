import { command, type Flags, type FlagValues } from '../args.js';

export const CACHE_OPTIONS = {
  mirror: { type: 'string', value: 'DIR', help: `the mirror serve --upstream fills (default: the config's "out", else ./dist)` },
  data: { type: 'string', value: 'DIR', help: 'the data folder serve --upstream records in (default: data)' },
  json: {
    type: 'boolean',
    help: 'print {"mirror", "data", "modules": [{module, version, sha256, archive, fetched, upstream_sha256, last_used}], "providers": [{provider, version, platform, sha256, archive, fetched, upstream_sha256, last_used}]}',
  },
} as const satisfies Flags;

export type CacheFlags = FlagValues<typeof CACHE_OPTIONS>;

export const cache = command({
  summary: 'What a mirror that fills itself (serve --upstream) holds: each version, when fetched and last used, its sha256',
  usage: 'modmirror cache list [--mirror DIR] [--data DIR] [--json]',
  options: CACHE_OPTIONS,
  notes: `Every module version and provider package of the mirror is listed: fetched is null for one it got
another way (publish, build, unbundle), last_used null for one not downloaded since serve --upstream
began recording.`,
  positionals: { names: ['list'], required: 1 },
  run: async (values, positionals) => (await import('../cache.js')).runCache(values, positionals),
});
