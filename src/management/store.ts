// The data folder: one JSON file per collection, loaded and checked whole
// (a malformed file stops the server, naming it), changed only through
// `mutate`, which is serialized in this process and, through a lock file,
// with the CLI's bootstrap commands; each change is written atomically before
// it is acknowledged, and files another process changed are reloaded first.

import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic.js';
import { MirrorError } from '../errors.js';
import { withLock } from '../mirror/lock.js';
import { EDITIONS, type Collection, type Data } from './types.js';
import { fileStamp, Looks } from '../file-stamp.js';

const FILES: Record<Collection, string> = {
  settings: 'settings.json',
  users: 'users.json',
  tokens: 'tokens.json',
  teams: 'teams.json',
  organizations: 'organizations.json',
  runs: 'runs.json',
  taskStages: 'task-stages.json',
  taskResults: 'task-results.json',
  registryModules: 'registry-modules.json',
  moduleVersions: 'registry-module-versions.json',
};
const COLLECTIONS = Object.keys(FILES) as Collection[];

export class Store {
  private data: Data;
  private stamps = new Map<Collection, string>();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly looks = new Looks();
  private changes = 0;

  /** `dir` is made by the first change, so a command refused on a folder that does not exist leaves none behind. */
  constructor(readonly dir: string) {
    removeAbandonedTemporaries(dir);
    this.data = {} as Data;
    for (const c of COLLECTIONS) this.load(c);
  }

  /** The current data, reloading files another process has replaced. Treat it as read-only. */
  read(): Data {
    if (this.looks.due()) this.reloadChanged();
    return this.data;
  }

  /**
   * Moves whenever the data may have changed: a change here, or a file another
   * process replaced, seen by `read`. Anything computed from one generation of
   * the data stays right until it moves.
   */
  get generation(): number {
    return this.changes;
  }

  /**
   * Applies `change` to the data and writes the collections it names before
   * resolving. Changes run one at a time, each on the latest data. `change`
   * may run twice (first on a copy), so it alters nothing but `data`.
   */
  mutate<T>(collections: Collection[], change: (data: Data) => T): Promise<T> {
    const run = () => {
      // No folder yet: the change is tried on the empty data first, and one it refuses makes nothing on disk.
      if (!existsSync(this.dir)) change(structuredClone(this.data));
      return withLock(
        join(this.dir, 'store'),
        async () => {
          this.reloadChanged();
          let result: T;
          try {
            result = change(this.data);
          } finally {
            // Even a change that threw may have altered something before it did.
            this.changes++;
          }
          for (const c of collections) {
            const file = join(this.dir, FILES[c]);
            await writeFileAtomic(file, `${JSON.stringify(this.data[c], null, 2)}\n`);
            this.stamps.set(c, stampOf(file));
          }
          return result;
        },
        { waitMs: 30_000, staleMs: 60_000 },
      );
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => {});
    return next;
  }

  private reloadChanged(): void {
    for (const c of COLLECTIONS) {
      if (stampOf(join(this.dir, FILES[c])) !== this.stamps.get(c)) this.load(c);
    }
  }

  private load(c: Collection): void {
    const file = join(this.dir, FILES[c]);
    const stamp = stampOf(file);
    if (!existsSync(file)) {
      (this.data as unknown as Record<string, unknown>)[c] = c === 'settings' ? { edition: 'self-hosted' } : [];
    } else {
      let value: unknown;
      try {
        value = JSON.parse(readFileSync(file, 'utf8'));
      } catch (error) {
        throw new MirrorError('DATA_INVALID', `The data file "${file}" is not valid JSON: ${(error as Error).message}`, {
          hint: 'Fix or restore the file; modmirror writes these files atomically, so a torn file means it was edited by hand or copied halfway.',
        });
      }
      const problem = checkShape(c, value);
      if (problem)
        throw new MirrorError('DATA_INVALID', `The data file "${file}" is malformed: ${problem}`, {
          hint: 'Fix the file, or recreate it with the modmirror user/org/team/token commands.',
        });
      (this.data as unknown as Record<string, unknown>)[c] = value;
    }
    this.stamps.set(c, stamp);
    this.changes++;
  }
}

/** A writer killed mid-write leaves its temporary file; the real file is intact. Old ones are safe to remove. */
function removeAbandonedTemporaries(dir: string): void {
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    if (!name.endsWith('.tmp')) continue;
    const file = join(dir, name);
    try {
      if (Date.now() - statSync(file).mtimeMs > 60_000) rmSync(file);
    } catch {
      // Gone already: another process cleaned it up.
    }
  }
}

function stampOf(file: string): string {
  return fileStamp(file) ?? 'missing';
}

/** Enough checking that the API never meets a value of the wrong shape. */
function checkShape(c: Collection, value: unknown): string | undefined {
  if (c === 'settings') {
    const edition = (value as { edition?: unknown } | null)?.edition;
    return EDITIONS.includes(edition as never) ? undefined : `"edition" must be one of ${EDITIONS.join(', ')}, got ${JSON.stringify(edition)}`;
  }
  if (!Array.isArray(value)) return 'expected a list';
  const required: Record<Exclude<Collection, 'settings'>, string[]> = {
    users: ['id', 'username', 'email', 'passwordHash'],
    tokens: ['id', 'kind', 'subject', 'hash'],
    teams: ['id', 'name', 'organization'],
    organizations: ['name', 'externalId', 'email'],
    runs: ['id', 'organization', 'workspace'],
    taskStages: ['id', 'run', 'stage', 'status'],
    taskResults: ['id', 'taskStage', 'status'],
    registryModules: ['id', 'organization', 'namespace', 'name', 'provider'],
    moduleVersions: ['id', 'module', 'version', 'status'],
  };
  const index = value.findIndex((item) => typeof item !== 'object' || item === null || required[c].some((k) => !(k in item)));
  return index === -1 ? undefined : `entry ${index} lacks one of ${required[c].join(', ')}`;
}
