// Extract stage: the files of one module version -> inputs, outputs,
// resources, module calls and providers of its root, of every `modules/*`
// submodule and of every `examples/*` example (registry detail, spec 2.7).

import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { MirrorError } from '../errors.js';
import type { ExtractedVersion, ModuleContent, SourceFile } from '../types.js';
import { declarationsFromHcl, declarationsFromJson, type FileDeclarations, type ProviderDecl, type ResourceDecl } from './declarations.js';
import { showName } from '../scan/names.js';
import { HclSyntaxError } from './hcl.js';
import { declarationsFromHcl1, legacyDuplicate } from './legacy.js';
import { requiredProviders } from './providers.js';

/**
 * Parsed files by content hash, least recently used first. Versions of one
 * module share most files, so a build parses each distinct file about once;
 * across modules files rarely repeat, so the cache is bounded by the bytes of
 * source it holds (a parsed file takes about 2-3 times its source), not by
 * the size of the mirror.
 */
export interface ExtractCache {
  entries: Map<string, { parsed: FileDeclarations | HclSyntaxError; bytes: number }>;
  bytes: number;
  limit: number;
}
/** Far more than a module's working set (its history changes a few files per tag); about 10 MB of heap. */
const CACHE_SOURCE_BYTES = 4 * 1024 * 1024;

export function createExtractCache(limit = CACHE_SOURCE_BYTES): ExtractCache {
  return { entries: new Map(), bytes: 0, limit };
}

const CONFIG_FILE = /\.tf(\.json)?$/;
const OVERRIDE_FILE = /(^|_)override\.tf(\.json)?$/;

/** Every folder's documentation, and `file:line:column: message` for each file neither HCL2 nor HCL1 could read. */
export interface Extraction {
  content: ExtractedVersion;
  problems: string[];
  /** Each content's README file, in the content's order: the version cache stores where a README is, not its text. */
  readmes: ContentReadmes;
}

/** A README file of a version: its path and content id (git's blob id, else the sha1 of its bytes). */
export interface ReadmeSource {
  path: string;
  id: string;
}

export interface ContentReadmes {
  root: ReadmeSource | null;
  submodules: (ReadmeSource | null)[];
  examples: (ReadmeSource | null)[];
}

/** Throws MirrorError HCL_SYNTAX naming every file:line:column that failed to parse. */
export function extractVersion(files: SourceFile[], cache: ExtractCache = createExtractCache()): ExtractedVersion {
  const { content, problems } = extractDocumentation(files, cache);
  if (problems.length > 0) throw syntaxError(problems);
  return content;
}

/** The error a strict build or a publish gives for a version with files no parser could read. */
export function syntaxError(problems: string[]): MirrorError {
  return new MirrorError('HCL_SYNTAX', problems.join('\n'), { hint: 'Fix the syntax error, then build again; other versions were built.' });
}

/** What can be read: a file that fails to parse adds nothing, and is named in `problems`. */
export function extractDocumentation(files: SourceFile[], cache: ExtractCache = createExtractCache()): Extraction {
  const byDir = new Map<string, SourceFile[]>();
  for (const file of files) {
    const dir = posix.dirname(file.path);
    const key = dir === '.' ? '' : dir;
    let list = byDir.get(key);
    if (!list) byDir.set(key, (list = []));
    list.push(file);
  }
  const problems: string[] = [];
  const folder = (dir: string) => {
    const files = byDir.get(dir) ?? [];
    const readme = readmeFileOf(files);
    return { content: moduleContent(dir, files, readme, cache, problems), readme: readme ? { path: readme.path, id: fileId(readme) } : null };
  };
  const childDirs = (parent: string) =>
    [...byDir.keys()].filter((dir) => posix.dirname(dir) === parent && (byDir.get(dir) ?? []).some((f) => CONFIG_FILE.test(f.path))).sort();
  const root = folder('');
  const submodules = childDirs('modules').map(folder);
  const examples = childDirs('examples').map(folder);
  return {
    content: { root: root.content, submodules: submodules.map((f) => f.content), examples: examples.map((f) => f.content) },
    problems,
    readmes: { root: root.readme, submodules: submodules.map((f) => f.readme), examples: examples.map((f) => f.readme) },
  };
}

/** A file's content id: git's blob id, else the sha1 of its bytes. */
export const fileId = (file: SourceFile): string => file.id ?? createHash('sha1').update(file.data).digest('hex');

type Syntax = 'hcl' | 'hcl1' | 'json';
const PARSERS: Record<Syntax, (text: string) => FileDeclarations> = { hcl: declarationsFromHcl, hcl1: declarationsFromHcl1, json: declarationsFromJson };

function parseFile(file: SourceFile, syntax: Syntax, cache: ExtractCache): FileDeclarations | HclSyntaxError {
  const key = `${syntax[0]}${syntax === 'hcl1' ? '1' : ''}${fileId(file)}`;
  const hit = cache.entries.get(key);
  if (hit) {
    // Re-inserted so the Map's order stays least recently used first.
    cache.entries.delete(key);
    cache.entries.set(key, hit);
    return hit.parsed;
  }
  let parsed: FileDeclarations | HclSyntaxError;
  try {
    parsed = PARSERS[syntax](file.data.toString('utf8'));
  } catch (error) {
    // The readers bound their nesting (MAX_NESTING); should some recursion still exhaust the stack (a
    // RangeError), that is this file's problem, never the whole build's.
    if (error instanceof RangeError) parsed = new HclSyntaxError(`Could not be read: ${error.message}`, 1, 1);
    else if (!(error instanceof HclSyntaxError)) throw error;
    else parsed = error;
  }
  cache.entries.set(key, { parsed, bytes: file.data.length });
  cache.bytes += file.data.length;
  for (const [oldest, entry] of cache.entries) {
    if (cache.bytes <= cache.limit) break;
    cache.entries.delete(oldest);
    cache.bytes -= entry.bytes;
  }
  return parsed;
}

const isOverride = (file: SourceFile) => OVERRIDE_FILE.test(posix.basename(file.path));

/**
 * A folder HCL2 cannot read whole is read again with HCL1's rules, as
 * terraform-config-inspect does (tfconfig/load.go): the whole folder, and
 * only if every file reads, else HCL2's reading and its errors stand.
 */
function readLegacy(configFiles: SourceFile[], cache: ExtractCache): FileDeclarations[] | undefined {
  const parsed: FileDeclarations[] = [];
  for (const file of configFiles) {
    const result = parseFile(file, file.path.endsWith('.json') ? 'json' : 'hcl1', cache);
    if (result instanceof HclSyntaxError) return undefined;
    parsed.push(result);
  }
  return legacyDuplicate(parsed.filter((_, i) => !isOverride(configFiles[i]!))) === undefined ? parsed : undefined;
}

function moduleContent(dir: string, files: SourceFile[], readme: SourceFile | undefined, cache: ExtractCache, problems: string[]): ModuleContent {
  const configFiles = files.filter((f) => CONFIG_FILE.test(f.path) && !posix.basename(f.path).startsWith('.')).sort((a, b) => (a.path < b.path ? -1 : 1));
  let parsed = configFiles.map((file) => parseFile(file, file.path.endsWith('.json') ? 'json' : 'hcl', cache));
  if (parsed.some((p) => p instanceof HclSyntaxError)) parsed = readLegacy(configFiles, cache) ?? parsed;
  const primary: FileDeclarations[] = [];
  const overrides: FileDeclarations[] = [];
  parsed.forEach((result, i) => {
    const file = configFiles[i]!;
    if (result instanceof HclSyntaxError) problems.push(`${showName(file.path)}:${result.line}:${result.column}: ${result.message}`);
    else (isOverride(file) ? overrides : primary).push(result);
  });
  const merged = merge(primary, overrides);
  return {
    path: dir,
    readme: readme?.data.toString('utf8') ?? '',
    empty: configFiles.length === 0,
    inputs: [...merged.variables.values()]
      .map((v) => ({
        name: v.name,
        type: v.type ?? '',
        description: v.description ?? '',
        default: v.default?.value,
        required: v.default === undefined,
        sensitive: v.sensitive ?? false,
        nullable: v.nullable ?? true,
      }))
      .sort(byName),
    outputs: [...merged.outputs.values()].map((o) => ({ name: o.name, description: o.description ?? '', sensitive: o.sensitive ?? false })).sort(byName),
    resources: uniqueResources(merged.resources),
    dataSources: uniqueResources(merged.dataSources),
    moduleCalls: [...merged.moduleCalls.values()].map((m) => ({ name: m.name, source: m.source ?? '', version: m.version ?? '' })).sort(byName),
    providers: requiredProviders(merged.providers, [...merged.resources, ...merged.dataSources]),
    requiredVersion: merged.requiredVersions.join(', '),
  };
}

interface Merged {
  variables: Map<string, FileDeclarations['variables'][number]>;
  outputs: Map<string, FileDeclarations['outputs'][number]>;
  moduleCalls: Map<string, FileDeclarations['moduleCalls'][number]>;
  providers: Map<string, ProviderDecl>;
  resources: FileDeclarations['resources'];
  dataSources: FileDeclarations['dataSources'];
  requiredVersions: string[];
}

/**
 * Primary files first, then override files, as Terraform loads them: an
 * override block replaces only the attributes it sets.
 */
function merge(primary: FileDeclarations[], overrides: FileDeclarations[]): Merged {
  const m: Merged = {
    variables: new Map(),
    outputs: new Map(),
    moduleCalls: new Map(),
    providers: new Map(),
    resources: [],
    dataSources: [],
    requiredVersions: [],
  };
  const mergeInto = <T extends { name: string }>(map: Map<string, T>, item: T) => map.set(item.name, { ...map.get(item.name), ...item });
  for (const file of primary) {
    for (const v of file.variables) m.variables.set(v.name, v);
    for (const o of file.outputs) m.outputs.set(o.name, o);
    for (const c of file.moduleCalls) mergeInto(m.moduleCalls, c);
    for (const p of file.providers) {
      const seen = m.providers.get(p.name);
      m.providers.set(p.name, {
        name: p.name,
        source: p.source ?? seen?.source,
        versions: [...(seen?.versions ?? []), ...p.versions],
      });
    }
    m.resources.push(...file.resources);
    m.dataSources.push(...file.dataSources);
    m.requiredVersions.push(...file.requiredVersions);
  }
  for (const file of overrides) {
    for (const v of file.variables) mergeInto(m.variables, v);
    for (const o of file.outputs) mergeInto(m.outputs, o);
    for (const c of file.moduleCalls) mergeInto(m.moduleCalls, c);
    for (const p of file.providers) m.providers.set(p.name, p);
    overrideResources(m.resources, file.resources);
    overrideResources(m.dataSources, file.dataSources);
    if (file.requiredVersions.length > 0) m.requiredVersions = [...file.requiredVersions];
  }
  return m;
}

/**
 * An override block's `provider` replaces that of the block it overrides, as
 * in Terraform; without one, the block keeps its own (terraform-config-inspect,
 * which reads override files as ordinary ones, takes the type's provider then).
 */
function overrideResources(into: ResourceDecl[], overrides: ResourceDecl[]): void {
  for (const o of overrides) {
    let found = false;
    into.forEach((r, i) => {
      if (r.type !== o.type || r.name !== o.name) return;
      found = true;
      // A copy: the parsed files are cached and shared between versions.
      if (o.provider !== undefined) into[i] = { ...r, provider: o.provider };
    });
    if (!found) into.push(o);
  }
}

function uniqueResources(list: { type: string; name: string }[]): { name: string; type: string }[] {
  const seen = new Map<string, { name: string; type: string }>();
  for (const r of list) seen.set(`${r.type}.${r.name}`, { name: r.name, type: r.type });
  return [...seen.values()].sort((a, b) => (a.type === b.type ? compare(a.name, b.name) : compare(a.type, b.type)));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byName(a: { name: string }, b: { name: string }): number {
  return compare(a.name, b.name);
}

const README_NAMES = ['readme.md', 'readme.markdown', 'readme'];

/** Whether extraction reads the file: a configuration file or a README. The others need not be held in memory. */
export function isReadByExtraction(path: string): boolean {
  return CONFIG_FILE.test(path) || README_NAMES.includes(posix.basename(path).toLowerCase());
}

function readmeFileOf(files: SourceFile[]): SourceFile | undefined {
  for (const wanted of README_NAMES) {
    const file = files.find((f) => posix.basename(f.path).toLowerCase() === wanted);
    if (file) return file;
  }
  return undefined;
}

/** The first paragraph of prose in a README: what a registry shows as a module's description. */
export function descriptionFromReadme(readme: string): string {
  const paragraph: string[] = [];
  let inFence = false;
  for (const raw of readme.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('```') || line.startsWith('~~~')) inFence = !inFence;
    const skip =
      inFence ||
      line.startsWith('#') ||
      line.startsWith('![') ||
      line.startsWith('[![') ||
      line.startsWith('<') ||
      line.startsWith('```') ||
      /^[=-]{3,}$/.test(line);
    if (line === '' || skip) {
      if (paragraph.length > 0) break;
      continue;
    }
    paragraph.push(line);
  }
  const text = paragraph.join(' ');
  // A string of its own: a line of the README is a slice of the whole text in V8 (and a one-line paragraph's
  // join is that line), so the short description kept for a module's listing kept its whole README alive.
  return Buffer.from(text.length > 300 ? `${text.slice(0, 297)}...` : text).toString();
}
