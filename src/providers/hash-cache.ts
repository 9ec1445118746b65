// Provider zips are large (tens to hundreds of MB each) and rarely change:
// each is hashed once, and again only when its file stamp (inode, time, size)
// changes, as the server notices a replaced manifest.

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { replaceFileSync } from '../atomic.js';
import { fileStamp } from '../file-stamp.js';
import { packageHashes, type PackageHashes } from './hash.js';

export interface ZipHashes extends PackageHashes {
  size: number;
}

interface Entry extends ZipHashes {
  stamp: string;
}

const FILE = 'provider-hashes.json';

export class ProviderHashCache {
  private readonly file: string;
  private readonly entries: Map<string, Entry>;
  private changed = false;
  /** Zips read and hashed in this run (not from the cache). */
  hashed = 0;
  bytesHashed = 0;

  /** `reuse: false` (a clean build): hash every zip again, and keep the results for the next build. */
  constructor(
    cacheDir: string,
    private readonly reuse = true,
  ) {
    this.file = join(cacheDir, FILE);
    this.entries = new Map(Object.entries(readEntries(this.file)));
  }

  async hashes(zip: string): Promise<ZipHashes> {
    const stamp = fileStamp(zip);
    const hit = this.entries.get(zip);
    if (this.reuse && stamp !== undefined && hit?.stamp === stamp) return { h1: hit.h1, zh: hit.zh, size: hit.size };
    const hashes = await packageHashes(zip);
    const size = Number(stamp?.split(':')[2] ?? 0);
    // A file replaced while it was hashed gets another stamp: keep nothing for it.
    if (stamp !== undefined && fileStamp(zip) === stamp) {
      this.entries.set(zip, { stamp, ...hashes, size });
      this.changed = true;
    }
    this.hashed++;
    this.bytesHashed += size;
    return { ...hashes, size };
  }

  /** Keeps only the zips seen in this run, so the file does not grow with every folder ever built. */
  save(seen: Set<string>): void {
    for (const key of this.entries.keys()) {
      if (!seen.has(key)) {
        this.entries.delete(key);
        this.changed = true;
      }
    }
    if (!this.changed) return;
    mkdirSync(dirname(this.file), { recursive: true });
    replaceFileSync(this.file, `${JSON.stringify(Object.fromEntries(this.entries))}\n`);
    this.changed = false;
  }
}

function readEntries(file: string): Record<string, Entry> {
  if (!existsSync(file)) return {};
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, Entry>) : {};
  } catch {
    // A cache is only a cache: unreadable means hash again.
    return {};
  }
}
