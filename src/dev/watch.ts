// What `modmirror dev` watches, and how a burst of changes becomes one
// rebuild. An editor's save is several events (a temporary file written,
// renamed over the old one, its mode set), a `git checkout` hundreds: each
// burst is waited out until the files have been quiet for a moment, then
// rebuilt once; changes made while a rebuild runs make one more after it.

import { existsSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import type { ResolvedConfig } from '../config/index.js';

/** How long the files must be quiet before a rebuild starts: longer than the gaps within one save or checkout. */
export const QUIET_MS = 120;

/** A folder to watch: all of it (`recursive`), or only the entries `names` lists. */
interface Target {
  dir: string;
  recursive: boolean;
  names?: Set<string>;
}

/**
 * The folders a config's sources and the config file itself live in. A
 * folder source is watched whole; a local git source by its tags and
 * branches (refs and packed-refs), since dev builds what is tagged, not the
 * working tree; the config file by its folder, as editors replace it with a
 * rename.
 */
export function watchTargets(config: ResolvedConfig): Target[] {
  const targets: Target[] = [];
  if (config.configFile) targets.push({ dir: dirname(config.configFile), recursive: false, names: new Set([basename(config.configFile)]) });
  for (const source of config.sources) {
    if (source.kind === 'folder') targets.push({ dir: source.dir, recursive: true });
    else if (!source.remote) {
      const gitDir = isDirectory(join(source.repo, '.git')) ? join(source.repo, '.git') : source.repo;
      targets.push({ dir: gitDir, recursive: false, names: new Set(['packed-refs']) });
      if (existsSync(join(gitDir, 'refs'))) targets.push({ dir: join(gitDir, 'refs'), recursive: true });
    }
  }
  return targets;
}

export interface Watching {
  close(): void;
}

/**
 * Calls `changed` with the paths that changed, once per burst: when no event
 * came for QUIET_MS. Paths under `ignored` (the preview mirror and the build
 * cache, when a source folder holds them) are no change.
 */
export function watchSources(targets: Target[], ignored: string[], changed: (paths: string[]) => void): Watching {
  const watchers: FSWatcher[] = [];
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const inIgnored = (path: string) => ignored.some((dir) => path === dir || path.startsWith(dir + sep));
  const event = (target: Target, name: string | null) => {
    // Linux names the entry; a platform that does not is taken as a change to the folder.
    const path = name === null ? target.dir : join(target.dir, name);
    if (target.names && (name === null || !target.names.has(name))) return;
    if (inIgnored(path)) return;
    pending.add(path);
    clearTimeout(timer);
    timer = setTimeout(() => {
      const paths = [...pending].sort();
      pending = new Set();
      changed(paths);
    }, QUIET_MS);
  };
  for (const target of targets) {
    if (!isDirectory(target.dir)) continue;
    const watcher = watch(target.dir, { recursive: target.recursive, persistent: true }, (_type, name) => event(target, name));
    // A watched folder removed (a source deleted) ends its watcher: the next config reload watches again.
    watcher.on('error', () => watcher.close());
    watchers.push(watcher);
  }
  return {
    close() {
      clearTimeout(timer);
      for (const w of watchers) w.close();
    },
  };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
