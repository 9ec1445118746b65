// The incremental build's cache: extraction results and archives by a
// content address (git's tree id, or the digest of a folder's files) and by
// modmirror's own version, so an unchanged version is neither parsed nor
// packed again, and a new modmirror never reuses an old one's output.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ExtractedVersion, PackedArchive, SourceFile, VersionSource } from './types.js';
import { GENERATOR } from './version.js';
import { replaceFileSync } from './atomic.js';

/**
 * Raised whenever the same sources give different output, so a cache or an
 * up-to-date record made by an earlier modmirror of the same version number
 * is not reused. 2: in-tree symlinks carried as files, HCL1 fallback,
 * versions mirrored with the documentation that could be read.
 */
export const OUTPUT_FORMAT = 2;

/** What a version's build found besides its content, kept so a cache hit reports it again. */
export interface VersionReport {
  content: ExtractedVersion;
  /** `file:line:column: message` for each file no parser could read (the documentation is partial). */
  problems: string[];
  /** Links left out, naming each (without the version's label, which differs between tags of one tree). */
  warnings: string[];
}

export interface CachedVersion extends VersionReport {
  sha256: string;
  size: number;
  archivePath: string;
}

/** A git version's address needs no reading: its tree id names its content. */
export function gitIdentity(source: VersionSource): string | undefined {
  return source.origin.kind === 'git' ? `git-tree:${source.origin.tree}` : undefined;
}

/** A folder version's address: the digest of its files' paths, modes and contents. */
export function filesIdentity(files: SourceFile[]): string {
  const hash = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    hash.update(`${f.path}\0${f.mode & 0o111 ? 'x' : '-'}\0`);
    hash.update(createHash('sha1').update(f.data).digest());
  }
  return `files:${hash.digest('hex')}`;
}

export class VersionCache {
  constructor(private readonly dir: string) {}

  private paths(identity: string): { json: string; archive: string } {
    const key = createHash('sha256').update(`${GENERATOR}\n${OUTPUT_FORMAT}\n${identity}`).digest('hex');
    const base = join(this.dir, key.slice(0, 2), key);
    return { json: `${base}.json`, archive: `${base}.tar.gz` };
  }

  async get(identity: string): Promise<CachedVersion | undefined> {
    const { json, archive } = this.paths(identity);
    if (!existsSync(json)) return undefined;
    try {
      const entry = JSON.parse(await readFile(json, 'utf8')) as Omit<CachedVersion, 'archivePath'>;
      // A half-written archive (a crash) has the wrong size: treat it as a miss.
      if ((await stat(archive)).size !== entry.size) return undefined;
      return { ...entry, archivePath: archive };
    } catch {
      return undefined;
    }
  }

  /**
   * Archive first, entry last: an entry only exists once its archive does.
   * Returns the archive's path. Synchronous writes, as the staging's (small files).
   */
  async put(identity: string, report: VersionReport, archive: PackedArchive): Promise<string> {
    const paths = this.paths(identity);
    mkdirSync(dirname(paths.json), { recursive: true });
    replaceFileSync(paths.archive, archive.data);
    const { content, problems, warnings } = report;
    replaceFileSync(paths.json, JSON.stringify({ content, problems, warnings, sha256: archive.sha256, size: archive.data.length }));
    return paths.archive;
  }
}


