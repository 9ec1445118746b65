// The incremental build's cache: extraction results and archives by a
// content address (git's tree id, or the digest of a folder's files) and by
// modmirror's own version, so an unchanged version is neither parsed nor
// packed again, and a new modmirror never reuses an old one's output.

import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ContentReadmes, ReadmeSource } from '../extract/index.js';
import { nameBytes } from '../scan/names.js';
import { isHeld, type ExtractedVersion, type ModuleContent, type PackedArchive, type VersionFile, type VersionSource } from '../types.js';
import { GENERATOR } from '../version.js';
import { replaceFileSync } from '../atomic.js';

/**
 * Raised whenever the same sources give different output, so a cache or an
 * up-to-date record made by an earlier modmirror of the same version number
 * is not reused. 2: in-tree symlinks carried as files, HCL1 fallback,
 * versions mirrored with the documentation that could be read. 3: providers
 * implied by resources and data sources.
 */
export const OUTPUT_FORMAT = 3;

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
  /** False for an entry this cache stored itself, moments ago, for another version of the same content. */
  earlier: boolean;
}

/**
 * How an entry holds a version. 2: each README as its file's path and content
 * id, read back from the version's own source on a hit (git's object by id,
 * or the folder's file already read), not as text: READMEs were more than
 * half of every entry, most of them repeated from the version before.
 */
const ENTRY_LAYOUT = 2;

/** A content as an entry holds it: its README by reference. */
type StoredContent = Omit<ModuleContent, 'readme'> & { readme: ReadmeSource | null };

interface StoredEntry {
  content: { root: StoredContent; submodules: StoredContent[]; examples: StoredContent[] };
  problems: string[];
  warnings: string[];
  sha256: string;
  size: number;
  /** The run of VersionCache that stored it, so a hit can tell an earlier build's entry from its own. */
  run?: string;
}

/** A README's text from the version's source; rejects (the entry is then a miss) when the source no longer has it. */
export type ReadmeReader = (readme: ReadmeSource) => Promise<string>;

/** A git version's address needs no reading: its tree id names its content. */
export function gitIdentity(source: VersionSource): string | undefined {
  return source.origin.kind === 'git' ? `git-tree:${source.origin.tree}` : undefined;
}

/** A folder version's address: the digest of its files' paths, modes and contents (a large file's sha1 read as it was listed). */
export function filesIdentity(files: VersionFile[]): string {
  const hash = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    // The name's bytes (scan/names.ts): two names that are not UTF-8 would hash alike as text.
    hash.update(nameBytes(f.path));
    hash.update(`\0${f.mode & 0o111 ? 'x' : '-'}\0`);
    if (isHeld(f)) hash.update(createHash('sha1').update(f.data).digest());
    else if (f.id !== undefined) hash.update(Buffer.from(f.id, 'hex'));
    else throw new Error(`${f.path} has no digest: read it with readVersionFiles`);
  }
  return `files:${hash.digest('hex')}`;
}

export class VersionCache {
  private readonly run = randomUUID();

  constructor(private readonly dir: string) {}

  private paths(identity: string): { json: string; archive: string } {
    const key = createHash('sha256').update(`${GENERATOR}\n${OUTPUT_FORMAT}\n${ENTRY_LAYOUT}\n${identity}`).digest('hex');
    const base = join(this.dir, key.slice(0, 2), key);
    return { json: `${base}.json`, archive: `${base}.tar.gz` };
  }

  async get(identity: string, readReadme: ReadmeReader): Promise<CachedVersion | undefined> {
    const { json, archive } = this.paths(identity);
    if (!existsSync(json)) return undefined;
    try {
      const { content, problems, warnings, sha256, size, run } = JSON.parse(await readFile(json, 'utf8')) as StoredEntry;
      // A half-written archive (a crash) has the wrong size: treat it as a miss.
      if ((await stat(archive)).size !== size) return undefined;
      const withReadme = async ({ readme, ...rest }: StoredContent): Promise<ModuleContent> => ({
        ...rest,
        readme: readme === null ? '' : await readReadme(readme),
      });
      const [root, submodules, examples] = await Promise.all([
        withReadme(content.root),
        Promise.all(content.submodules.map(withReadme)),
        Promise.all(content.examples.map(withReadme)),
      ]);
      return { content: { root, submodules, examples }, problems, warnings, sha256, size, archivePath: archive, earlier: run !== this.run };
    } catch {
      return undefined;
    }
  }

  /** Where a version with large files is packed, on the cache's file system so that storing it is a rename. */
  get spoolDir(): string {
    return join(this.dir, 'incoming');
  }

  /**
   * Archive first, entry last: an entry only exists once its archive does.
   * Returns the archive's path. Synchronous writes, as the staging's (small
   * files); an archive packed into a file is moved into place.
   */
  async put(identity: string, report: VersionReport, readmes: ContentReadmes, archive: PackedArchive): Promise<string> {
    const paths = this.paths(identity);
    mkdirSync(dirname(paths.json), { recursive: true });
    if ('data' in archive) replaceFileSync(paths.archive, archive.data);
    else renameSync(archive.file, paths.archive);
    const { content, problems, warnings } = report;
    const stored = (c: ModuleContent, readme: ReadmeSource | null | undefined): StoredContent => ({ ...c, readme: readme ?? null });
    const entry: StoredEntry = {
      content: {
        root: stored(content.root, readmes.root),
        submodules: content.submodules.map((c, i) => stored(c, readmes.submodules[i])),
        examples: content.examples.map((c, i) => stored(c, readmes.examples[i])),
      },
      problems,
      warnings,
      sha256: archive.sha256,
      size: archive.size,
      run: this.run,
    };
    replaceFileSync(paths.json, JSON.stringify(entry));
    return paths.archive;
  }
}
