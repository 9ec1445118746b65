// What a sign-in keeps between its requests (a pending terraform login, an
// unused code, a provider's state) is held in memory for minutes and
// bounded: anyone may start sign-ins, and a flood must not grow serve.

/** Drops the entries whose time is up, then the oldest beyond `max` (a Map keeps the order they were added in). */
export function sweepPending<V>(entries: Map<string, V>, expired: (value: V) => boolean, max: number): void {
  for (const [key, value] of entries) if (expired(value)) entries.delete(key);
  for (const key of entries.keys()) {
    if (entries.size <= max) break;
    entries.delete(key);
  }
}

/** How many of each kind a sign-in keeps waiting at once. */
export const MAX_PENDING = 10_000;
