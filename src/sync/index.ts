// `modmirror sync`, on the connected side: copies module versions from an
// upstream registry into a module folder laid out
// <namespace>/<name>/<provider>/<version>/, which the next build serves.
// A version already in the folder is never fetched again, so a run that
// stopped (or failed on some versions) is finished by running it again.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { messageOf } from '../errors.js';
import { addressKey } from '../protocol/paths.js';
import type { ModuleSpec } from './constraint.js';
import { fetchLocation, GitRepos } from './fetch.js';
import { HttpClient } from './http.js';
import { parseLocation } from './location.js';
import { removeAbandoned, storeVersion } from './store.js';
import { discoverModules, downloadLocation, listVersions, publishedAt } from './upstream.js';

export interface SyncPlan {
  /** The upstream registry; discovery is read from its host. */
  from: URL;
  /** Absolute path of the module folder to fill. */
  into: string;
  modules: ModuleSpec[];
  token?: string;
}

export interface SyncFailure {
  module: string;
  version?: string;
  message: string;
}

export interface SyncResult {
  fetched: { module: string; version: string; files: number }[];
  /** Matching versions the folder already had. */
  present: number;
  failures: SyncFailure[];
}

export interface SyncOptions {
  log: (line: string) => void;
  /** Retry tuning; the defaults suit real registries. */
  maxAttempts?: number;
  baseDelayMs?: number;
}

export async function sync(plan: SyncPlan, options: SyncOptions): Promise<SyncResult> {
  const http = new HttpClient({ token: plan.token, tokenOrigin: plan.from.origin, log: options.log, maxAttempts: options.maxAttempts, baseDelayMs: options.baseDelayMs });
  const repos = new GitRepos();
  const result: SyncResult = { fetched: [], present: 0, failures: [] };
  try {
    const modules = await discoverModules(http, plan.from);
    for (const spec of plan.modules) await syncModule(spec, modules, plan.into, { http, repos, log: options.log, result });
  } finally {
    await http.close();
    await repos.close();
  }
  return result;
}

interface Context {
  http: HttpClient;
  repos: GitRepos;
  log: (line: string) => void;
  result: SyncResult;
}

async function syncModule(spec: ModuleSpec, modules: URL, into: string, ctx: Context): Promise<void> {
  const key = addressKey(spec.address);
  const folder = join(into, spec.address.namespace, spec.address.name, spec.address.provider);
  await removeAbandoned(folder);
  let listed: string[];
  try {
    listed = await listVersions(ctx.http, modules, spec.address);
  } catch (error) {
    fail(ctx, { module: key, message: messageOf(error) });
    return;
  }
  // Folder names are the normalised version, which also keeps `..` and such out of paths.
  const matching = [...new Set(listed.map((v) => semver.valid(v)).filter((v): v is string => v !== null && spec.matches(v)))].sort(semver.compare);
  if (matching.length === 0) {
    const shown = listed.slice(0, 10).join(', ') || 'none';
    fail(ctx, { module: key, message: `${key}: no upstream version matches "${spec.constraint}" (upstream has: ${shown}${listed.length > 10 ? ', ...' : ''})` });
    return;
  }
  const missing = matching.filter((v) => !existsSync(join(folder, v)));
  ctx.result.present += matching.length - missing.length;
  const constraint = spec.constraint === '' ? '' : ` matching "${spec.constraint}"`;
  ctx.log(`${key}: ${matching.length} version(s)${constraint}, ${matching.length - missing.length} already here, ${missing.length} to fetch`);
  for (const [i, version] of missing.entries()) {
    const what = `${key} ${version}`;
    try {
      const { location, base } = await downloadLocation(ctx.http, modules, spec.address, version);
      const parsed = parseLocation(location, base);
      const date = await publishedAt(ctx.http, modules, spec.address, version);
      const stored = await storeVersion(join(folder, version), (scratch) => fetchLocation(scratch, parsed, ctx.http, ctx.repos, what), date);
      if (stored.outcome === 'present') ctx.result.present++;
      else ctx.result.fetched.push({ module: key, version, files: stored.files });
      ctx.log(`[${i + 1}/${missing.length}] ${what}: ${stored.outcome === 'present' ? 'already stored by another sync' : `fetched ${stored.files} file(s)`}`);
    } catch (error) {
      // One version failing (a file system error included) leaves the others to go on.
      fail(ctx, { module: key, version, message: messageOf(error) });
    }
  }
}

function fail(ctx: Context, failure: SyncFailure): void {
  ctx.result.failures.push(failure);
  ctx.log(`error: ${failure.message}`);
}
