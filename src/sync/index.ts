// `modmirror sync`, on the connected side: copies module versions from an
// upstream registry into a module folder laid out
// <namespace>/<name>/<provider>/<version>/, which the next build serves,
// together with the modules they call (closure.ts). A version already in the
// folder is never fetched again, so a run that stopped (or failed on some
// versions) is finished by running it again.

import { existsSync } from 'node:fs';
import { join, posix } from 'node:path';
import { messageOf } from '../errors.js';
import { addressKey } from '../protocol/paths.js';
import { configurationCalls, shownPath, type FolderCalls } from './calls.js';
import { fail, mirrorCalls, mirrorNeed, type Need, type Walk } from './closure.js';
import { fetchLocation, GitRepos } from './fetch.js';
import { HttpClient } from './http.js';
import { parseLocation } from './location.js';
import { servedHosts } from '../protocol/source-address.js';
import { removeAbandoned, storeVersion } from './store.js';
import { emptySyncResult, type SyncPlan, type SyncResult } from './types.js';
import { readDiscovery, serviceUrl, downloadLocation, publishedAt } from './upstream.js';
import { readLockFile, type LockedProvider } from './lock-file.js';
import { mirrorProviders, type ProviderNeed } from './providers.js';
import { lockedNeed, requirementNeed } from './provider-needs.js';
import type { ProviderRequirement } from '../types.js';
import { providerKey } from '../protocol/providers.js';

export type { DependencyOptions, SyncFailure, SyncPlan, SyncResult } from './types.js';

export interface SyncOptions {
  log: (line: string) => void;
  /** Retry tuning; the defaults suit real registries. */
  maxAttempts?: number;
  baseDelayMs?: number;
}

export async function sync(plan: SyncPlan, options: SyncOptions): Promise<SyncResult> {
  // Configuration folders and their lock files are read first: a mistake in one fails before anything is fetched.
  const configurations: { dir: string; calls: FolderCalls; locked: Map<string, LockedProvider> }[] = [];
  for (const dir of plan.configurations) configurations.push({ dir, calls: await configurationCalls(dir), locked: readLockFile(dir) });

  const http = new HttpClient({
    token: plan.token,
    tokenOrigin: plan.from.origin,
    log: options.log,
    maxAttempts: options.maxAttempts,
    baseDelayMs: options.baseDelayMs,
  });
  const repos = new GitRepos();
  const result = emptySyncResult();
  const hosts = servedHosts(plan.from, plan.dependencies.standsInFor);
  const providerNeeds: ProviderNeed[] = plan.providers.map((spec) => ({ ...spec, pick: 'every' }));
  const requires = (p: ProviderRequirement, calledFrom: string, configuration?: string) => {
    result.providers.push({ name: p.name, source: p.source, version: p.version, calledFrom });
    const need = requirementNeed(p, calledFrom, hosts, result, options.log, configuration);
    if (need) providerNeeds.push(need);
  };
  try {
    const discovery = await readDiscovery(http, plan.from);
    // Asked for only when modules are wanted: a provider-only upstream has no modules.v1.
    let modules: URL | undefined;
    const walk: Walk = {
      http,
      get modules() {
        return (modules ??= serviceUrl(discovery, 'modules.v1', plan.from));
      },
      // Only read when modules are mirrored, which the command gives a folder for.
      into: plan.into ?? '',
      options: plan.dependencies,
      hosts,
      result,
      log: options.log,
      store: (need, versions) => storeVersions(need, versions, { http, repos, walk }),
      listings: new Map(),
      stored: new Set(),
      followed: new Set(),
      requires,
    };
    for (const spec of plan.modules) await mirrorNeed(walk, { ...spec, pick: 'every' });
    for (const { dir, calls, locked } of configurations) {
      const shown = shownPath(dir);
      const label = (folder: string) => posix.join(shown, folder);
      for (const p of calls.providers) requires(p, `${label(p.folder)}: required_providers`, dir);
      for (const [key, lock] of locked) {
        const need = lockedNeed(key, lock, posix.join(shown, '.terraform.lock.hcl'), hosts, result, dir);
        if (need) providerNeeds.push(need);
      }
      await mirrorCalls(walk, calls, label);
    }
    if (providerNeeds.length > 0 && plan.providersInto !== undefined) {
      let providers: URL | undefined;
      const service = () => (providers ??= serviceUrl(discovery, 'providers.v1', plan.from));
      // A modules-only upstream cannot answer what modules require: reported, like a call to another host.
      // Providers named outright still fail there.
      const wanted =
        typeof discovery.services['providers.v1'] === 'string'
          ? providerNeeds
          : providerNeeds.filter((n) => n.calledFrom === undefined || !reportNoService(n, result));
      await mirrorProviders({ http, service, into: plan.providersInto, platforms: plan.platforms, result, log: options.log }, wanted);
    }
  } finally {
    await http.close();
    await repos.close();
  }
  return result;
}

function reportNoService(need: ProviderNeed, result: SyncResult): true {
  result.notMirrored.push({
    source: providerKey(need.address),
    version: need.constraint,
    calledFrom: need.calledFrom!,
    reason: 'no-providers-service',
    message: 'the upstream serves no providers (its discovery names no providers.v1): sync them from a provider registry with another --from',
  });
  return true;
}

interface StoreContext {
  http: HttpClient;
  repos: GitRepos;
  walk: Walk;
}

/** Fetches the versions the folder lacks, one by one; gives every version that is now there. */
async function storeVersions(need: Need, versions: string[], { http, repos, walk }: StoreContext): Promise<string[]> {
  const key = addressKey(need.address);
  const folder = join(walk.into, need.address.namespace, need.address.name, need.address.provider);
  await removeAbandoned(folder);
  const record = (version: string) => ({ module: key, version, ...(need.calledFrom === undefined ? {} : { calledFrom: need.calledFrom }) });
  // A version reached again (another caller, a cycle) was handled the first time, a failure included.
  const fresh = versions.filter((v) => !walk.stored.has(`${key} ${v}`));
  for (const v of fresh) walk.stored.add(`${key} ${v}`);
  const missing = fresh.filter((v) => !existsSync(join(folder, v)));
  for (const v of fresh) if (!missing.includes(v)) walk.result.present.push(record(v));
  if (fresh.length > 0) {
    const which =
      need.pick === 'newest' ? `newest version matching "${need.constraint}"` : `version(s)${need.constraint === '' ? '' : ` matching "${need.constraint}"`}`;
    const why = need.calledFrom === undefined ? '' : ` (called from ${need.calledFrom})`;
    walk.log(`${key}: ${fresh.length} ${which}${why}, ${fresh.length - missing.length} already here, ${missing.length} to fetch`);
  }
  for (const [i, version] of missing.entries()) {
    const what = `${key} ${version}`;
    try {
      const { location, base } = await downloadLocation(http, walk.modules, need.address, version);
      const parsed = parseLocation(location, base);
      const date = await publishedAt(http, walk.modules, need.address, version);
      const stored = await storeVersion(join(folder, version), async (scratch) => (await fetchLocation(scratch, parsed, http, repos, what)).root, date);
      if (stored.outcome === 'present') walk.result.present.push(record(version));
      else walk.result.fetched.push({ ...record(version), files: stored.files });
      walk.log(`[${i + 1}/${missing.length}] ${what}: ${stored.outcome === 'present' ? 'already stored by another sync' : `fetched ${stored.files} file(s)`}`);
    } catch (error) {
      // One version failing (a file system error included) leaves the others to go on.
      fail(walk, { module: key, version, message: messageOf(error) });
    }
  }
  return versions.filter((v) => existsSync(join(folder, v)));
}
