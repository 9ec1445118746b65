import { command, type Flags, type FlagValues } from '../args.js';
import { OLD_OUT, PASSPHRASE_OPTIONS } from './shared.js';

export const BUILD_OPTIONS = {
  config: { type: 'string', value: 'FILE', help: 'config file (default: ./mirror.config.yaml)' },
  modules: { type: 'string', value: 'DIR', help: 'build a folder laid out as <namespace>/<name>/<provider>/<version>/, no config needed' },
  mirror: { type: 'string', value: 'DIR', help: `the mirror to write (default: the config's "out", else ./dist)` },
  ...OLD_OUT,
  'base-url': { type: 'string', value: 'URL', help: 'absolute URL the mirror is served at (default: relative download locations)' },
  clean: { type: 'boolean', help: 'ignore the cache and rebuild every version (the result is the same, byte for byte)' },
  strict: {
    type: 'boolean',
    help: 'leave out a version with a file that cannot be read, and exit 1 (default: mirror it with the documentation that could be read, and warn naming file:line:column)',
  },
  prune: {
    type: 'boolean',
    help: 'remove the published versions the sources no longer have (default: keep them); each removal is recorded in the manifest',
  },
  replace: {
    type: 'string',
    multiple: true,
    value: 'NS/NAME/PROVIDER@VERSION',
    help: "take the sources' new content for that published version (a moved tag) instead of failing it; recorded in the manifest (repeatable)",
  },
  'sign-key': {
    type: 'string',
    value: 'FILE',
    help: "sign each new version's provenance (ARCHIVE.intoto.jsonl) with this armored OpenPGP private key; its passphrase from --passphrase-env VAR or --passphrase-file FILE, never the command line (default: the config's provenance: key, else unsigned provenance)",
  },
  ...PASSPHRASE_OPTIONS,
  json: { type: 'boolean', help: 'print one JSON summary and no progress' },
} as const satisfies Flags;

export type BuildFlags = FlagValues<typeof BUILD_OPTIONS>;

export const build = command({
  summary: 'Build the static registry from the configured module sources',
  usage: `modmirror build [--config FILE] [--modules DIR] [--mirror DIR] [--base-url URL] [--clean] [--strict]
                 [--prune] [--replace NS/NAME/PROVIDER@VERSION ...] [--json]`,
  options: BUILD_OPTIONS,
  notes: `Published versions are immutable: a version whose source now has other content fails (exit 1) and
keeps its published archive; versions the sources no longer have stay until --prune.`,
  run: async (values) => (await import('../build.js')).runBuild(values),
});
