// The upstream registry, read the way Terraform reads it (spec 4.4):
// discovery names `modules.v1`, `versions` lists versions, `download` gives
// the location (X-Terraform-Get, or OpenTofu's JSON body), a version's
// detail gives its `published_at`.

import { MirrorError } from '../errors.js';
import { addressKey } from '../protocol/paths.js';
import type { ModuleAddress } from '../types.js';
import { UpstreamStatusError, type HttpClient } from './http.js';

/** The upstream's discovery document (`/.well-known/terraform.json`), read once per run. */
export interface Discovery {
  url: URL;
  services: Record<string, unknown>;
}

export async function readDiscovery(http: HttpClient, from: URL): Promise<Discovery> {
  const url = new URL('/.well-known/terraform.json', from);
  const { value } = await http.json(url, 'discovery');
  return { url, services: typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {} };
}

/** A service's base URL (`modules.v1`, `providers.v1`), resolved against the discovery URL (it may be relative). */
export function serviceUrl(discovery: Discovery, service: 'modules.v1' | 'providers.v1', from: URL): URL {
  const value = discovery.services[service];
  if (typeof value !== 'string' || value === '') {
    const serves = service === 'modules.v1' ? 'modules' : 'providers';
    throw new MirrorError('UPSTREAM_FAILED', `${discovery.url} names no "${service}" service, so ${from} serves no ${serves}.`, {
      hint: 'Check the --from URL: it should be the registry host.',
    });
  }
  const base = new URL(value, discovery.url);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return base;
}

/** Every version the upstream lists for a module (spec 2.8). */
export async function listVersions(http: HttpClient, modules: URL, address: ModuleAddress): Promise<string[]> {
  const url = new URL(`${addressKey(address)}/versions`, modules);
  const { value } = await http.json(url, `${addressKey(address)} versions`);
  const first = (value as { modules?: { versions?: { version?: unknown }[] }[] } | undefined)?.modules?.[0];
  if (!Array.isArray(first?.versions)) {
    throw new MirrorError('UPSTREAM_FAILED', `${url} is not a versions document (no modules[0].versions list).`, {
      hint: 'Check that --from is a Terraform module registry.',
    });
  }
  return first.versions.map((v) => v.version).filter((v): v is string => typeof v === 'string');
}

/** The upstream answered a version list with 404 (spec 2.8): it has no module at that address. */
export function isMissingModule(error: unknown): boolean {
  return error instanceof UpstreamStatusError && error.status === 404;
}

/** Where a version's files are: the location as the upstream wrote it, and the URL it is relative to. */
export async function downloadLocation(http: HttpClient, modules: URL, address: ModuleAddress, version: string): Promise<{ location: string; base: URL }> {
  const url = new URL(`${addressKey(address)}/${encodeURIComponent(version)}/download`, modules);
  const { value, headers } = await http.json(url, `${addressKey(address)} ${version} download`);
  // Terraform reads the header; OpenTofu prefers the JSON body. Either will do.
  const body = (value as { location?: unknown } | undefined)?.location;
  const location = typeof body === 'string' && body !== '' ? body : headers['x-terraform-get'] || headers['x-service-get'];
  if (!location) {
    throw new MirrorError('UPSTREAM_FAILED', `${url} gave no download location (no X-Terraform-Get header and no "location" in the body).`, {
      hint: 'The upstream does not speak the module registry protocol for this version.',
    });
  }
  return { location, base: url };
}

/** What a version's detail document says beyond its files (spec 2.9); each field only when the upstream gives it. */
export interface VersionDetail {
  publishedAt?: Date;
  owner?: string;
  description?: string;
  source?: string;
  verified?: boolean;
}

/** The version's detail document, read for its dates and description; a detail the upstream cannot give is only a nicety lost. */
export async function versionDetail(http: HttpClient, modules: URL, address: ModuleAddress, version: string): Promise<VersionDetail> {
  const url = new URL(`${addressKey(address)}/${encodeURIComponent(version)}`, modules);
  let value: unknown;
  try {
    ({ value } = await http.json(url, `${addressKey(address)} ${version} detail`));
  } catch {
    return {};
  }
  const doc = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const text = (key: string) => (typeof doc[key] === 'string' ? { [key]: doc[key] } : {});
  const when = typeof doc['published_at'] === 'string' ? new Date(doc['published_at']) : undefined;
  return {
    ...(when && !Number.isNaN(when.getTime()) ? { publishedAt: when } : {}),
    ...text('owner'),
    ...text('description'),
    ...text('source'),
    ...(typeof doc['verified'] === 'boolean' ? { verified: doc['verified'] } : {}),
  };
}

/** The version's `published_at`, when the upstream's detail document has one; the synced files get it as their time. */
export async function publishedAt(http: HttpClient, modules: URL, address: ModuleAddress, version: string): Promise<Date | undefined> {
  return (await versionDetail(http, modules, address, version)).publishedAt;
}
