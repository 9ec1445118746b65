// `GET /metrics`: what serve has done, in Prometheus's text exposition format,
// through prom-client, but for the per-request families (request-metrics.ts),
// which every request updates. Names are in base units with their unit as
// suffix and every label value comes from a bounded set: route classes (never
// a path), status codes, and module versions up to a set number of series,
// beyond which they count under "other". The process's own metrics
// (prom-client's defaults) are collected once per process, however many
// servers it runs.

import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { Mirror } from './mirror.js';
import { RequestMetrics } from './request-metrics.js';

/** Archive download series (module and version pairs) before the rest count as "other". */
export const DEFAULT_DOWNLOAD_SERIES = 1000;
export const OTHER = 'other';

/** What the outcome of an upload (the publish API's PUT) was, by its status. */
export function publishOutcome(status: number): string {
  if (status < 300) return 'published';
  const named: Record<number, string> = { 401: 'refused', 403: 'refused', 404: 'not_found', 409: 'conflict', 413: 'too_large', 422: 'invalid', 503: 'busy' };
  return named[status] ?? (status < 500 ? 'bad_request' : 'error');
}

let processRegistry: Registry | undefined;
const MISNAMED_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

export class ServeMetrics {
  private readonly registry = new Registry();
  private readonly requests = new RequestMetrics();
  private readonly downloads: Counter<'module' | 'version'>;
  private readonly series = new Set<string>();
  private readonly publishes: Counter<'outcome'>;
  private readonly refusals: Counter<'status'>;
  private readonly cacheAnswers: Counter<'state'>;

  constructor(
    mirror: Mirror,
    private readonly maxDownloadSeries = DEFAULT_DOWNLOAD_SERIES,
  ) {
    const registers = [this.registry];
    this.downloads = new Counter({
      name: 'modmirror_archive_downloads_total',
      help: `Module archives sent whole, by module and version; past ${maxDownloadSeries} pairs the rest count under module="${OTHER}", version="${OTHER}".`,
      labelNames: ['module', 'version'],
      registers,
    });
    this.publishes = new Counter({
      name: 'modmirror_publishes_total',
      help: 'Module version uploads through the publish API, by outcome (published, conflict, invalid, too_large, refused, busy, error, ...).',
      labelNames: ['outcome'],
      registers,
    });
    this.refusals = new Counter({
      name: 'modmirror_access_refusals_total',
      help: 'Private mode: registry requests refused for want of access (401 no or unknown token, 403 bad signature, 404 module not readable).',
      labelNames: ['status'],
      registers,
    });
    this.cacheAnswers = new Counter({
      name: 'modmirror_upstream_answers_total',
      help: 'serve --upstream: answers by how they were made (hit: from the mirror; miss: the upstream asked now; stale: from the mirror, the upstream failing).',
      labelNames: ['state'],
      registers,
    });
    let reloadsSeen = 0;
    new Counter({
      name: 'modmirror_mirror_reloads_total',
      help: 'Times the server loaded a new generation of the mirror (after a build, publish or API write).',
      registers,
      collect() {
        this.inc(mirror.reloads - reloadsSeen);
        reloadsSeen = mirror.reloads;
      },
    });
    const size = (name: string, help: string, count: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(count());
        },
      });
    size('modmirror_mirror_modules', 'Modules in the served mirror.', () => mirror.current().modules.length);
    size('modmirror_mirror_module_versions', 'Module versions in the served mirror.', () =>
      mirror.current().modules.reduce((sum, m) => sum + m.versions.length, 0),
    );
    size('modmirror_mirror_module_archive_bytes', "Bytes of the served mirror's module archives (a mirror written before module states counts none).", () =>
      mirror.current().modules.reduce((sum, m) => sum + m.archiveBytes, 0),
    );
    size('modmirror_mirror_providers', 'Providers in the served mirror (network mirror and in-house).', () => mirror.current().providers.keys.size);
  }

  request(route: string, method: string, status: number, seconds: number, bodyBytes: number): void {
    this.requests.add(route, method, status, seconds, bodyBytes);
  }

  archiveSent(moduleKey: string, version: string): void {
    const pair = `${moduleKey}@${version}`;
    if (!this.series.has(pair) && this.series.size < this.maxDownloadSeries) this.series.add(pair);
    const known = this.series.has(pair);
    this.downloads.inc({ module: known ? moduleKey : OTHER, version: known ? version : OTHER });
  }

  published(status: number): void {
    this.publishes.inc({ outcome: publishOutcome(status) });
  }

  refused(status: number): void {
    this.refusals.inc({ status: String(status) });
  }

  /** An answer of serve --upstream, by its X-Modmirror-Cache value (hit, miss, stale). */
  cacheAnswer(state: string): void {
    this.cacheAnswers.inc({ state });
  }

  /** The exposition: the process's metrics, then the server's, then its requests'. */
  async text(): Promise<string> {
    if (!processRegistry) {
      processRegistry = new Registry();
      collectDefaultMetrics({ register: processRegistry });
      // Gauges named as counters, which Prometheus's linter (promtool check metrics) refuses; each has an unsuffixed twin by type.
      for (const name of MISNAMED_DEFAULTS) processRegistry.removeSingleMetric(name);
    }
    return `${await processRegistry.metrics()}\n${await this.registry.metrics()}\n${this.requests.text()}`;
  }

  readonly contentType = this.registry.contentType;
}
