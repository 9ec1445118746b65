import { command, type Flags, type FlagValues } from '../args.js';

export const DEV_OPTIONS = {
  config: { type: 'string', value: 'FILE', help: 'config file whose sources to preview (default: ./mirror.config.yaml)' },
  modules: { type: 'string', value: 'DIR', help: 'preview a folder laid out as <namespace>/<name>/<provider>/<version>/, no config needed' },
  mirror: {
    type: 'string',
    value: 'DIR',
    help: `the preview mirror (default: a temporary folder, removed on exit); never the config's "out" nor a folder inside a source`,
  },
  host: { type: 'string', value: 'HOST', help: 'address to listen on (default: 127.0.0.1)' },
  port: { type: 'string', value: 'PORT', help: 'port (default: 8080; 0 picks a free one)' },
} as const satisfies Flags;

export type DevFlags = FlagValues<typeof DEV_OPTIONS>;

export const dev = command({
  summary: 'Preview the sources as you write them: build, serve, and rebuild on every save',
  usage: 'modmirror dev [--config FILE] [--modules DIR] [--mirror DIR] [--host 127.0.0.1] [--port 8080]',
  options: DEV_OPTIONS,
  notes: `Serves what modmirror serve serves, and rebuilds after each change to the sources or the config (a
burst of changes, such as a git checkout, is one rebuild): open browse pages show the result without a
reload. A version whose files do not parse keeps its last good build, and its file:line:column errors
are printed and shown on its page until fixed. Local git sources are rebuilt when their tags change.`,
  run: async (values) => (await import('../dev.js')).runDev(values),
});
