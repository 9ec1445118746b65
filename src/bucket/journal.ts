// What an interrupted upload had already stored, kept on this machine: the
// next push to the same place, from the same bucket manifest, skips those
// objects. One line per object, appended as each is stored, so a kill loses
// at most the objects in flight.

import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { BucketLocation } from './location.js';

export interface Journal {
  /** Objects stored by an earlier, interrupted push from the same bucket manifest: path -> id. */
  done: Record<string, string>;
  add(rel: string, id: string): void;
  /** The push is complete: nothing to resume. */
  finish(): void;
}

export function openJournal(cacheDir: string, location: BucketLocation, base: string): Journal {
  const where = `${location.endpoint ?? ''} ${location.bucket} ${location.prefix}`;
  const file = join(cacheDir, 'push', `${createHash('sha256').update(where).digest('hex').slice(0, 16)}.jsonl`);
  const done: Record<string, string> = {};
  let lines: string[] = [];
  try {
    lines = readFileSync(file, 'utf8').split('\n');
  } catch {
    // No journal: nothing was interrupted.
  }
  const header = JSON.stringify({ base });
  if (lines[0] === header) {
    for (const line of lines.slice(1)) {
      try {
        const { rel, id } = JSON.parse(line) as { rel: string; id: string };
        done[rel] = id;
      } catch {
        // The line being written when the push was killed.
      }
    }
  }
  let started = false;
  return {
    done,
    add(rel, id) {
      if (!started) {
        mkdirSync(join(cacheDir, 'push'), { recursive: true });
        if (lines[0] !== header) writeFileSync(file, `${header}\n`);
        started = true;
      }
      appendFileSync(file, `${JSON.stringify({ rel, id })}\n`);
    },
    finish: () => rmSync(file, { force: true }),
  };
}
