// `modmirror serve --upstream URL`: the registry the mirror fills itself
// from. A version the mirror lacks is fetched the way `sync` fetches it
// (discovery, the download location, the archive with its bounds, retries)
// and handed to the server's one write (`commit`: publish), so it becomes an
// ordinary published version under the ledger; from then on the mirror's
// bytes are the answer, whatever the upstream says later. Version lists are
// kept for a TTL; misses and failures for a short while, so a broken
// upstream is not asked on every request. Each piece of work is done once
// for all the requests waiting on it (flight.ts). Once a version is filled,
// the registry modules it calls are filled too, before the client asks
// (followCalls).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MirrorError, messageOf } from '../errors.js';
import { addressKey } from '../protocol/paths.js';
import { describeFolder } from '../scan/folder.js';
import { fetchLocation, GitRepos } from '../sync/fetch.js';
import { HttpClient, UpstreamStatusError } from '../sync/http.js';
import { parseLocation } from '../sync/location.js';
import { listProviderRegistryVersions, listProviderVersions, type ListedProviderVersion } from '../sync/provider-upstream.js';
import { downloadLocation, isMissingModule, listVersions, readDiscovery, serviceUrl, versionDetail, type Discovery } from '../sync/upstream.js';
import { providerKey, type ProviderAddress } from '../protocol/providers.js';
import { parseModuleSource, PUBLIC_REGISTRY_HOSTS, servedHosts } from '../protocol/source-address.js';
import { parseConstraint } from '../protocol/constraint.js';
import { packageCalls, type FolderCalls } from '../sync/calls.js';
import { latestVersion, validVersion } from '../version-order.js';
import type { ModuleAddress, VersionSource } from '../types.js';
import { SingleFlight } from './flight.js';
import { gatewayError, Memory } from './memory.js';
import { fetchProviderVersion } from './providers.js';
import { appendFill, isModuleFill, readFills } from './record.js';

export type { ListedProviderVersion };

export interface UpstreamOptions {
  /** The upstream registry; discovery is read from its host. */
  url: URL;
  /** How long a version list (and the upstream's discovery) is used before the upstream is asked again. */
  ttlSeconds: number;
  /** More CA certificates (PEM) trusted for the upstream. */
  ca?: string[];
  /** Sent as a bearer token to the upstream's own origin only. */
  token?: string;
  /** What the cache does and what goes wrong, one line each. */
  log: (line: string) => void;
  /**
   * Publishes a fetched version through the mirror's one write; gives the
   * published archive's sha256. Throws VERSION_CONFLICT when the mirror
   * already holds the version with other content.
   */
  commit: (source: VersionSource) => Promise<{ sha256: string }>;
  /** The sha256 of the archive the mirror holds for a version, if it holds it. */
  heldSha256: (address: ModuleAddress, version: string) => string | undefined;
  /** The file each cached version's upstream archive digest is recorded in (record.ts). */
  recordFile: string;
  /** Filling the provider network mirror too: provider packages are fetched and checked as sync does, into `into`. */
  providers?: {
    /** The provider folder the packages are kept in (`terraform providers mirror` layout). */
    into: string;
    /** The network mirror's folder in the mirror's tree (the config's providersPath). */
    path: string;
    platforms: string[];
    /** Makes the mirror's network mirror take in what `into` holds, through the mirror's one write. */
    commit: (address: ProviderAddress, version: string) => Promise<void>;
    /** The sha256 of each package (by platform) the mirror holds for a provider version. */
    held: (key: string, version: string) => Map<string, string>;
  };
  /**
   * Fill the registry modules a filled version's root calls (and the folders it calls by local path), each at
   * the newest version its constraint allows, as `terraform init` will ask for them next; default true.
   */
  followCalls?: boolean;
  /** Whether the upstream may be asked for a module (private mode: never for an organization's namespace); default every module. */
  asks?: (address: ModuleAddress) => boolean;
  /** Retry tuning (tests): a client is waiting, so fewer and shorter than sync's. */
  maxAttempts?: number;
  baseDelayMs?: number;
  /** How long to wait for the upstream's answer to begin, or for more of a body it stopped sending (default 10 s, Terraform's own registry timeout). */
  timeoutMs?: number;
  /**
   * How long a version list the mirror can answer from waits for the
   * upstream (default 3 s); the upstream's answer, when it comes, is kept
   * for the next request.
   */
  patienceMs?: number;
}

export type VersionList<T = string> = { kind: 'listed'; versions: T[]; asked: boolean } | { kind: 'missing' } | { kind: 'failed'; error: MirrorError };

/** What a fill did: fetched and published now, or refused because the mirror already held other bytes (kept). */
export interface Filled {
  outcome: 'fetched' | 'kept';
  sha256: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_PATIENCE_MS = 3_000;
/** How long a 404 (a module or version the upstream does not have) is believed, at most. */
const MISS_SECONDS = 60;
/** How long an upstream failure is believed before the upstream is tried again, at most. */
const FAILURE_SECONDS = 10;
/** Codes of a fetched version that cannot be published as it is: the upstream's content, not the server, is at fault. */
const UNCACHEABLE = new Set(['HCL_SYNTAX', 'VERSION_READ_FAILED', 'VERSION_INVALID', 'FILE_TOO_LARGE', 'VERSION_TOO_LARGE']);

export class UpstreamCache {
  private readonly http: HttpClient;
  private readonly flights = new SingleFlight();
  private readonly lists = new Memory<VersionList<unknown>>();
  /** Versions the upstream answered 404 for, or failed to give. */
  private readonly versionFailures = new Memory<MirrorError>();
  private discovered: { discovery: Discovery; until: number } | undefined;
  /** Calls being filled ahead (followCalls); close() waits for the fill each is in, and no other starts. */
  private readonly following = new Set<Promise<void>>();
  private closed = false;
  private closing: Promise<void> | undefined;
  private readonly ttlMs: number;

  constructor(private readonly options: UpstreamOptions) {
    this.http = new HttpClient({
      log: (line) => options.log(`upstream: ${line}`),
      maxAttempts: options.maxAttempts ?? 2,
      baseDelayMs: options.baseDelayMs ?? 250,
      headersTimeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      // An upstream that stops sending mid-body fails as one that never answers does; a slow one that keeps sending does not.
      bodyTimeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      sameOriginDocuments: true,
      ...(options.token !== undefined ? { token: options.token, tokenOrigin: options.url.origin } : {}),
      ...(options.ca ? { ca: options.ca } : {}),
    });
    this.ttlMs = options.ttlSeconds * 1000;
  }

  get origin(): string {
    return this.options.url.origin;
  }

  /**
   * The upstream's version list of a module: the one kept while it is fresh,
   * else asked for once for all callers. `held`: the mirror can answer
   * without it, so a slow upstream is waited for only a moment.
   */
  versions(address: ModuleAddress, held = false): Promise<VersionList> {
    const key = addressKey(address);
    return this.list(key, key, held, async () => listVersions(this.http, await this.modules(), address));
  }

  /** The upstream's version list of a provider (providers.v1), kept as a module's is; missing when the upstream serves no providers. */
  providerVersions(address: ProviderAddress, held = false): Promise<VersionList> {
    const name = providerKey(address);
    return this.list(`provider ${name}`, name, held, async () => {
      const service = await this.service('providers.v1');
      return service && listProviderVersions(this.http, service, address, name);
    });
  }

  /** The upstream's providers.v1 versions document of a provider, each version with its protocols and platforms; kept as the list above. */
  providerRegistryVersions(address: ProviderAddress, held = false): Promise<VersionList<ListedProviderVersion>> {
    const name = providerKey(address);
    return this.list(`providers.v1 ${name}`, name, held, async () => {
      const service = await this.service('providers.v1');
      return service && listProviderRegistryVersions(this.http, service, address, name);
    });
  }

  /** A version list as kept, or asked for; undefined from `ask` (or a 404) is a miss. */
  private list<T>(key: string, name: string, held: boolean, ask: () => Promise<T[] | undefined>): Promise<VersionList<T>> {
    const known = this.lists.get(key) as VersionList<T> | undefined;
    if (known) return Promise.resolve(known.kind === 'listed' ? { ...known, asked: false } : known);
    const asked = this.flights.run(`versions ${key}`, async (): Promise<VersionList<T>> => {
      const kept = (list: VersionList<T>, ms: number) => this.lists.set(key, list, ms) as VersionList<T>;
      try {
        const versions = await ask();
        if (versions === undefined) return kept({ kind: 'missing' }, this.brief(MISS_SECONDS));
        return kept({ kind: 'listed', versions, asked: true }, this.ttlMs);
      } catch (error) {
        if (isMissingModule(error)) return kept({ kind: 'missing' }, this.brief(MISS_SECONDS));
        const failed = gatewayError(error, `the versions of ${name}`, this.origin);
        this.options.log(`upstream: ${failed.message}; answering from what the mirror holds for ${Math.round(this.brief(FAILURE_SECONDS) / 1000)} s`);
        return kept({ kind: 'failed', error: failed }, this.brief(FAILURE_SECONDS));
      }
    });
    return held ? this.atMost(asked, `the versions of ${name}`) : asked;
  }

  /** Fetches a version the mirror lacks and publishes it; throws NOT_FOUND, BAD_GATEWAY or GATEWAY_TIMEOUT when it cannot. */
  fill(address: ModuleAddress, version: string): Promise<Filled> {
    return this.once(`version ${addressKey(address)} ${version}`, () => this.fetchAndCommit(address, version));
  }

  /** `work` once for all callers; its miss or upstream failure is answered again, without asking, for a short while. */
  private once<T>(key: string, work: () => Promise<T>): Promise<T> {
    const failed = this.versionFailures.get(key);
    if (failed) return Promise.reject(failed);
    return this.flights.run(key, async () => {
      try {
        return await work();
      } catch (error) {
        if (error instanceof MirrorError && (error.code === 'NOT_FOUND' || error.code === 'BAD_GATEWAY' || error.code === 'GATEWAY_TIMEOUT')) {
          this.versionFailures.set(key, error, this.brief(error.code === 'NOT_FOUND' ? MISS_SECONDS : FAILURE_SECONDS));
          if (error.code !== 'NOT_FOUND') this.options.log(`upstream: ${error.message}`);
        }
        throw error;
      }
    });
  }

  /** The list, or a failure when it takes longer than the patience allows (the asking goes on, and its answer is kept). */
  private atMost<T>(list: Promise<VersionList<T>>, what: string): Promise<VersionList<T>> {
    const ms = this.options.patienceMs ?? DEFAULT_PATIENCE_MS;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<VersionList<T>>((resolve) => {
      timer = setTimeout(() => {
        const error = new MirrorError('GATEWAY_TIMEOUT', `The upstream ${this.origin} did not give ${what} within ${ms / 1000} s`);
        this.options.log(`upstream: ${error.message}; answering from what the mirror holds`);
        resolve({ kind: 'failed', error });
      }, ms);
    });
    return Promise.race([list, late]).finally(() => clearTimeout(timer));
  }

  /** Once; a second call waits for the first. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      await Promise.allSettled(this.following);
      await this.http.close();
    })();
    return this.closing;
  }

  private brief(seconds: number): number {
    return Math.min(this.ttlMs, seconds * 1000);
  }

  /** The upstream's discovery, read again after the TTL. */
  private async discovery(): Promise<Discovery> {
    if (this.discovered && Date.now() < this.discovered.until) return this.discovered.discovery;
    return this.flights.run('discovery', async () => {
      const read = await readDiscovery(this.http, this.options.url);
      this.discovered = { discovery: read, until: Date.now() + this.ttlMs };
      return read;
    });
  }

  /** The upstream's modules.v1 or providers.v1 URL; undefined for providers.v1 when it names none (a modules-only registry). */
  private async service(name: 'modules.v1' | 'providers.v1'): Promise<URL | undefined> {
    const discovery = await this.discovery();
    if (name === 'providers.v1' && typeof discovery.services[name] !== 'string') return undefined;
    return serviceUrl(discovery, name, this.options.url);
  }

  private async modules(): Promise<URL> {
    return (await this.service('modules.v1'))!;
  }

  /**
   * Where the network mirror is in the tree when provider packages are
   * filled too, and the origin hosts they are filled for: the upstream's own,
   * and the public registries' (a source without a host is theirs).
   */
  get providers(): { path: string; hosts: Set<string>; platforms: string[] } | undefined {
    const p = this.options.providers;
    return p && { path: p.path, hosts: servedHosts(this.options.url, PUBLIC_REGISTRY_HOSTS), platforms: p.platforms };
  }

  /**
   * Fetches a provider version's packages for the configured platforms, each
   * checked against the upstream's signed SHA256SUMS, into the provider
   * folder, then has the mirror take them in; once for all callers.
   */
  fillProvider(address: ProviderAddress, version: string): Promise<void> {
    const providers = this.options.providers;
    if (!providers) return Promise.reject(new MirrorError('NOT_FOUND', 'Not found'));
    return this.once(`provider ${providerKey(address)} ${version}`, async () => {
      let service: URL | undefined;
      try {
        service = await this.service('providers.v1');
      } catch (error) {
        throw gatewayError(error, `${providerKey(address)} ${version}`, this.origin);
      }
      if (service === undefined) throw new MirrorError('NOT_FOUND', `The upstream ${this.origin} serves no providers`);
      const run = { http: this.http, service, origin: this.origin, log: (line: string) => this.options.log(`upstream: ${line}`) };
      const fetched = await fetchProviderVersion(run, address, version, providers);
      await providers.commit(address, version);
      const key = providerKey(address);
      const held = providers.held(key, version);
      const at = new Date().toISOString();
      for (const p of fetched) {
        const sha256 = held.get(p.platform);
        if (sha256 === undefined) continue;
        await appendFill(this.options.recordFile, {
          provider: key,
          version,
          platform: p.platform,
          location: p.location,
          upstream_sha256: p.sha256,
          sha256,
          at,
        });
      }
    });
  }

  private async fetchAndCommit(address: ModuleAddress, version: string): Promise<Filled> {
    const what = `${addressKey(address)} ${version}`;
    const scratch = await mkdtemp(join(tmpdir(), 'modmirror-upstream-'));
    const repos = new GitRepos();
    /** Set when the fetched files are read again for their calls, which then removes them. */
    let following: Promise<void> | undefined;
    try {
      let source: VersionSource;
      let upstreamSha256: string | undefined;
      let location: string;
      let fetchedRoot: string;
      try {
        const modules = await this.modules();
        // The detail comes in while the archive does: a client is waiting, and only the archive needs the download document.
        const asked = versionDetail(this.http, modules, address, version);
        asked.catch(() => {});
        const found = await downloadLocation(this.http, modules, address, version);
        location = new URL(found.location, found.base).href;
        const fetched = await fetchLocation(scratch, parseLocation(found.location, found.base), this.http, repos, what);
        const detail = await asked;
        fetchedRoot = fetched.root;
        upstreamSha256 = fetched.sha256;
        source = {
          address,
          meta: { owner: detail.owner ?? '', description: detail.description ?? '', source: detail.source ?? '', verified: detail.verified === true },
          version,
          tag: version,
          // The upstream's date, so the detail documents say when the version was published rather than when it was first asked for.
          publishedAt: detail.publishedAt ?? new Date(Math.floor(Date.now() / 1000) * 1000),
          origin: { kind: 'folder', dir: fetched.root },
          label: `${what} from ${this.origin}`,
          fingerprint: (await describeFolder(fetched.root)).fingerprint,
        };
      } catch (error) {
        if (error instanceof UpstreamStatusError && error.status === 404)
          throw new MirrorError('NOT_FOUND', `Version ${version} of ${addressKey(address)} not found here or upstream`, { cause: error });
        throw gatewayError(error, what, this.origin);
      }
      const shown = upstreamSha256 === undefined ? 'a git checkout' : `archive sha256 ${upstreamSha256}`;
      let sha256: string;
      try {
        ({ sha256 } = await this.options.commit(source));
      } catch (error) {
        if (error instanceof MirrorError && error.code === 'VERSION_CONFLICT') return this.keep(address, version, shown);
        if (error instanceof MirrorError && UNCACHEABLE.has(error.code))
          throw new MirrorError('BAD_GATEWAY', `${what} from ${this.origin} cannot be kept in the mirror: ${error.message}`, { cause: error });
        throw error;
      }
      this.options.log(`upstream: ${what}: fetched from ${location} (${shown}), published as sha256 ${sha256}`);
      await appendFill(this.options.recordFile, {
        module: addressKey(address),
        version,
        location,
        upstream_sha256: upstreamSha256 ?? null,
        sha256,
        at: new Date().toISOString(),
      });
      // After the answer: the client is not kept waiting for what it will ask next.
      if (this.options.followCalls !== false && !this.closed) {
        following = this.followCalls(fetchedRoot, what);
        this.following.add(following);
        void following.finally(() => this.following.delete(following!));
      }
      return { outcome: 'fetched', sha256 };
    } finally {
      await repos.close();
      if (following) void following.finally(() => rm(scratch, { recursive: true, force: true }));
      else await rm(scratch, { recursive: true, force: true });
    }
  }

  /**
   * Fills what a version just filled calls from the registry this upstream
   * stands in for, each at the newest version its constraint allows (as
   * Terraform picks it), one after another; each of those follows its own
   * calls in turn. Never throws: a call that cannot be filled now is logged,
   * and is filled (or refused) when a client asks for it.
   */
  private async followCalls(dir: string, caller: string): Promise<void> {
    let calls: FolderCalls;
    try {
      calls = await packageCalls(dir, 'root');
    } catch (error) {
      this.options.log(`upstream: ${caller}: its module calls could not be read, so none is filled ahead: ${messageOf(error)}`);
      return;
    }
    const hosts = servedHosts(this.options.url, PUBLIC_REGISTRY_HOSTS);
    for (const { call } of calls.calls) {
      const source = parseModuleSource(call.source);
      if (this.closed) return;
      if (source.kind !== 'registry' || !hosts.has(source.host) || this.options.asks?.(source.address) === false) continue;
      const called = `${addressKey(source.address)} (called by ${caller})`;
      try {
        const matches = parseConstraint(call.version);
        const list = await this.versions(source.address);
        if (list.kind !== 'listed') continue;
        const version = latestVersion(list.versions.map(validVersion).filter((v): v is string => v !== null && matches(v)));
        if (version === undefined || this.options.heldSha256(source.address, version) !== undefined) continue;
        await this.fill(source.address, version);
      } catch (error) {
        this.options.log(`upstream: ${called}: not filled ahead: ${messageOf(error)}`);
      }
    }
  }

  /** Another writer published the version with other content while it was fetched: the mirror's stays, and the log says both digests. */
  private async keep(address: ModuleAddress, version: string, upstream: string): Promise<Filled> {
    const held = this.options.heldSha256(address, version) ?? 'unknown';
    const recorded = this.recorded(addressKey(address), version);
    const then = recorded ? `; when first cached the upstream sent archive sha256 ${recorded}` : '';
    this.options.log(
      `upstream: ${addressKey(address)} ${version}: refused the upstream's bytes (${upstream}): the mirror holds this version as sha256 ${held}, and a published version never changes${then}`,
    );
    return { outcome: 'kept', sha256: held };
  }

  /** The upstream archive digest recorded when the version was first cached here. */
  private recorded(module: string, version: string): string | undefined {
    const fill = readFills(this.options.recordFile).find((f) => isModuleFill(f) && f.module === module && f.version === version && f.upstream_sha256);
    return fill?.upstream_sha256 ?? undefined;
  }
}
