// The dependency closure: every registry module a mirrored version calls
// (root, `modules/*`, `examples/*`), resolved against the upstream with
// Terraform's constraint rules and mirrored in turn, until nothing new is
// called. With the air-gap CLI config (`host "registry.terraform.io"`
// pointing `modules.v1` at the mirror), `terraform init` asks the mirror for
// every such call, so each must be there. What cannot be mirrored (git,
// URLs, other hosts), cycles, and calls the upstream cannot satisfy are
// recorded; none of them stops the rest.

import { join } from 'node:path';
import { messageOf } from '../errors.js';
import { addressKey } from '../protocol/paths.js';
import type { ModuleAddress, ProviderRequirement } from '../types.js';
import { packageCalls, type FolderCalls } from './calls.js';
import { parseConstraint } from '../protocol/constraint.js';
import type { HttpClient } from './http.js';
import { parseModuleSource } from '../protocol/source-address.js';
import type { DependencyOptions, NotMirrored, SyncFailure, SyncResult } from './types.js';
import { isMissingModule, listVersions } from './upstream.js';
import { compareVersionsDesc, validVersion } from '../version-order.js';

/** A module wanted at some versions: named on the command line, or called by a mirrored version. */
export interface Need {
  address: ModuleAddress;
  /** As written; '' means any release. */
  constraint: string;
  matches: (version: string) => boolean;
  /** Every matching version (what a `--module` asks for), or only the newest (what `terraform init` picks). */
  pick: 'newest' | 'every';
  calledFrom?: string;
}

export interface Walk {
  http: HttpClient;
  modules: URL;
  into: string;
  options: DependencyOptions;
  /** Hosts whose registry addresses this upstream answers for (normalized). */
  hosts: Set<string>;
  result: SyncResult;
  log: (line: string) => void;
  /** Puts versions into the module folder; gives those now there. */
  store: (need: Need, versions: string[]) => Promise<string[]>;
  /** Upstream version lists, asked once per module per run. */
  listings: Map<string, Promise<string[]>>;
  /** `NS/NAME/PROVIDER VERSION` already stored, found present, or failed in this run: never tried twice. */
  stored: Set<string>;
  /** `NS/NAME/PROVIDER VERSION` whose calls were (or are being) followed. */
  followed: Set<string>;
  /** Told of each provider a followed version requires (its required_providers), with the version as `calledFrom`. */
  requires: (requirement: ProviderRequirement, calledFrom: string) => void;
}

/** Mirrors the versions `need` asks for, then, unless turned off, what they call. */
export async function mirrorNeed(walk: Walk, need: Need, path: string[] = []): Promise<void> {
  const versions = await chooseVersions(walk, need);
  if (versions.length === 0) return;
  const stored = await walk.store(need, versions);
  if (!walk.options.follow) return;
  for (const version of stored) await followVersion(walk, need.address, version, path);
}

/** Mirrors the registry calls of a folder (a configuration, or a version's package); reports the others. */
export async function mirrorCalls(walk: Walk, calls: FolderCalls, label: (folder: string) => string, path: string[] = []): Promise<void> {
  for (const { found, why } of calls.unreadable) {
    report(walk, {
      source: found.call.source,
      version: found.call.version,
      calledFrom: callLabel(label(found.folder), found.call.name),
      reason: 'local',
      message: `local path: ${why}`,
    });
  }
  for (const { call, folder } of calls.calls) {
    const calledFrom = callLabel(label(folder), call.name);
    const notMirrored = (reason: NotMirrored['reason'], message: string) =>
      report(walk, { source: call.source, version: call.version, calledFrom, reason, message });
    const source = parseModuleSource(call.source);
    if (source.kind === 'local') {
      notMirrored('local', LOCAL_CALL_FOLLOWED);
    } else if (source.kind === 'remote') {
      notMirrored(
        source.getter,
        `not a registry source: terraform init fetches it from ${source.getter === 'git' ? 'its git repository' : 'where it says'}, not from the mirror`,
      );
    } else if (!walk.hosts.has(source.host)) {
      notMirrored('other-host', `other host: ${source.host} is not a registry this upstream stands in for (${[...walk.hosts].join(', ')})`);
    } else {
      let matches: (version: string) => boolean;
      try {
        matches = parseConstraint(call.version);
      } catch (error) {
        fail(walk, { module: addressKey(source.address), calledFrom, message: `${calledFrom}: ${messageOf(error)}` });
        continue;
      }
      await mirrorNeed(walk, { address: source.address, constraint: call.version, matches, pick: walk.options.pick, calledFrom }, path);
    }
  }
}

async function followVersion(walk: Walk, address: ModuleAddress, version: string, path: string[]): Promise<void> {
  const node = `${addressKey(address)} ${version}`;
  const at = path.indexOf(node);
  if (at !== -1) {
    const cycle = [...path.slice(at), node];
    walk.result.cycles.push(cycle);
    walk.log(`note: cycle ${cycle.join(' -> ')}: each version is mirrored once`);
    return;
  }
  if (walk.followed.has(node)) return;
  walk.followed.add(node);
  let calls: FolderCalls;
  try {
    calls = await packageCalls(join(walk.into, address.namespace, address.name, address.provider, version));
  } catch (error) {
    fail(walk, {
      module: addressKey(address),
      version,
      message: `${node}: could not read its module calls, so what it calls is not mirrored: ${messageOf(error)}`,
    });
    return;
  }
  const label = (folder: string) => (folder === '' ? node : `${node} ${folder}`);
  for (const p of calls.providers) walk.requires(p, `${label(p.folder)}: required_providers`);
  await mirrorCalls(walk, calls, label, [...path, node]);
}

/** The upstream versions `need` matches: all, or the newest; none (and a failure recorded) when there are none. */
async function chooseVersions(walk: Walk, need: Need): Promise<string[]> {
  const key = addressKey(need.address);
  const from = need.calledFrom === undefined ? '' : ` (called from ${need.calledFrom})`;
  let listed: string[];
  try {
    let listing = walk.listings.get(key);
    if (!listing) walk.listings.set(key, (listing = listVersions(walk.http, walk.modules, need.address)));
    listed = await listing;
  } catch (error) {
    const message = `${messageOf(error)}${isMissingModule(error) ? ': the upstream has no such module' : ''}${from}`;
    fail(walk, { module: key, calledFrom: need.calledFrom, message });
    return [];
  }
  // Folder names are the normalised version, which also keeps `..` and such out of paths.
  const matching = [...new Set(listed.map(validVersion).filter((v): v is string => v !== null && need.matches(v)))].sort((a, b) => compareVersionsDesc(b, a));
  if (matching.length === 0) {
    const shown = listed.slice(0, 10).join(', ') || 'none';
    const wanted = need.constraint === '' ? 'no release version' : `no upstream version matches "${need.constraint}"`;
    fail(walk, { module: key, calledFrom: need.calledFrom, message: `${key}: ${wanted} (upstream has: ${shown}${listed.length > 10 ? ', ...' : ''})${from}` });
    return [];
  }
  return need.pick === 'newest' ? matching.slice(-1) : matching;
}

/** A call to a folder of the caller's own: nothing to mirror and nothing wrong (sync's summary counts these, --verbose lists them). */
export const LOCAL_CALL_FOLLOWED = 'local path: part of the caller, its calls are followed';

function callLabel(folder: string, name: string): string {
  return `${folder}: module "${name}"`;
}

function report(walk: Walk, entry: NotMirrored): void {
  walk.result.notMirrored.push(entry);
}

export function fail(walk: Pick<Walk, 'result' | 'log'>, failure: SyncFailure): void {
  walk.result.failures.push(failure);
  walk.log(`error: ${failure.message}`);
}
