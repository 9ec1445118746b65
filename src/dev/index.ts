// `modmirror dev`: a preview of the sources as they are being written. It
// builds them into a mirror of its own (a temporary folder unless given one;
// never the config's `out`, never inside a source), serves it as `serve`
// does, and watches the sources and the config: each burst of changes is one
// rebuild through the incremental build (unchanged versions come from its
// cache; a change within version folders rewrites those versions alone,
// versions.ts), after which every open browse page shows the result.
//
// The preview takes the sources as the truth: a version whose files changed
// replaces the one built before (on the preview's record, never a published
// mirror's), and one that no longer parses fails alone, so the last good
// build of it stays served while its error is shown on its page.

import { relative } from 'node:path';
import { build, type BuildResult } from '../builder/index.js';
import type { ResolvedConfig } from '../config/index.js';
import { MirrorError } from '../errors.js';
import { startServer, type RunningServer } from '../serve/index.js';
import { homeOf } from '../mirror/home.js';
import { DevEvents, type DevError } from './events.js';
import { changedVersions, rebuildVersions } from './versions.js';
import { watchSources, watchTargets, type Watching } from './watch.js';

export interface DevOptions {
  /** Reads the config (again, after it changed), with the preview mirror as its `out`. */
  loadConfig: () => ResolvedConfig;
  host: string;
  port: number;
  /** The data folder the server keeps its counts in (the preview's own). */
  dataDir: string;
  /** Where each build's report and each error's `file:line:column: message` go. */
  log: (line: string) => void;
}

export interface DevServer {
  url: string;
  server: RunningServer;
  close(): Promise<void>;
}

/** Builds the preview, serves it and watches its sources until closed. */
export async function startDev(options: DevOptions): Promise<DevServer> {
  let config = options.loadConfig();
  const first = await build(config, DEV_BUILD);
  let builds = 1;
  let errors = report(first, config, options.log, 'built');
  const events = new DevEvents(homeOf(config.outDir));
  events.send({ build: builds, errors });
  const server = await startServer({
    dir: config.outDir,
    host: options.host,
    port: options.port,
    dataDir: options.dataDir,
    // The preview is rebuilt from the sources: the API's writes into it would be lost at the next save.
    publishing: { cacheDir: config.cacheDir, imageHosts: config.imageHosts, readOnly: true },
    intercept: events.intercept,
  });

  let watching: Watching | undefined;
  const watchConfig = () => {
    watching?.close();
    watching = watchSources(watchTargets(config), [config.outDir, config.cacheDir], (paths) => void rebuild(paths));
  };
  watchConfig();

  // One build at a time; changes that come while one runs make one more after it.
  let running: Promise<void> | undefined;
  let again: string[] | undefined;
  const rebuild = (paths: string[]): Promise<void> => {
    if (running) {
      again = [...(again ?? []), ...paths];
      return running;
    }
    running = once(paths).finally(() => {
      running = undefined;
      if (again) {
        const next = again;
        again = undefined;
        void rebuild(next);
      }
    });
    return running;
  };
  const once = async (paths: string[]) => {
    const configChanged = config.configFile !== undefined && paths.includes(config.configFile);
    builds++;
    const hadErrors = errors.length > 0;
    const what = `rebuilt after ${count(paths.length, 'change')}`;
    try {
      if (configChanged) {
        config = options.loadConfig();
        watchConfig();
      }
      const versions = configChanged ? undefined : changedVersions(config, paths);
      if (versions) {
        const started = performance.now();
        const rebuilt = await rebuildVersions(config, versions);
        options.log(`${what} in ${((performance.now() - started) / 1000).toFixed(2)} s: ${rebuilt.summary}`);
        const done = new Set(rebuilt.done);
        errors = [...errors.filter((e) => e.module === undefined || !done.has(`${e.module}@${e.version}`)), ...rebuilt.errors];
        printErrors(rebuilt.errors, config, options.log);
      } else errors = report(await build(config, DEV_BUILD), config, options.log, what);
      if (hadErrors && errors.length === 0) options.log('fixed: every version builds again');
    } catch (error) {
      // The config or a source cannot be read at all: the last good build stays served.
      const lines = messageLines(error);
      options.log(`error: ${lines.join('\n')}`);
      errors = [{ lines }];
    }
    events.send({ build: builds, errors });
  };

  return {
    url: server.url,
    server,
    close: async () => {
      watching?.close();
      await running;
      events.close();
      await server.close();
    },
  };
}

/**
 * A preview's build: a version whose source changed replaces the one built
 * before, one the sources no longer give goes, and one that does not parse
 * fails alone (the one built before it stays).
 */
const DEV_BUILD = { strict: true, prune: true, replaceAll: true } as const;

/** Prints a build's outcome and its errors, and returns the errors as the page shows them. */
function report(result: BuildResult, config: ResolvedConfig, log: (line: string) => void, what: string): DevError[] {
  const seconds = `${result.seconds.toFixed(2)} s`;
  if (result.upToDate) log(`${what} in ${seconds}: nothing changed`);
  else {
    const cached = result.cached > 0 ? ` (${result.cached} from the cache)` : '';
    log(`${what} in ${seconds}: ${count(result.built.versions, 'version')} of ${count(result.built.modules, 'module')} built${cached}`);
  }
  const errors: DevError[] = result.errors.map((problem) => ({
    module: problem.module,
    version: problem.version,
    where: problem.where,
    ...(problem.syntax ? { lines: problem.syntax, syntax: true } : { lines: problem.message.split('\n') }),
  }));
  printErrors(errors, config, log);
  for (const warning of result.warnings) log(`warning: ${warning}`);
  return errors;
}

/** Each file that does not parse as `file:line:column: message`, where an editor can open it; other errors as they are. */
function printErrors(errors: DevError[], config: ResolvedConfig, log: (line: string) => void): void {
  for (const error of errors) {
    if (!error.syntax) {
      log(`error: ${error.lines.join('\n')}`);
      continue;
    }
    const at = error.where === undefined ? '' : `${shown(error.where, config)}/`;
    for (const line of error.lines) log(`${at}${line}`);
  }
}

/** A folder version's path from the working folder (a git version's label, `repo@tag`, as it is). */
function shown(where: string, config: ResolvedConfig): string {
  const inFolder = config.sources.some((s) => s.kind === 'folder' && where.startsWith(s.dir));
  return inFolder ? relative(process.cwd(), where) || '.' : where;
}

function messageLines(error: unknown): string[] {
  if (error instanceof MirrorError) return [...error.message.split('\n'), ...(error.hint ? [`  hint: ${error.hint}`] : [])];
  return [error instanceof Error ? error.message : String(error)];
}

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
