// `GET /metrics`: what serve has done, in Prometheus's text exposition format,
// through prom-client. Names are in base units with their unit as suffix and
// every label value comes from a bounded set: route classes (never a path),
// status codes, and module versions up to a set number of series, beyond
// which they count under "other". The process's own metrics (prom-client's
// defaults) are collected once per process, however many servers it runs.

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Mirror } from './mirror.js';

/** Archive download series (module and version pairs) before the rest count as "other". */
export const DEFAULT_DOWNLOAD_SERIES = 1000;
export const OTHER = 'other';

/** Registry answers take milliseconds, archives up to seconds: buckets from 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

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
  private readonly requests: Counter<'route' | 'method' | 'status'>;
  private readonly latency: Histogram<'route'>;
  private readonly bytes: Counter<'route'>;
  private readonly downloads: Counter<'module' | 'version'>;
  private readonly series = new Set<string>();
  private readonly publishes: Counter<'outcome'>;
  private readonly refusals: Counter<'status'>;

  constructor(
    mirror: Mirror,
    private readonly maxDownloadSeries = DEFAULT_DOWNLOAD_SERIES,
  ) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'modmirror_http_requests_total',
      help: 'HTTP requests answered, by route class, method and status code.',
      labelNames: ['route', 'method', 'status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'modmirror_http_request_duration_seconds',
      help: 'Time from a request to its last byte handed to the connection (or its close), by route class.',
      labelNames: ['route'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.bytes = new Counter({
      name: 'modmirror_http_response_body_bytes_total',
      help: 'Response body bytes sent (after compression, without headers), by route class.',
      labelNames: ['route'],
      registers,
    });
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
    size('modmirror_mirror_providers', 'Providers in the served mirror (network mirror and in-house).', () => mirror.current().providers.keys.size);
  }

  request(route: string, method: string, status: number, seconds: number, bodyBytes: number): void {
    this.requests.inc({ route, method: METHODS.has(method) ? method : OTHER, status: String(status) });
    this.latency.observe({ route }, seconds);
    if (bodyBytes > 0) this.bytes.inc({ route }, bodyBytes);
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

  /** The exposition: the process's metrics, then the server's. */
  async text(): Promise<string> {
    if (!processRegistry) {
      processRegistry = new Registry();
      collectDefaultMetrics({ register: processRegistry });
      // Gauges named as counters, which Prometheus's linter (promtool check metrics) refuses; each has an unsuffixed twin by type.
      for (const name of MISNAMED_DEFAULTS) processRegistry.removeSingleMetric(name);
    }
    return `${await processRegistry.metrics()}\n${await this.registry.metrics()}`;
  }

  readonly contentType = this.registry.contentType;
}
