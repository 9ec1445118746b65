// Failed sign-ins slow down whoever keeps failing: an account after a few
// wrong passwords, an address after more (many people may share one). Past
// its free failures a key is locked for a while, doubling with each further
// failure; a lock refuses the attempt before any password is checked, so
// guessing gains nothing from it. Kept in memory: a restart forgets, which
// costs an attacker a restart of the server per handful of guesses.

/** Failures allowed before a lock, per account and per client address. */
export const FREE_FAILURES = { account: 5, address: 20 } as const;
/** The first lock; each failure after it doubles it, up to the longest. */
export const FIRST_LOCK_SECONDS = 30;
export const LONGEST_LOCK_SECONDS = 15 * 60;
/** A key's failures are forgotten this long after its last one. */
const FORGET_AFTER_MS = 15 * 60_000;
/** Bounds memory under a spray of names: the oldest keys go first. */
const MAX_KEYS = 10_000;

interface Failures {
  count: number;
  last: number;
  lockedUntil: number;
}

export class Throttle {
  private keys = new Map<string, Failures>();

  /** Seconds until `key` may try again; 0 when it may now. */
  wait(key: string, now = Date.now()): number {
    const entry = this.current(key, now);
    return entry ? Math.max(0, Math.ceil((entry.lockedUntil - now) / 1000)) : 0;
  }

  failed(key: string, free: number, now = Date.now()): void {
    const entry = this.current(key, now) ?? { count: 0, last: now, lockedUntil: 0 };
    entry.count++;
    entry.last = now;
    if (entry.count >= free) {
      const seconds = Math.min(LONGEST_LOCK_SECONDS, FIRST_LOCK_SECONDS * 2 ** Math.min(entry.count - free, 16));
      entry.lockedUntil = now + seconds * 1000;
    }
    this.keys.delete(key);
    this.keys.set(key, entry);
    if (this.keys.size > MAX_KEYS) this.keys.delete(this.keys.keys().next().value!);
  }

  succeeded(key: string): void {
    this.keys.delete(key);
  }

  private current(key: string, now: number): Failures | undefined {
    const entry = this.keys.get(key);
    if (entry && now - entry.last > FORGET_AFTER_MS && now >= entry.lockedUntil) {
      this.keys.delete(key);
      return undefined;
    }
    return entry;
  }
}
