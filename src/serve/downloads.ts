// Download counts: each archive fetched through the server counts once, by
// UTC day, so week/month/year are windows over the days (spec 2.9). Counts
// persist in <data>/downloads.json and survive a restart.

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { writeFileAtomic } from '../atomic.js';
import { MirrorError } from '../errors.js';

/**
 * Runs `count` once a GET's whole 200 body has been handed over. On 'close',
 * which always comes, rather than 'finish': a client that exits as soon as
 * it has read the last byte (Terraform, the Go test clients) can close the
 * socket before 'finish'. Nor is `writableEnded` enough: sirv pipes a file
 * stream that learns it is at the end only from one more disk read, so a
 * quick client can hang up after the last byte but before `end()`. The bytes
 * the piped body has handed over, against Content-Length, say it was whole.
 */
export function whenSentWhole(req: IncomingMessage, res: ServerResponse, count: () => void): void {
  let handedOver = 0;
  res.once('pipe', (body: Readable) => body.on('data', (chunk: Buffer) => (handedOver += chunk.length)));
  res.once('close', () => {
    if (req.method !== 'GET' || res.statusCode !== 200) return;
    // Readable here because serveFile sets its headers before sirv's writeHead, which then merges into them.
    if (res.writableEnded || handedOver === Number(res.getHeader('content-length'))) count();
  });
}

type DayCounts = Record<string, number>;
export interface DownloadWindows {
  week: number;
  month: number;
  year: number;
  total: number;
}

const FILE = 'downloads.json';
const FLUSH_DELAY_MS = 500;
const DAY_MS = 86_400_000;

export class DownloadCounter {
  private readonly file: string;
  private readonly counts: Map<string, DayCounts>;
  private readonly totals = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** Grows with every recorded download, so answers that show counts can be cached until it moves. */
  epoch = 0;

  constructor(dataDir: string) {
    this.file = join(dataDir, FILE);
    mkdirSync(dataDir, { recursive: true });
    this.counts = new Map(Object.entries(readCounts(this.file)));
    for (const [key, days] of this.counts) this.totals.set(key, sum(Object.values(days)));
  }

  record(moduleKey: string, now = new Date()): void {
    const day = now.toISOString().slice(0, 10);
    let days = this.counts.get(moduleKey);
    if (!days) this.counts.set(moduleKey, (days = {}));
    days[day] = (days[day] ?? 0) + 1;
    this.totals.set(moduleKey, (this.totals.get(moduleKey) ?? 0) + 1);
    this.epoch++;
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
  }

  total(moduleKey: string): number {
    return this.totals.get(moduleKey) ?? 0;
  }

  windows(moduleKey: string, now = new Date()): DownloadWindows {
    const days = this.counts.get(moduleKey) ?? {};
    const today = Date.parse(now.toISOString().slice(0, 10));
    const within = (n: number) =>
      sum(
        Object.entries(days)
          .filter(([day]) => today - Date.parse(day) < n * DAY_MS)
          .map(([, c]) => c),
      );
    return { week: within(7), month: within(30), year: within(365), total: this.total(moduleKey) };
  }

  /**
   * Writes the counts now; serialized, so the file always holds a complete
   * state. Never rejects: a write that fails (the data folder removed, a full
   * disk) is reported, and the counts stay in memory for the next flush, as
   * counting must never stop the server, or its shutdown.
   */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const snapshot = JSON.stringify(Object.fromEntries([...this.counts].sort(([a], [b]) => (a < b ? -1 : 1))), null, 1);
    this.writing = this.writing.then(() =>
      writeFileAtomic(this.file, `${snapshot}\n`).catch((error: unknown) => {
        console.error(`warning: download counts not saved to ${this.file}: ${(error as Error).message}`);
      }),
    );
    return this.writing;
  }
}

function readCounts(file: string): Record<string, DayCounts> {
  if (!existsSync(file)) return {};
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('expected an object of modules');
    return value as Record<string, DayCounts>;
  } catch (error) {
    throw new MirrorError('CONFIG_INVALID', `The download counts file "${file}" is malformed: ${(error as Error).message}`, {
      hint: 'Restore it from a backup, or delete it to start counting from zero.',
    });
  }
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
