// When each token was last used, without a file write per request: a use is
// noted in memory, and a token whose recorded time is less than a minute old
// is not noted at all. Notes are written together, one change of
// tokens.json for every token used in the last second, so a busy server
// writes that file at most once a second and each token at most once a
// minute. A server killed before a write loses at most that second's notes.

import type { Store } from './store.js';
import type { Token } from './types.js';

/** How stale a recorded use may get before the next use is written. */
export const LAST_USED_PRECISION_MS = 60_000;
/** How long notes gather before they are written together. */
const GATHER_MS = 1_000;

export class TokenUse {
  private pending = new Map<string, string>();
  /** When this process last noted each token, so a use while its note is being written is not noted again. */
  private noted = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly store: Store) {}

  /** Notes that `token` was just used. */
  used(token: Token, now = Date.now()): void {
    const recorded = Math.max(token.lastUsedAt ? Date.parse(token.lastUsedAt) : -Infinity, this.noted.get(token.id) ?? -Infinity);
    if (now - recorded < LAST_USED_PRECISION_MS) return;
    this.noted.set(token.id, now);
    this.pending.set(token.id, new Date(now).toISOString());
    // Unref'd: a server closing is not kept waiting; close() writes what is pending.
    this.timer ??= setTimeout(() => void this.flush(), GATHER_MS).unref();
  }

  /** Writes the pending notes now (a server closing calls it). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return this.writing;
    const notes = this.pending;
    this.pending = new Map();
    const stale = Date.now() - LAST_USED_PRECISION_MS;
    for (const [id, at] of this.noted) if (at < stale) this.noted.delete(id);
    this.writing = this.writing.then(() =>
      this.store
        .mutate(['tokens'], (data) => {
          // A token revoked meanwhile is gone: nothing to note.
          for (const token of data.tokens) {
            const at = notes.get(token.id);
            if (at !== undefined) token.lastUsedAt = at;
          }
        })
        .catch((error: unknown) => {
          // Last-used is a convenience: a failed write (a full disk) never fails a request.
          process.emitWarning(`modmirror: could not record when tokens were last used: ${(error as Error).message}`);
        }),
    );
    return this.writing;
  }
}
