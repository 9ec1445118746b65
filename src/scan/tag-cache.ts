// A local repository's tags are files (packed-refs and refs/tags/**). When
// none of them changed since the last scan, that scan's answer stands and no
// git process runs: what makes a no-op incremental build of a hundred
// repositories cost milliseconds rather than a hundred process starts.

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceFileSync } from '../atomic.js';

export interface ScannedTag {
  tag: string;
  version: string;
  commit: string;
  tree: string;
  committedAt: string;
}

export interface TagScan {
  tags: ScannedTag[];
  warnings: string[];
}

function gitDirOf(repo: string): string | undefined {
  const dotGit = join(repo, '.git');
  if (existsSync(dotGit) && statSync(dotGit).isDirectory()) return dotGit;
  if (existsSync(join(repo, 'HEAD')) && existsSync(join(repo, 'refs'))) return repo;
  // A worktree or submodule (.git is a file): no shortcut, ask git.
  return undefined;
}

/** A digest of every tag ref of a local repository, or undefined when its layout is not a plain one. */
export function tagRefsStamp(repo: string): string | undefined {
  const gitDir = gitDirOf(repo);
  if (!gitDir) return undefined;
  const hash = createHash('sha256');
  const packed = join(gitDir, 'packed-refs');
  if (existsSync(packed)) hash.update(readFileSync(packed));
  const walk = (rel: string) => {
    const dir = join(gitDir, rel);
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir).sort()) {
      const path = `${rel}/${name}`;
      if (statSync(join(gitDir, path)).isDirectory()) walk(path);
      else hash.update(`\n${path}\0`).update(readFileSync(join(gitDir, path)));
    }
  };
  walk('refs/tags');
  return hash.digest('hex');
}

function cacheFile(cacheDir: string, key: string): string {
  return join(cacheDir, 'tags', `${createHash('sha256').update(key).digest('hex').slice(0, 24)}.json`);
}

export function readTagScan(cacheDir: string, key: string, stamp: string): TagScan | undefined {
  try {
    const cached = JSON.parse(readFileSync(cacheFile(cacheDir, key), 'utf8')) as TagScan & { stamp: string };
    return cached.stamp === stamp ? cached : undefined;
  } catch {
    return undefined;
  }
}

export async function writeTagScan(cacheDir: string, key: string, stamp: string, scan: TagScan): Promise<void> {
  const file = cacheFile(cacheDir, key);
  await mkdir(join(cacheDir, 'tags'), { recursive: true });
  // A unique temp name: two builds of one repository at once must not write the same one.
  replaceFileSync(file, JSON.stringify({ stamp, ...scan }));
}
