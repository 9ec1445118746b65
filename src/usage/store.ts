// Who downloaded which module version, by day: in the data folder's usage/,
// append-only and bounded. Each download is one JSON line appended to the
// newest segment (NNNNNN.jsonl). When a segment reaches its size it is
// closed and folded into counts.json (one row per day, caller, module and
// version), written whole and fsynced, with the number of the last segment
// it holds; only then is that segment removed. So a crash (kill -9) at any
// point loses no day already written: a torn last line is skipped, and a
// segment both folded in and still there is counted once. counts.json keeps
// RETENTION_DAYS days and stays under half the store's bound, the oldest
// days dropped first.

import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
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
const SEGMENT = /^(\d{6})\.jsonl$/;
const DAY_MS = 86_400_000;

const segmentName = (n: number) => `${String(n).padStart(6, '0')}.jsonl`;

export class UsageLog {
  private readonly dir: string;
  private readonly segmentBytes: number;
  private fd: number;
  private number: number;
  private size: number;
  private pending: string[] = [];
  private scheduled = false;
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
    this.fd = openSync(join(this.dir, segmentName(this.number)), 'a+');
    this.size = fstatSync(this.fd).size;
    // A line torn by a crash: end it, so the next one starts on a line of its own (the reader skips the torn one).
    if (this.size > 0 && lastByte(this.fd, this.size) !== 0x0a) this.size += writeSync(this.fd, '\n');
  }

  /** Appends a download; written within the same turn of the event loop as the others of that turn. */
  record(event: UsageEvent): void {
    this.pending.push(`${JSON.stringify(event)}\n`);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Writes what is pending now; a full segment is closed and folded into counts.json. */
  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0 || this.closed) return;
    const text = this.pending.join('');
    this.pending = [];
    try {
      this.size += writeSync(this.fd, text);
    } catch (error) {
      // Recording must never stop serving: say so, and keep going.
      console.error(`warning: usage not recorded in ${this.dir}: ${(error as Error).message}`);
      return;
    }
    if (this.size >= this.segmentBytes) this.rotate();
  }

  /** Everything written, and the last fold finished; once, however often it is called (a server may be closed twice). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    await this.folding;
    closeSync(this.fd);
  }

  private rotate(): void {
    closeSync(this.fd);
    const full = this.number++;
    this.fd = openSync(join(this.dir, segmentName(this.number)), 'a+');
    this.size = 0;
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
  const segments = segmentNumbers(dir).map((n) => ({ n, events: readSegment(join(dir, segmentName(n))) }));
  const counts = readCounts(dir);
  return aggregate([...counts.rows, ...segments.filter((s) => s.n > counts.through).flatMap((s) => s.events)]);
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

/** A segment's events; a line that is not one (torn by a crash) is skipped. A segment removed meanwhile was folded in. */
function readSegment(file: string): UsageEvent[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const events: UsageEvent[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      const e = JSON.parse(line) as UsageEvent;
      if (typeof e.day === 'string' && typeof e.module === 'string' && typeof e.version === 'string') events.push(e);
    } catch {
      // torn
    }
  }
  return events;
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
