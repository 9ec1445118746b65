// The folder layout of air-gapped drops: <namespace>/<name>/<provider>/<version>/.

import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FolderSource } from '../config/sources.js';
import { isValidName } from '../protocol/paths.js';
import type { ModuleMeta, VersionSource } from '../types.js';
import { listFolderFiles } from './files.js';
import { nameBytes, nameFromBytes, showName } from './names.js';
import { validVersion } from '../version-order.js';
import { forEachLimited } from '../concurrency.js';

export async function scanFolder(
  source: FolderSource,
  metaFor: (address: VersionSource['address']) => ModuleMeta,
  warn: (message: string) => void,
): Promise<VersionSource[]> {
  const { folders, empty } = await versionFolders(source.dir);
  for (const rel of empty) warn(emptyFolderWarning(source.dir, rel));
  const versions: VersionSource[] = [];
  // One address and meta object per module, not per version: a large drop has 100,000 versions held until built.
  const modules = new Map<string, Pick<VersionSource, 'address' | 'meta'>>();
  for (let i = 0; i < folders.length; i++) {
    const rel = folders[i]!;
    // Each path goes once its version is made: the list and the versions are never both whole.
    folders[i] = '';
    const [namespace = '', name = '', provider = '', folder = ''] = rel.split('/');
    if (![namespace, name, provider].every(isValidName)) {
      warn(`${join(source.dir, showName(rel))}: skipping: "${showName(`${namespace}/${name}/${provider}`)}" is not a valid module address`);
      continue;
    }
    const version = validVersion(folder);
    if (version === null) {
      warn(`${join(source.dir, showName(rel))}: skipping "${showName(folder)}": not a semver version`);
      continue;
    }
    const dir = join(source.dir, rel);
    const key = `${namespace}/${name}/${provider}`;
    let module = modules.get(key);
    if (!module) {
      const address = { namespace, name, provider };
      modules.set(key, (module = { address, meta: metaFor(address) }));
    }
    const { publishedAt, fingerprint } = await describeFolder(dir);
    // Spelled out rather than spread: a spread gave every version an object shape of its own (~350 bytes more each).
    // The tag is the version's own string when they read alike (the usual case): one string held, not two.
    const tag = folder === version ? version : folder;
    versions.push({ address: module.address, meta: module.meta, version, tag, publishedAt, origin: { kind: 'folder', dir }, label: dir, fingerprint });
  }
  return versions;
}

const LAYOUT = ['NAMESPACE', 'NAME', 'PROVIDER', 'VERSION'];

/**
 * The folders at version depth, as paths under `dir` (names.ts), sorted; and
 * the folders above that depth with no folder in them, where no version can
 * be. Names are read as bytes, as files.ts reads a version's: read as strings
 * (fast-glob), a name that is not UTF-8 came back changed, the folder could
 * not be opened by it, and everything under it was skipped without a word.
 * Hidden folders are left out.
 */
async function versionFolders(dir: string): Promise<{ folders: string[]; empty: string[] }> {
  const empty: string[] = [];
  let level: Folder[] = [{ rel: '', location: Buffer.from(dir) }];
  const folders: string[] = [];
  for (let depth = 1; depth <= LAYOUT.length; depth++) {
    const leaves = depth === LAYOUT.length;
    const next: Folder[] = [];
    // A few folders read at a time: a drop of 40,000 modules never has all their listings in memory at once.
    await forEachLimited(level.values(), FOLDER_READS, async (parent) => {
      const children = await subfolders(parent);
      if (children.length === 0 && parent.rel !== '') empty.push(parent.rel);
      // A version folder's path is all the scan keeps of it.
      if (leaves) for (const child of children) folders.push(child.rel);
      else for (const child of children) next.push(child);
    });
    level = next;
  }
  return { folders: folders.sort(), empty: empty.sort() };
}

const FOLDER_READS = 32;

interface Folder {
  /** The path under the source, `/`-separated, a name that is not UTF-8 carried as names.ts does. */
  rel: string;
  /** The folder's own path as bytes: the only spelling that opens a name that is not UTF-8. */
  location: Buffer;
}

/** The folders in `parent`, following links to folders; none when it went away meanwhile. */
async function subfolders(parent: Folder): Promise<Folder[]> {
  const entries = await readdir(parent.location, { encoding: 'buffer', withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  const folders = await Promise.all(
    entries.map(async (entry): Promise<Folder | undefined> => {
      if (entry.name[0] === DOT) return undefined;
      const location = Buffer.concat([parent.location, SLASH, entry.name]);
      const folder = entry.isDirectory() || (entry.isSymbolicLink() && (await stat(location).catch(() => undefined))?.isDirectory() === true);
      return folder ? { rel: `${parent.rel}${parent.rel === '' ? '' : '/'}${nameFromBytes(entry.name)}`, location } : undefined;
    }),
  );
  return folders.filter((f): f is Folder => f !== undefined);
}

const DOT = 0x2e;
const SLASH = Buffer.from('/');

/** A folder above version depth holding no folder: a version one level too high, a module without its provider level. */
function emptyFolderWarning(dir: string, rel: string): string {
  const parts = rel.split('/');
  return (
    `${join(dir, showName(rel))}: skipping: no folder in it, so no version: the layout is ${LAYOUT.join('/')}/ ` +
    `(e.g. acme/network/aws/1.0.0/main.tf), and "${showName(parts.at(-1)!)}" is at the ${LAYOUT[parts.length - 1]!} level`
  );
}

/**
 * A folder has no commit date: its newest file stands in, so rebuilding
 * unchanged files gives the same output. Names, sizes and times make its
 * fingerprint, as make would judge it.
 */
export async function describeFolder(dir: string): Promise<{ publishedAt: Date; fingerprint: string }> {
  const entries = await listFolderFiles(dir);
  let newest = 0;
  const hash = createHash('sha1');
  for (const entry of entries.sort((a, b) => (a.path < b.path ? -1 : 1))) {
    newest = Math.max(newest, Math.floor(entry.stats.mtimeMs / 1000) * 1000);
    // The name's bytes: two names that are not UTF-8 would hash alike as text.
    hash.update(nameBytes(entry.path));
    hash.update(`\0${entry.stats.size}\0${entry.stats.mtimeMs}\0${entry.stats.mode}\n`);
  }
  return { publishedAt: new Date(newest), fingerprint: `stat:${hash.digest('hex')}` };
}
