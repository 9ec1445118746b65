// What a write sees of the modules of the mirror it is writing, for the
// documents that list several of them (the listings' first pages, the browse
// page's pages of rows): every module, when a build holds them all; or the
// modules the write rewrote, over the states of the rest as the staged mirror
// has them, read only where a listing needs them. So a publish reads the
// states of the modules it shows, never the whole mirror.

import type { ModuleSummary } from '../protocol/documents.js';
import { addressKey, LIST_DEFAULT_LIMIT } from '../protocol/paths.js';
import { moduleOfStateFile, moduleStateFile, moduleStatesIn, readModuleStateFile, stateNamespacesIn, type ModuleRecord } from './manifest.js';
import type { Staging } from './staging.js';

export interface ModulesView {
  /** Namespaces with at least one module state, sorted. */
  namespaces(): string[];
  /** The modules of a namespace (with a state, listed or not), sorted. */
  modulesIn(namespace: string): string[];
  /** What listings show of a module as the write leaves it; undefined when it has no state. */
  listing(key: string): ModuleListing | undefined;
  /** True for a module this write rewrote (every module, for a build). */
  rewritten(key: string): boolean;
}

/** What a listing (a registry listing, a browse row) shows of a module: its latest version's summary and how many versions it has. */
export interface ModuleListing {
  latest: ModuleSummary | undefined;
  versions: number;
  /** The registry modules its latest version calls (the browse page's "Used by"). */
  calls: string[] | undefined;
}

/** What listings keep of a module's state or record. */
export function listingOf(module: { latest?: ModuleSummary; versions: readonly unknown[]; calls?: string[] }): ModuleListing {
  return { latest: module.latest, versions: module.versions.length, calls: module.calls };
}

/** A module's summary as listings show it: undefined for a module every version of which was removed. */
export function listedSummary(view: ModulesView, key: string): ModuleSummary | undefined {
  const listing = view.listing(key);
  return listing && listing.versions > 0 ? listing.latest : undefined;
}

/** The summaries a listing's first page shows, and one more (so it knows there is a next page), from `namespaces` in order. */
export function firstListed(view: ModulesView, namespaces: string[]): ModuleSummary[] {
  const found: ModuleSummary[] = [];
  for (const namespace of namespaces) {
    for (const key of view.modulesIn(namespace)) {
      const summary = listedSummary(view, key);
      if (summary) found.push(summary);
      if (found.length > LIST_DEFAULT_LIMIT) return found;
    }
  }
  return found;
}

/** Every module of the mirror is in `sorted` (a build, or a write that read them all). */
export function recordsView(sorted: ModuleRecord[]): ModulesView {
  const byKey = new Map(sorted.map((r) => [addressKey(r.address), r]));
  const byNamespace = new Map<string, string[]>();
  for (const key of byKey.keys()) {
    const namespace = key.slice(0, key.indexOf('/'));
    const keys = byNamespace.get(namespace);
    if (keys) keys.push(key);
    else byNamespace.set(namespace, [key]);
  }
  return {
    namespaces: () => [...byNamespace.keys()].sort(),
    modulesIn: (namespace) => [...(byNamespace.get(namespace) ?? [])].sort(),
    listing: (key) => {
      const record = byKey.get(key);
      return record && listingOf(record);
    },
    rewritten: (key) => byKey.has(key),
  };
}

/**
 * The staged mirror: `rewritten` as this write made them, every other module
 * from its state file where the staging (a whole new tree, or a change over
 * the live mirror at `liveDir`) has it.
 */
export function stagedView(staging: Staging & { changed?: string[] }, liveDir: string, rewritten: ModuleRecord[]): ModulesView {
  const records = recordsView(rewritten);
  const own = new Set(rewritten.map((r) => addressKey(r.address)));
  // moduleStatesIn lists a namespace's folder again only when it changed.
  const listed = (dir: string, namespace: string) => moduleStatesIn(dir, namespace);
  const added = () => (staging.changed ?? []).map(moduleOfStateFile).filter((key) => key !== undefined);
  // What listings show of each state read, not the state: a build's listings and pages read every module's.
  const read = new Map<string, ModuleListing | undefined>();
  return {
    namespaces: () =>
      [...new Set([...stateNamespacesIn(staging.root ?? liveDir), ...added().map((k) => k.slice(0, k.indexOf('/'))), ...records.namespaces()])].sort(),
    modulesIn: (namespace) =>
      [
        ...new Set([...listed(staging.root ?? liveDir, namespace), ...added().filter((k) => k.startsWith(`${namespace}/`)), ...records.modulesIn(namespace)]),
      ].sort(),
    listing: (key) => {
      if (own.has(key)) return records.listing(key);
      if (!read.has(key)) {
        const state = readModuleStateFile(staging.at(moduleStateFile(key)), key);
        read.set(key, state && listingOf(state));
      }
      return read.get(key);
    },
    // A module whose every version this write removed has no record, but its state changed: its rows go too.
    rewritten: (key) => own.has(key) || staging.changed?.includes(moduleStateFile(key)) === true,
  };
}
