// The module calls a folder makes, read with the build's own extractor
// (src/extract), so sync follows exactly the calls the browse page and the
// registry's `dependencies` show. Local calls (`./x`, `../x`) are followed
// to the folder they name, as `terraform init` does: their calls are part of
// what the caller needs.

import { readFile } from 'node:fs/promises';
import { posix, relative, resolve, sep } from 'node:path';
import fg from 'fast-glob';
import { MirrorError, messageOf } from '../errors.js';
import { extractVersion } from '../extract/index.js';
import type { ModuleCall, ModuleContent, ProviderRequirement, SourceFile } from '../types.js';
import { parseModuleSource } from '../protocol/source-address.js';

export interface FoundCall {
  call: ModuleCall;
  /** The calling folder, relative to the package or configuration root ('' for the root itself). */
  folder: string;
}

export interface FolderCalls {
  calls: FoundCall[];
  providers: (ProviderRequirement & { folder: string })[];
  /** Local calls that lead nowhere readable (outside a package, or no such folder). */
  unreadable: { found: FoundCall; why: string }[];
}

/**
 * A module package (one version's files): its root, `modules/*` and
 * `examples/*` (`from: 'root'`: its root only, what `terraform init` of a
 * configuration calling it installs), and every folder inside the package
 * they call by local path. Throws when a file cannot be parsed: the
 * package's calls are then unknown.
 */
export async function packageCalls(dir: string, from: 'package' | 'root' = 'package'): Promise<FolderCalls> {
  const files = await configFiles(dir, '**');
  const extracted = extractVersion(files);
  const start = from === 'root' ? [extracted.root] : [extracted.root, ...extracted.submodules, ...extracted.examples];
  return followLocal(start, async (folder) => {
    // A local call may not leave the package: the client only has the package's files.
    if (folder === '..' || folder.startsWith('../')) return 'it leads outside the module package';
    const inFolder = rebase(files, folder);
    return inFolder.length === 0 ? 'the package has no .tf files there' : extractVersion(inFolder).root;
  });
}

/**
 * A user's Terraform configuration folder: its root module, and the folders
 * it calls by local path, wherever they are on disk. Throws a usage error for
 * a folder with no configuration files.
 */
export async function configurationCalls(dir: string): Promise<FolderCalls> {
  const root = await folderModule(dir);
  if (root.empty)
    throw new MirrorError('USAGE', `--for ${dir}: the folder holds no .tf or .tf.json files.`, { hint: 'Name the folder you run terraform init in.' });
  return followLocal([root], async (folder) => {
    const content = await folderModule(resolve(dir, ...folder.split('/')));
    return content.empty ? 'the folder holds no .tf files' : content;
  });
}

async function folderModule(dir: string): Promise<ModuleContent> {
  return extractVersion(await configFiles(dir, '')).root;
}

/** Walks local calls from the start folders; `read` gives a folder's content, or why it cannot. */
async function followLocal(start: ModuleContent[], read: (folder: string) => Promise<ModuleContent | string>): Promise<FolderCalls> {
  const result: FolderCalls = { calls: [], providers: [], unreadable: [] };
  const seen = new Set(start.map((c) => c.path));
  const queue = [...start];
  for (let content = queue.shift(); content !== undefined; content = queue.shift()) {
    const folder = content.path;
    for (const p of content.providers) result.providers.push({ ...p, folder });
    for (const call of content.moduleCalls) {
      const found = { call, folder };
      result.calls.push(found);
      const source = parseModuleSource(call.source);
      if (source.kind !== 'local') continue;
      const target = posix.normalize(posix.join(folder === '' ? '.' : folder, source.path)).replace(/\/$/, '');
      const key = target === '.' ? '' : target;
      if (seen.has(key)) continue;
      seen.add(key);
      const next = await read(key).catch((error: unknown) => `its files could not be read: ${messageOf(error)}`);
      if (typeof next === 'string') result.unreadable.push({ found, why: next });
      else queue.push({ ...next, path: key });
    }
  }
  return result;
}

/** The .tf and .tf.json files under `dir` (`deep` '**': all folders; '': only the folder itself), as the extractor takes them. */
async function configFiles(dir: string, deep: '**' | ''): Promise<SourceFile[]> {
  const patterns = deep === '' ? ['*.tf', '*.tf.json'] : ['**/*.tf', '**/*.tf.json'];
  const paths = await fg(patterns, { cwd: dir, onlyFiles: true, ignore: ['**/.git/**', '**/.terraform/**'] });
  return Promise.all(paths.sort().map(async (path) => ({ path, mode: 0o644, data: await readFile(resolve(dir, path)) })));
}

/** The files directly in `folder`, as if it were the root. */
function rebase(files: SourceFile[], folder: string): SourceFile[] {
  return files.filter((f) => posix.dirname(f.path) === (folder === '' ? '.' : folder)).map((f) => ({ ...f, path: posix.basename(f.path) }));
}

/** `dir` shown relative to the working folder, for messages. */
export function shownPath(dir: string): string {
  const rel = relative(process.cwd(), dir);
  return rel === '' ? '.' : rel.startsWith('..') ? dir : rel.split(sep).join('/');
}
