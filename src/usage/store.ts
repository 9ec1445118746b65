// Who downloaded which module version, by day: in the data folder's usage/,
// append-only and bounded. Each download is one JSON line appended to the
// newest segment (NNNNNN.jsonl), in batches: the downloads of the last
// USAGE_FLUSH_MS are written together, by one asynchronous write, so the
// request that sent the archive never waits for the disk and a busy server
// writes a few dozen lines at a time. When a segment reaches its size it is
// closed and folded into counts.json (one row per day, caller, module and
// version), written whole and fsynced, with the number of the last segment
// it holds; only then is that segment removed. So a crash (kill -9) at any
// point loses no day already written, only the downloads of its last
// USAGE_FLUSH_MS not written yet: a torn last line is skipped, and a segment
// both folded in and still there is counted once. counts.json keeps
// RETENTION_DAYS days and stays under half the store's bound, the oldest
// days dropped first.

import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic.js';
import { MirrorError } from '../errors.js';

export interface UsageEvent {
  day: string;
  module: string;
  version: string;
  organization?: string;
  team?: string;
  user?: string;
  /** From a static host's access log: the client's network (nginx-log.ts). */
  network?: string;
}

export interface UsageRow extends UsageEvent {
  count: number;
}

interface Counts {
  format: 1;
  /** Segments up to this number are in `rows`. */
  through: number;
  rows: UsageRow[];
}

export const USAGE_FOLDER = 'usage';
const COUNTS_FILE = 'counts.json';
export const DEFAULT_USAGE_MAX_BYTES = 64 * 1024 * 1024;
export const RETENTION_DAYS = 400;
/** The longest a recorded download waits to be written (with one write at a time, plus a write in flight): what a kill -9 can lose. */
export const USAGE_FLUSH_MS = 25;
const SEGMENT = /^(\d{6})\.jsonl$/;
const DAY_MS = 86_400_000;

const segmentName = (n: number) => `${String(n).padStart(6, '0')}.jsonl`;

export class UsageLog {
  private readonly dir: string;
  private readonly segmentBytes: number;
  /** The newest segment, opened by its first write. */
  private segment: FileHandle | undefined;
  private number: number;
  private size: number;
  private pending: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** A write failed part way: the next starts on a line of its own. */
  private torn = false;
  private folding: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    dataDir: string,
    private readonly maxBytes = DEFAULT_USAGE_MAX_BYTES,
  ) {
    this.dir = join(dataDir, USAGE_FOLDER);
    // Half the bound for the segments not folded in yet (they are folded one at a time), half for counts.json.
    this.segmentBytes = Math.max(4096, Math.floor(maxBytes / 4));
    mkdirSync(this.dir, { recursive: true });
    const { through } = readCounts(this.dir);
    // Folded in before a crash, not yet removed.
    for (const n of segmentNumbers(this.dir)) if (n <= through) rmSync(join(this.dir, segmentName(n)), { force: true });
    this.number = Math.max(through + 1, ...segmentNumbers(this.dir));
    const fd = openSync(join(this.dir, segmentName(this.number)), 'a+');
    try {
      this.size = fstatSync(fd).size;
      // A line torn by a crash: end it, so the next one starts on a line of its own (the reader skips the torn one).
      if (this.size > 0 && lastByte(fd, this.size) !== 0x0a) this.size += writeSync(fd, '\n');
    } finally {
      closeSync(fd);
    }
  }

  /** Records a download: written within USAGE_FLUSH_MS, with the others of that time. */
  record(event: UsageEvent): void {
    if (this.closed) return;
    this.pending.push(`${JSON.stringify(event)}\n`);
    this.timer ??= setTimeout(() => void this.flush(), USAGE_FLUSH_MS);
  }

  /** Writes what is pending now, after any write in flight; resolves once it is written. Never rejects. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writing = this.writing
      .then(() => this.writePending())
      // Recording must never stop serving, nor the writes after this one: say so, and keep going.
      .catch((error: unknown) => console.error(`warning: usage not recorded in ${this.dir}: ${(error as Error).message}`));
    return this.writing;
  }

  /** Everything written, and the last fold finished; once, however often it is called (a server may be closed twice). */
  async close(): Promise<void> {
    if (this.closed) return;
    const written = this.flush();
    this.closed = true;
    await written;
    await this.folding;
    await this.segment?.close();
    this.segment = undefined;
  }

  /** One write of every line pending; a full segment is then closed and folded into counts.json. */
  private async writePending(): Promise<void> {
    if (this.pending.length === 0) return;
    const text = `${this.torn ? '\n' : ''}${this.pending.join('')}`;
    this.pending = [];
    try {
      this.segment ??= await open(join(this.dir, segmentName(this.number)), 'a');
      await this.segment.appendFile(text);
      this.torn = false;
      this.size += Buffer.byteLength(text);
    } catch (error) {
      this.torn = true;
      throw error;
    }
    if (this.size >= this.segmentBytes) await this.rotate();
  }

  private async rotate(): Promise<void> {
    const full = this.number++;
    this.size = 0;
    const segment = this.segment;
    this.segment = undefined;
    await segment?.close();
    this.folding = this.folding.then(() =>
      fold(this.dir, full, this.maxBytes / 2).catch((error: unknown) => {
        console.error(`warning: usage segment ${segmentName(full)} not folded into ${COUNTS_FILE}: ${(error as Error).message}`);
      }),
    );
  }
}

/** Folds segments up to `through` into counts.json, then removes them. */
async function fold(dir: string, through: number, maxCountsBytes: number, now = Date.now()): Promise<void> {
  const counts = readCounts(dir);
  const numbers = segmentNumbers(dir).filter((n) => n > counts.through && n <= through);
  const rows = aggregate([...counts.rows, ...numbers.flatMap((n) => readSegment(join(dir, segmentName(n))))]);
  const oldest = new Date(now - RETENTION_DAYS * DAY_MS).toISOString().slice(0, 10);
  let kept = rows.filter((r) => r.day >= oldest);
  let text = countsText({ format: 1, through, rows: kept });
  while (text.length > maxCountsBytes && kept.length > 0) {
    const firstDay = kept.reduce((min, r) => (r.day < min ? r.day : min), kept[0]!.day);
    kept = kept.filter((r) => r.day !== firstDay);
    text = countsText({ format: 1, through, rows: kept });
  }
  await writeFileAtomic(join(dir, COUNTS_FILE), text);
  for (const n of numbers) rmSync(join(dir, segmentName(n)), { force: true });
}

const countsText = (counts: Counts) => `${JSON.stringify({ format: counts.format, through: counts.through, rows: counts.rows }, null, 0)}\n`;

/** Every download recorded in the data folder, as counts per day, caller, module and version. */
export function readUsage(dataDir: string): UsageRow[] {
  const dir = join(dataDir, USAGE_FOLDER);
  if (!existsSync(dir)) return [];
  // Segments first, then the counts that say which of them are folded in already: a fold in between is counted once.
  const segments = segmentNumbers(dir).map((n) => ({ n, rows: readSegment(join(dir, segmentName(n))) }));
  const counts = readCounts(dir);
  return aggregate([...counts.rows, ...segments.filter((s) => s.n > counts.through).flatMap((s) => s.rows)]);
}

export function aggregate(events: (UsageEvent | UsageRow)[]): UsageRow[] {
  const rows = new Map<string, UsageRow>();
  for (const e of events) {
    const key = JSON.stringify([e.day, e.organization, e.team, e.user, e.network, e.module, e.version]);
    const row = rows.get(key);
    const count = 'count' in e ? e.count : 1;
    if (row) row.count += count;
    else rows.set(key, { ...pick(e), count });
  }
  return [...rows.values()];
}

const pick = ({ day, module, version, organization, team, user, network }: UsageEvent): UsageEvent => ({
  day,
  module,
  version,
  ...(organization !== undefined ? { organization } : {}),
  ...(team !== undefined ? { team } : {}),
  ...(user !== undefined ? { user } : {}),
  ...(network !== undefined ? { network } : {}),
});

/**
 * A segment's downloads as counts per distinct line: a segment repeats the same few lines (a day's callers
 * and versions) thousands of times, so each is parsed once. A line that is not an event (torn by a crash) is
 * skipped. A segment removed meanwhile was folded in.
 */
function readSegment(file: string): UsageRow[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const lines = new Map<string, number>();
  for (const line of text.split('\n')) if (line !== '') lines.set(line, (lines.get(line) ?? 0) + 1);
  const rows: UsageRow[] = [];
  for (const [line, count] of lines) {
    try {
      const e = JSON.parse(line) as UsageEvent;
      if (typeof e.day === 'string' && typeof e.module === 'string' && typeof e.version === 'string') rows.push({ ...pick(e), count });
    } catch {
      // torn
    }
  }
  return rows;
}

function readCounts(dir: string): Counts {
  const file = join(dir, COUNTS_FILE);
  if (!existsSync(file)) return { format: 1, through: 0, rows: [] };
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as Counts;
    if (!Number.isInteger(value.through) || !Array.isArray(value.rows)) throw new Error('expected "through" and "rows"');
    return value;
  } catch (error) {
    throw new MirrorError('CONFIG_INVALID', `The usage counts file "${file}" is malformed: ${(error as Error).message}`, {
      hint: 'Restore it from a backup, or move it aside to keep only the downloads not folded into it yet.',
      cause: error,
    });
  }
}

function segmentNumbers(dir: string): number[] {
  return readdirSync(dir)
    .map((name) => SEGMENT.exec(name)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

function lastByte(fd: number, size: number): number {
  const buffer = Buffer.alloc(1);
  readSync(fd, buffer, 0, 1, size - 1);
  return buffer[0]!;
}
