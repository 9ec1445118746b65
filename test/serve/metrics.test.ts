// `GET /metrics`: Prometheus's text format, linted by promtool and scraped by
// a real Prometheus on loopback whose HTTP API gives the counters back;
// download series bounded by --metrics-download-series; in private mode only
// a site administrator's token reads it, or it is served on a listener of
// its own (--metrics-listen), and no other caller learns a module's name.

import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { mirrorManifest, runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';
import { get, startPrivateServer, startPrivateSite, type PrivateSite } from './private-site.js';
import { promtoolCheck, skipWithoutPrometheus, startPrometheus } from './prometheus.js';

const dir = tempDir();
let server: RunningServer;

beforeAll(async () => {
  writeFiles(dir, {
    'mirror.config.yaml': 'sources:\n  - folder: mods\n',
    'mods/acme/net/aws/1.0.0/main.tf': 'variable "x" {}\n',
    'mods/acme/net/aws/1.1.0/main.tf': 'variable "x" {}\n',
    'mods/acme/dns/aws/2.0.0/main.tf': 'variable "x" {}\n',
  });
  const built = await runCli(['build'], dir);
  expect(built.code).toBe(0);
  server = await serveMirror(dir, { metrics: { downloadSeries: 2 } });
});

const fetchText = async (url: string | URL, headers: Record<string, string> = {}) => {
  const res = await request(url, { headers });
  return { status: res.statusCode, type: res.headers['content-type'], text: await res.body.text() };
};
const archive = (module: string, version: string) => {
  const [, name, provider] = module.split('/');
  return new URL(`v1/modules/${module}/${version}/${name}-${provider}-${version}.tar.gz`, server.url);
};
const sample = (text: string, line: string) => Number(new RegExp(`^${line.replace(/[{}+.]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);

describe('public mode', () => {
  it('answers in the text format, every metric with HELP, in base units, counting requests by route class and status', async () => {
    await fetchText(new URL('v1/modules/acme/net/aws/versions', server.url));
    await fetchText(new URL('v1/modules/acme/nothing/aws/versions', server.url));
    const { status, type, text } = await fetchText(new URL('metrics', server.url));
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of [
      'modmirror_http_requests_total',
      'modmirror_http_request_duration_seconds',
      'modmirror_http_response_body_bytes_total',
      'modmirror_archive_downloads_total',
      'modmirror_publishes_total',
      'modmirror_mirror_reloads_total',
      'modmirror_mirror_modules',
      'modmirror_mirror_module_versions',
      'modmirror_mirror_module_archive_bytes',
      'process_cpu_seconds_total',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(text, name).toMatch(new RegExp(`^# HELP ${name} \\S`, 'm'));
    }
    expect(sample(text, 'modmirror_http_requests_total{route="versions",method="GET",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'modmirror_http_requests_total{route="versions",method="GET",status="404"}')).toBeGreaterThanOrEqual(1);
    // Every request observed once in its route's latency histogram, whose buckets only grow.
    const versions = sample(text, 'modmirror_http_request_duration_seconds_count{route="versions"}');
    expect(versions).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'modmirror_http_request_duration_seconds_bucket{route="versions",le="+Inf"}')).toBe(versions);
    const buckets = [...text.matchAll(/^modmirror_http_request_duration_seconds_bucket\{route="versions",le="[^"]+"\} (\d+)$/gm)].map((m) => Number(m[1]));
    expect(buckets).toHaveLength(14);
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
    expect(sample(text, 'modmirror_http_response_body_bytes_total{route="versions"}')).toBeGreaterThan(0);
    expect(sample(text, 'modmirror_mirror_modules')).toBe(2);
    expect(sample(text, 'modmirror_mirror_module_versions')).toBe(3);
    const archives = mirrorManifest(join(dir, 'dist')) as { modules: Record<string, { versions: { size: number }[] }> };
    const bytes = Object.values(archives.modules).flatMap((m) => m.versions.map((v) => v.size));
    expect(sample(text, 'modmirror_mirror_module_archive_bytes')).toBe(bytes.reduce((a, b) => a + b, 0));
    expect(bytes.length).toBe(3);
    // Route classes, never paths.
    expect(text).not.toMatch(/route="[^"]*\//);
  });

  it('counts archives by module and version up to the series bound, then as "other"', async () => {
    for (const [m, v] of [
      ['acme/net/aws', '1.0.0'],
      ['acme/net/aws', '1.0.0'],
      ['acme/net/aws', '1.1.0'],
      ['acme/dns/aws', '2.0.0'],
    ] as const) {
      const res = await fetchText(archive(m, v));
      expect(res.status).toBe(200);
    }
    // A download counts once the server sees its response close, which may come just after the client has the last byte.
    const other = 'modmirror_archive_downloads_total{module="other",version="other"}';
    await expect.poll(async () => sample((await fetchText(new URL('metrics', server.url))).text, other)).toBe(1);
    const { text } = await fetchText(new URL('metrics', server.url));
    expect(sample(text, 'modmirror_archive_downloads_total{module="acme/net/aws",version="1.0.0"}')).toBe(2);
    expect(sample(text, 'modmirror_archive_downloads_total{module="acme/net/aws",version="1.1.0"}')).toBe(1);
    expect(sample(text, 'modmirror_archive_downloads_total{module="other",version="other"}')).toBe(1);
    expect(text).not.toMatch(/acme\/dns\/aws/);
    expect(sample(text, 'modmirror_http_response_body_bytes_total{route="archive"}')).toBeGreaterThan(0);
  });

  it('counts a method outside the usual ones as "other", so a client cannot make up series', async () => {
    const res = await request(new URL('v1/modules', server.url), { method: 'PROPFIND' });
    await res.body.dump();
    expect(res.statusCode).toBe(405);
    const other = 'modmirror_http_requests_total{route="bad_request",method="other",status="405"}';
    await expect.poll(async () => sample((await fetchText(new URL('metrics', server.url))).text, other)).toBe(1);
    expect((await fetchText(new URL('metrics', server.url))).text).not.toMatch(/PROPFIND/);
  });

  it.skipIf(skipWithoutPrometheus)('passes promtool check metrics', async () => {
    const { text } = await fetchText(new URL('metrics', server.url));
    const lint = await promtoolCheck(text);
    expect(lint.output).toBe('');
    expect(lint.code).toBe(0);
  });

  it.skipIf(skipWithoutPrometheus)('is scraped by a real Prometheus, whose API gives the counters back', async () => {
    const prometheus = await startPrometheus(new URL('metrics', server.url));
    try {
      const up = await prometheus.until('up{job="modmirror"}', (r) => r[0]?.value === 1);
      expect(up[0]?.value).toBe(1);
      const before = await prometheus.until('modmirror_archive_downloads_total{module="acme/net/aws",version="1.0.0"}', (r) => r.length === 1);
      expect(before[0]?.value).toBe(2);
      for (let i = 0; i < 3; i++) expect((await fetchText(archive('acme/net/aws', '1.0.0'))).status).toBe(200);
      const after = await prometheus.until('modmirror_archive_downloads_total{module="acme/net/aws",version="1.0.0"}', (r) => r[0]?.value === 5);
      expect(after[0]?.value).toBe(5);
      const versions = await prometheus.query('sum(modmirror_http_requests_total{route="versions"})');
      expect(versions[0]?.value).toBeGreaterThanOrEqual(2);
    } finally {
      await prometheus.close();
    }
  });
});

describe('private mode', () => {
  let site: PrivateSite;
  beforeAll(async () => {
    site = await startPrivateSite();
    for (const caller of ['user', 'team'] as const)
      expect((await get(site, caller, 'v1/modules/acme/hello/null/1.0.0/hello-null-1.0.0.tar.gz')).status).toBe(200);
  });
  afterAll(() => site?.close());

  it('needs a site administrator token: 401 without one, the 404 of nothing there for any other, naming no module', async () => {
    expect((await get(site, 'anonymous', 'metrics')).status).toBe(401);
    for (const caller of ['user', 'team', 'organization', 'other', 'owner'] as const) {
      const token = site.tokens[caller]!;
      const res = await fetchText(new URL('metrics', site.server.url), { authorization: `Bearer ${token}` });
      expect(res.status, caller).toBe(404);
      expect(res.text, caller).not.toMatch(/acme|hello|modmirror_/);
    }
    const downloads = 'modmirror_archive_downloads_total{module="acme/hello/null",version="1.0.0"}';
    await expect.poll(async () => sample((await get(site, 'admin', 'metrics')).text, downloads)).toBe(2);
    const admin = await get(site, 'admin', 'metrics');
    expect(admin.status).toBe(200);
    expect(sample(admin.text, 'modmirror_access_refusals_total{status="401"}')).toBeGreaterThanOrEqual(1);
    expect(site.audit.some((line) => /^refused GET \/metrics 404 who=user:alice why="\/metrics needs a site administrator token"/.test(line))).toBe(true);
  });

  it('with --metrics-listen, answers there without a token and not at all on the registry port', async () => {
    const audit: string[] = [];
    const own = await startPrivateServer(site.dir, audit, { metrics: { listen: { host: '127.0.0.1', port: 0 } } });
    try {
      expect(own.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const there = await fetchText(own.metricsUrl!);
      expect(there.status).toBe(200);
      expect(there.text).toMatch(/^# HELP modmirror_http_requests_total/m);
      expect((await fetchText(new URL('other', own.metricsUrl))).status).toBe(404);
      const onRegistry = await fetchText(new URL('metrics', own.url), { authorization: `Bearer ${site.tokens.admin}` });
      expect(onRegistry.status).toBe(404);
      expect(onRegistry.text).not.toMatch(/modmirror_/);
    } finally {
      await own.close();
    }
  });

  it.skipIf(skipWithoutPrometheus)('is scraped by Prometheus with a site administrator token', async () => {
    const prometheus = await startPrometheus(new URL('metrics', site.server.url), site.tokens.admin);
    try {
      const result = await prometheus.until('modmirror_archive_downloads_total{module="acme/hello/null"}', (r) => r.length === 1);
      expect(result[0]?.value).toBe(2);
    } finally {
      await prometheus.close();
    }
  });
});

it('refuses bad --metrics-listen, --metrics-download-series and --log-format values with exit 2', async () => {
  for (const [flag, value, message] of [
    ['--metrics-listen', '9100', /Invalid --metrics-listen "9100": expected HOST:PORT/],
    ['--metrics-listen', '127.0.0.1:99999', /Invalid --metrics-listen/],
    ['--metrics-download-series', '1.5', /Invalid --metrics-download-series "1.5"/],
    ['--log-format', 'xml', /Invalid --log-format "xml": expected text or json/],
  ] as const) {
    const result = await runCli(['serve', flag, value], dir);
    expect(result.code, `${flag} ${value}`).toBe(2);
    expect(result.stderr).toMatch(message);
  }
});
