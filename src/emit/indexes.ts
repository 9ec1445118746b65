// What every write of a mirror ends with, from every module's record: the
// registry's indexes and manifest (emit/), the browse page (browse/) and the
// static hosts' `_headers` (hosting/), all from the records sorted once.
// build and publish both call it; it sits above the three so none of them
// imports another.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { emitBrowseSite } from '../browse/index.js';
import { emitIndexes, type IndexOptions } from './index.js';
import type { Staging } from '../mirror/staging.js';
import { emitHeadersFile, HEADERS_FILE } from '../hosting/headers.js';
import {
  moduleStateFile,
  moduleStatesIn,
  readManifest,
  readModuleStateFile,
  recentVersions,
  sortRecords,
  type ManifestVersion,
  type ModuleRecord,
  type RecentVersion,
} from '../mirror/manifest.js';
import { readRecords } from '../mirror/read.js';
import { recordsView, stagedView } from '../mirror/view.js';
import { addressKey, parseAddressKey } from '../protocol/paths.js';
import type { ModuleAddress } from '../types.js';
import { providersIndexOf } from '../providers/emit.js';
import { DEFAULT_PROVIDERS_PATH, PROVIDERS_INDEX_FILE } from '../protocol/providers.js';

export interface MirrorIndexOptions extends Omit<IndexOptions, 'recent' | 'stagedStates'> {
  imageHosts: string[];
  /**
   * A write of some modules (`only` names their namespace/name pairs): the live mirror, whose other
   * modules' states the listings read where they show them, and its list of recent versions.
   */
  live?: { dir: string; recent: RecentVersion[] | undefined };
  /**
   * A whole build that wrote each module's state as the module finished (`keys`), and kept of the versions
   * only the most recent: the listings, browse pages and _headers are written from the staged states,
   * one at a time, so the build never holds every version at once.
   */
  staged?: { keys: ReadonlySet<string>; recent: RecentVersion[] };
}

/**
 * `records` are every module for a build; for a write of some modules
 * (`options.live`), the modules it read, rewritten or not.
 */
export async function writeMirrorIndexes(staging: Staging & { changed?: string[] }, records: ModuleRecord[], options: MirrorIndexOptions): Promise<void> {
  const sorted = sortRecords(records);
  const providers = providersIndexOf(options.providers?.path ?? DEFAULT_PROVIDERS_PATH, options.providers?.entries ?? {});
  const partial = options.live !== undefined && options.only !== undefined;
  const { staged } = options;
  if (staged && (partial || staging.root === undefined)) throw new Error('writeMirrorIndexes: staged states are a whole build in a folder of its own');
  const view = partial ? stagedView(staging, options.live!.dir, sorted) : staged ? stagedView(staging, staging.root!, []) : recordsView(sorted);
  const recent = staged ? staged.recent : recentVersions(sorted, partial ? (options.live!.recent ?? []) : []);
  await emitIndexes(staging, sorted, { ...options, view, recent, ...(partial ? {} : { only: undefined }), ...(staged ? { stagedStates: staged.keys } : {}) });
  // Compact: the server and the browse page read it rather than the manifest.
  await staging.write(PROVIDERS_INDEX_FILE, `${JSON.stringify(providers)}\n`);
  // The browse page's pages are cut from every module the mirror keeps a state for, those whose every version
  // was removed included (their rows are none), as verify and later writes cut them: a whole write's are in its staging.
  const browseView = !partial && !staged && staging.root !== undefined ? stagedView(staging, staging.root, sorted) : view;
  await emitBrowseSite(staging, browseView, {
    baseUrl: options.baseUrl,
    imageHosts: options.imageHosts,
    recent,
    ...(partial ? { namespaces: [...new Set(options.only!.map((o) => o.namespace))] } : {}),
  });
  // Only for a mirror that has one (hosts that read _headers need it; `modmirror hosting headers` starts it):
  // one rule per version, so it is written from every module's state. Without `live` (verify --repair, a first
  // write into a mirror an older modmirror wrote) the write holds every record, and the file is where it stages.
  if (existsSync(options.live ? join(options.live.dir, HEADERS_FILE) : staging.at(HEADERS_FILE))) {
    const records = partial ? everyRecord(options.live!.dir, sorted) : staged ? stagedRecords(staging.root!) : sorted;
    await emitHeadersFile(staging, records, options.baseUrl, providers);
  }
}

/** Each module's state staged in `root`, in address order, read as it is asked for. */
function* stagedRecords(root: string): Generator<{ address: ModuleAddress; versions: ManifestVersion[] }> {
  for (const key of moduleStatesIn(root)) {
    const state = readModuleStateFile(join(root, moduleStateFile(key)), key);
    if (state && state.versions.length > 0) yield { address: parseAddressKey(key), versions: state.versions };
  }
}

/** The live mirror's records with `rewritten` in place of theirs, in address order. */
function everyRecord(dir: string, rewritten: ModuleRecord[]): ModuleRecord[] {
  const byKey = new Map(readRecords(dir, readManifest(dir)!).map((r) => [addressKey(r.address), r]));
  for (const r of rewritten) byKey.set(addressKey(r.address), r);
  return sortRecords([...byKey.values()]);
}
