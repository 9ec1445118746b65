// Registry protocol documents as pure functions of the built versions
// (spec 2.6-2.9, 4.4, 8). Field names and order follow the public registry.

import { providersServiceUrl } from './providers.js';
import type { BuiltVersion, Deprecation, ModuleAddress, ModuleContent } from '../types.js';
import { addressKey, archiveLocation, listingPageUrl, LOGIN_AUTHZ_PATH, LOGIN_TOKEN_PATH, modulesServiceUrl } from './paths.js';

export interface ModuleSummary {
  id: string;
  owner: string;
  namespace: string;
  name: string;
  version: string;
  provider: string;
  description: string;
  source: string;
  published_at: string;
  downloads: number;
  verified: boolean;
}

/** The JSON type of a document's field, as a reader checks it ('number': an integer here). */
export type FieldType = 'string' | 'number' | 'boolean' | 'object' | 'array';

/** Every field of a summary and its type: a field added to ModuleSummary and not here does not compile. */
export const SUMMARY_FIELDS = {
  id: 'string',
  owner: 'string',
  namespace: 'string',
  name: 'string',
  version: 'string',
  provider: 'string',
  description: 'string',
  source: 'string',
  published_at: 'string',
  downloads: 'number',
  verified: 'boolean',
} as const satisfies Record<keyof ModuleSummary, FieldType>;

/** Spec 2.6. `published_at` is ISO 8601 UTC with fractional seconds. */
export function moduleSummary(v: Pick<BuiltVersion, 'source' | 'description'>): ModuleSummary {
  const { address: a, meta } = v.source;
  return {
    id: `${addressKey(a)}/${v.source.version}`,
    owner: meta.owner,
    namespace: a.namespace,
    name: a.name,
    version: v.source.version,
    provider: a.provider,
    description: v.description,
    source: meta.source,
    published_at: v.source.publishedAt.toISOString(),
    downloads: 0,
    verified: meta.verified,
  };
}

/** Module content descriptor (spec 2.7) with the public registry's extra fields. */
function contentDocument(c: ModuleContent) {
  return {
    path: c.path,
    ...(c.path === '' ? {} : { name: c.path.split('/').pop() }),
    readme: c.readme,
    empty: c.empty,
    inputs: c.inputs.map((i) => ({
      name: i.name,
      type: i.type,
      description: i.description,
      // The registry shows defaults JSON-encoded as strings, and '' when required.
      default: i.required ? '' : JSON.stringify(i.default ?? null),
      required: i.required,
      sensitive: i.sensitive,
      nullable: i.nullable,
    })),
    outputs: c.outputs.map((o) => ({ name: o.name, description: o.description, sensitive: o.sensitive })),
    dependencies: c.moduleCalls.map((m) => ({ name: m.name, source: m.source, version: m.version })),
    provider_dependencies: c.providers.map((p) => ({ name: p.name, namespace: p.namespace, source: p.source, version: p.version })),
    resources: c.resources.map((r) => ({ name: r.name, type: r.type })),
    data_sources: c.dataSources.map((r) => ({ name: r.name, type: r.type })),
    required_version: c.requiredVersion,
  };
}

/** The fields every content descriptor has (root, each submodule and example), and their types. */
export const CONTENT_FIELDS = {
  path: 'string',
  readme: 'string',
  empty: 'boolean',
  inputs: 'array',
  outputs: 'array',
  dependencies: 'array',
  provider_dependencies: 'array',
  resources: 'array',
} as const satisfies Partial<Record<keyof ReturnType<typeof contentDocument>, FieldType>>;

/**
 * The keys of a detail document that only the version's files (and the
 * generator reading them) decide, and so never change once it is published;
 * the rest (`versions`, `providers`, module metadata, `deprecation`) can.
 */
export const DETAIL_CONTENT_KEYS = ['root', 'submodules', 'examples'] as const;

/**
 * GET {base}/ns/name/provider[/version]: summary plus detail (spec 2.7), and
 * `deprecation` ({reason, link}, as HCP Terraform's) when the version is deprecated.
 */
export function detailDocument(v: BuiltVersion, moduleVersions: string[], providers: string[], deprecation?: Deprecation) {
  const { published_at, downloads, verified, ...head } = moduleSummary(v);
  return {
    ...head,
    tag: v.source.tag,
    published_at,
    downloads,
    verified,
    root: contentDocument(v.content.root),
    submodules: v.content.submodules.map(contentDocument),
    examples: v.content.examples.map(contentDocument),
    providers,
    versions: moduleVersions,
    ...(deprecation ? { deprecation } : {}),
  };
}

/** The fields every detail document has (a deprecation only when deprecated), and their types. */
export const DETAIL_FIELDS = {
  ...SUMMARY_FIELDS,
  tag: 'string',
  root: 'object',
  submodules: 'array',
  examples: 'array',
  providers: 'array',
  versions: 'array',
} as const satisfies Record<Exclude<keyof ReturnType<typeof detailDocument>, 'deprecation'>, FieldType>;

/** What the versions document shows of a version's content: its root's and submodules' providers and module calls. */
export interface VersionsDocumentContent {
  root: Pick<ModuleContent, 'providers' | 'moduleCalls'>;
  submodules: Pick<ModuleContent, 'path' | 'providers' | 'moduleCalls'>[];
}

/** That part of a version's content alone, so the rest (READMEs, inputs) need not be kept for the versions document. */
export function versionsDocumentContent(c: VersionsDocumentContent): VersionsDocumentContent {
  return {
    root: { providers: c.root.providers, moduleCalls: c.root.moduleCalls },
    submodules: c.submodules.map(({ path, providers, moduleCalls }) => ({ path, providers, moduleCalls })),
  };
}

/**
 * GET {base}/ns/name/provider/versions (spec 2.8); `versions` newest first. A
 * deprecated version carries `deprecation` as HCP Terraform's listing does;
 * Terraform and OpenTofu ignore fields they do not know.
 */
export function versionsDocument(
  address: ModuleAddress,
  versions: { source: { version: string }; content: VersionsDocumentContent }[],
  deprecations: Record<string, Deprecation> = {},
) {
  const providersOf = (c: Pick<ModuleContent, 'providers'>) =>
    c.providers.map((p) => ({ name: p.name, namespace: p.namespace, source: p.source, version: p.version }));
  const dependenciesOf = (c: Pick<ModuleContent, 'moduleCalls'>) => c.moduleCalls.map((m) => ({ name: m.name, source: m.source, version: m.version }));
  return {
    modules: [
      {
        source: addressKey(address),
        versions: versions.map((v) => ({
          version: v.source.version,
          root: { providers: providersOf(v.content.root), dependencies: dependenciesOf(v.content.root) },
          submodules: v.content.submodules.map((s) => ({ path: s.path, providers: providersOf(s), dependencies: dependenciesOf(s) })),
          ...(deprecations[v.source.version] ? { deprecation: deprecations[v.source.version] } : {}),
        })),
      },
    ],
  };
}

export interface PageMeta {
  limit: number;
  current_offset: number;
  next_offset?: number;
  prev_offset?: number;
  next_url?: string;
}

/**
 * Spec 8 pagination: `next_offset`/`next_url` only when more results exist,
 * `prev_offset` only when offset > 0.
 */
export function pageMeta(total: number, offset: number, limit: number, nextUrl: (offset: number) => string): PageMeta {
  const meta: PageMeta = { limit, current_offset: offset };
  if (offset + limit < total) {
    meta.next_offset = offset + limit;
    meta.next_url = nextUrl(offset + limit);
  }
  if (offset > 0) meta.prev_offset = Math.max(0, offset - limit);
  return meta;
}

/** GET {base}, {base}/ns and {base}/ns/name: one page of module summaries. */
export function listingDocument(all: ModuleSummary[], offset: number, limit: number, basePath: string, listing: string) {
  return {
    meta: pageMeta(all.length, offset, limit, (next) => listingPageUrl(basePath, listing, next, limit)),
    modules: all.slice(offset, offset + limit),
  };
}

/** `providers.v1` only when the mirror has in-house providers: a sync reading this mirror as its upstream then knows to ask. */
export function discoveryDocument(baseUrl: string, options: { providers?: boolean } = {}) {
  return { 'modules.v1': modulesServiceUrl(baseUrl), ...(options.providers ? { 'providers.v1': providersServiceUrl(baseUrl) } : {}) };
}

/** The OAuth client id Terraform sends: an advisory name, the one login.v1 announces. */
export const LOGIN_CLIENT_ID = 'terraform-cli';
/** The loopback ports Terraform may listen on for the redirect (Terraform's login protocol). */
export const LOGIN_PORTS: [number, number] = [10000, 10010];

/**
 * Terraform's login protocol (`terraform login`): the authorization code
 * grant with PKCE, its endpoints relative to the discovery document's host
 * unless the server has a base URL.
 */
export function loginService(baseUrl: string | undefined) {
  const at = (path: string) => (baseUrl ? `${baseUrl}${path}` : `/${path}`);
  return { client: LOGIN_CLIENT_ID, grant_types: ['authz_code'], authz: at(LOGIN_AUTHZ_PATH), token: at(LOGIN_TOKEN_PATH), ports: LOGIN_PORTS };
}

/** Body of a download endpoint: OpenTofu reads `location` from it; Terraform reads the header. */
export function downloadDocument(address: ModuleAddress, version: string, baseUrl: string) {
  return { location: archiveLocation(address, version, baseUrl) };
}

/** Spec 2.9. */
export function downloadsSummaryDocument(address: ModuleAddress, counts = { week: 0, month: 0, year: 0, total: 0 }) {
  return { data: { type: 'module-downloads-summary', id: addressKey(address), attributes: counts } };
}
