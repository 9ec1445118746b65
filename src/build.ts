// `modmirror build`: scan -> (read, extract, pack) per version -> emit.
// Versions run a few at a time; a module's documents are written as soon as
// its last version is done, so memory holds one module's contents at a time
// rather than the whole mirror.

import { availableParallelism } from 'node:os';
import type { ResolvedConfig } from './config.js';
import { MirrorError } from './errors.js';
import { createExtractCache, descriptionFromReadme, extractVersion } from './extract/index.js';
import { createStaging, emitIndexes, emitModule, writeArchive, type ModuleRecord } from './emit/index.js';
import { addressKey } from './emit/paths.js';
import { packVersion } from './pack.js';
import { readVersionFiles } from './scan/files.js';
import { GitReaders } from './scan/git-objects.js';
import { scan } from './scan/index.js';
import type { BuildProblem, BuiltVersion, VersionSource } from './types.js';
import { GENERATOR } from './version.js';

export interface BuildResult {
  outDir: string;
  modules: number;
  versions: number;
  archives: number;
  warnings: string[];
  errors: BuildProblem[];
  seconds: number;
}

export interface BuildOptions {
  onProgress?: (done: number, total: number, current: VersionSource) => void;
}

export async function build(config: ResolvedConfig, options: BuildOptions = {}): Promise<BuildResult> {
  const started = performance.now();
  const { versions, warnings } = await scan(config);
  const errors: BuildProblem[] = [];
  const staging = await createStaging(config.outDir);
  const gitReaders = new GitReaders();
  try {
    const modules = groupByModule(versions);
    const providersByName = providersOfNames(versions);
    const cache = createExtractCache();
    const records: ModuleRecord[] = [];
    let done = 0;

    const buildVersion = async (source: VersionSource): Promise<BuiltVersion | undefined> => {
      try {
        const files = await readVersionFiles(source, gitReaders);
        const content = extractVersion(files, cache);
        const archive = await packVersion(files);
        const built: BuiltVersion = {
          source,
          content,
          archive: { sha256: archive.sha256, size: archive.data.length },
          description: source.meta.description || descriptionFromReadme(content.root.readme),
        };
        await writeArchive(staging, built, archive.data);
        return built;
      } catch (error) {
        if (!(error instanceof MirrorError)) throw error;
        const where = `${addressKey(source.address)} ${source.version} (${source.label})`;
        errors.push({ code: error.code, message: `${where}: ${error.message}`, where: source.label });
        return undefined;
      } finally {
        options.onProgress?.(++done, versions.length, source);
      }
    };

    await forEachLimited([...modules.values()], moduleConcurrency(), async (moduleVersions) => {
      const built = await mapLimited(moduleVersions, versionConcurrency(), buildVersion);
      const ok = built.filter((b): b is BuiltVersion => b !== undefined);
      const first = moduleVersions[0]!;
      const providers = providersByName.get(`${first.address.namespace}/${first.address.name}`) ?? [];
      const record = await emitModule(staging, ok, providers, config.baseUrl);
      if (record) records.push(record);
    });
    await emitIndexes(staging, records, config.baseUrl, GENERATOR);
    await staging.commit();
    return {
      outDir: config.outDir,
      modules: records.length,
      versions: records.reduce((n, r) => n + r.versions.length, 0),
      archives: records.reduce((n, r) => n + r.versions.length, 0),
      warnings,
      errors,
      seconds: (performance.now() - started) / 1000,
    };
  } catch (error) {
    await staging.discard();
    throw error;
  } finally {
    gitReaders.closeAll();
  }
}

function groupByModule(versions: VersionSource[]): Map<string, VersionSource[]> {
  const modules = new Map<string, VersionSource[]>();
  for (const v of versions) {
    const key = addressKey(v.address);
    let list = modules.get(key);
    if (!list) modules.set(key, (list = []));
    list.push(v);
  }
  return modules;
}

/** `providers` of a detail document: every provider the module's namespace/name exists for. */
function providersOfNames(versions: VersionSource[]): Map<string, string[]> {
  const byName = new Map<string, Set<string>>();
  for (const v of versions) {
    const key = `${v.address.namespace}/${v.address.name}`;
    let set = byName.get(key);
    if (!set) byName.set(key, (set = new Set()));
    set.add(v.address.provider);
  }
  return new Map([...byName].map(([k, set]) => [k, [...set].sort()]));
}

// git archive and gzip run outside the JS thread, so a few more tasks than cores keep both busy.
const versionConcurrency = () => Math.max(2, availableParallelism() + 1);
const moduleConcurrency = () => 2;

async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

async function forEachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  await mapLimited(items, limit, fn);
}
