// What the cache keeps in the data folder about what it holds, and the one
// place its file formats are written and read (serve writes them, `modmirror
// cache list` reads them):
//
// - `upstream-cache.jsonl`: one JSON line per module version or provider
//   package filled from the upstream, appended once, never rewritten, with
//   the upstream's sha256 beside the published one (who sent which bytes).
// - `upstream-used.json`: when each archive of the mirror was last sent
//   whole, by its path in the mirror. Noted in memory and written together,
//   at most once a second and each archive at most once a minute, so serving
//   costs no write per download.

import { readFileSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic.js';

/** In the data folder: one JSON line per version (or provider package) filled from the upstream. */
export const UPSTREAM_RECORD_FILE = 'upstream-cache.jsonl';
/** In the data folder: when each archive of the mirror was last downloaded whole. */
export const UPSTREAM_USED_FILE = 'upstream-used.json';

/** A module version filled from the upstream. */
export interface ModuleFill {
  module: string;
  version: string;
  /** The download location the upstream gave, resolved. */
  location: string;
  /** The upstream archive's sha256; null for a git checkout, which has no archive. */
  upstream_sha256: string | null;
  /** The published archive's sha256. */
  sha256: string;
  /** When it was filled (ISO 8601). */
  at: string;
}

/** A provider package (one platform of a version) filled from the upstream. */
export interface ProviderFill {
  /** HOSTNAME/NAMESPACE/TYPE. */
  provider: string;
  version: string;
  platform: string;
  /** The upstream's download document for the package. */
  location: string;
  /** The sha256 of the zip the upstream sent, checked against its signed SHA256SUMS. */
  upstream_sha256: string;
  /** The mirror's zip's sha256. */
  sha256: string;
  at: string;
}

export type Fill = ModuleFill | ProviderFill;

export function appendFill(file: string, fill: Fill): Promise<void> {
  return appendFile(file, `${JSON.stringify(fill)}\n`);
}

/** Every fill recorded in `file`, oldest first; none when there is no file. A line cut short by a crash is skipped. */
export function readFills(file: string): Fill[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const fills: Fill[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const value = JSON.parse(line) as Partial<ModuleFill & ProviderFill>;
      if (typeof value.version === 'string' && (typeof value.module === 'string' || typeof value.provider === 'string')) fills.push(value as Fill);
    } catch {
      // Cut short by a crash: says nothing.
    }
  }
  return fills;
}

export const isModuleFill = (fill: Fill): fill is ModuleFill => 'module' in fill;

/** Archive path in the mirror -> when it was last sent whole (ISO 8601); empty when nothing was recorded. */
export function readLastUse(dataDir: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(join(dataDir, UPSTREAM_USED_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, string>) : {};
  } catch {
    // Written atomically, so only a hand edit breaks it: last use is a convenience, start again.
    return {};
  }
}

/** How stale a recorded use may get before the next use is written. */
const PRECISION_MS = 60_000;
/** How long notes gather before they are written together. */
const GATHER_MS = 1_000;

/** Notes when each archive was last sent, written to `upstream-used.json` together (see the top of this file). */
export class LastUse {
  private readonly file: string;
  private readonly uses: Record<string, string>;
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(dataDir: string) {
    this.file = join(dataDir, UPSTREAM_USED_FILE);
    this.uses = readLastUse(dataDir);
  }

  /** `archive` (its path in the mirror) was just sent whole. */
  used(archive: string, now = Date.now()): void {
    const recorded = this.uses[archive];
    if (recorded !== undefined && now - Date.parse(recorded) < PRECISION_MS) return;
    this.uses[archive] = new Date(now).toISOString();
    this.dirty = true;
    // Unref'd: a server closing is not kept waiting; flush() writes what is pending.
    this.timer ??= setTimeout(() => void this.flush(), GATHER_MS).unref();
  }

  /** Writes the notes now (a server closing calls it); never rejects: a failed write only warns. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.dirty) return this.writing;
    this.dirty = false;
    const text = `${JSON.stringify(Object.fromEntries(Object.entries(this.uses).sort(([a], [b]) => (a < b ? -1 : 1))), null, 1)}\n`;
    this.writing = this.writing.then(() =>
      writeFileAtomic(this.file, text).catch((error: unknown) => {
        process.emitWarning(`modmirror: could not record when archives were last used: ${(error as Error).message}`);
      }),
    );
    return this.writing;
  }
}
