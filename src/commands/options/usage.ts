import { command, type Flags, type FlagValues } from '../args.js';
import { OLD_DIR } from './shared.js';

export const USAGE_OPTIONS = {
  since: { type: 'string', value: 'DAY', help: 'only downloads on that day (UTC) or later' },
  module: { type: 'string', value: 'ADDR', help: "only that module's versions" },
  deprecated: { type: 'boolean', help: 'only versions the mirror marks deprecated: who still downloads them' },
  json: {
    type: 'boolean',
    help: 'print {"filter", "usage": [{module, version, organization, team, user, downloads, firstDay, lastDay, deprecation}]}',
  },
  data: { type: 'string', value: 'DIR', help: 'the data folder serve --access private records usage in (default: data)' },
  mirror: { type: 'string', value: 'DIR', help: `the mirror whose deprecations to show (default: the config's "out", else ./dist)` },
  ...OLD_DIR,
  'from-log': {
    type: 'string',
    value: 'FILE',
    help: "report from a static host's nginx access log (combined format) instead, by client network (IPv4 /24, IPv6 /48)",
  },
} as const satisfies Flags;

export type UsageFlags = FlagValues<typeof USAGE_OPTIONS>;

export const usage = command({
  summary: 'Private registry: who downloaded which module version, and which deprecated versions are still used',
  usage: `modmirror usage [--since YYYY-MM-DD] [--module NS/NAME/PROVIDER] [--deprecated] [--json] [--data DIR] [--mirror DIR]
                [--from-log FILE]`,
  options: USAGE_OPTIONS,
  run: async (values) => (await import('../usage.js')).runUsage(values),
});
