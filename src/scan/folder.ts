// The folder layout of air-gapped drops: <namespace>/<name>/<provider>/<version>/.

import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { FolderSource } from '../config/index.js';
import { isValidName } from '../protocol/paths.js';
import type { ModuleMeta, VersionSource } from '../types.js';
import { listFolderFiles } from './files.js';
import { nameBytes } from './names.js';
import { validVersion } from '../version-order.js';

export async function scanFolder(
  source: FolderSource,
  metaFor: (address: VersionSource['address']) => ModuleMeta,
  warn: (message: string) => void,
): Promise<VersionSource[]> {
  const { default: fg } = await import('fast-glob');
  const dirs = await fg('*/*/*/*', { cwd: source.dir, onlyDirectories: true, deep: 4 });
  const versions: VersionSource[] = [];
  // One address and meta object per module, not per version: a large drop has 100,000 versions held until built.
  const modules = new Map<string, Pick<VersionSource, 'address' | 'meta'>>();
  for (const rel of dirs.sort()) {
    const [namespace = '', name = '', provider = '', folder = ''] = rel.split('/');
    if (![namespace, name, provider].every(isValidName)) {
      warn(`${join(source.dir, rel)}: skipping: "${namespace}/${name}/${provider}" is not a valid module address`);
      continue;
    }
    const version = validVersion(folder);
    if (version === null) {
      warn(`${join(source.dir, rel)}: skipping "${folder}": not a semver version`);
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
    versions.push({ address: module.address, meta: module.meta, version, tag: folder, publishedAt, origin: { kind: 'folder', dir }, label: dir, fingerprint });
  }
  return versions;
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
