// Bounded parallelism for the build: a fixed number of workers pull from one
// iterator, so work (and the memory it holds) is taken only as a worker frees up.

/** Runs `fn` on each item, at most `limit` at a time; items are taken from the iterator only as a task frees up. */
export async function forEachLimited<T>(items: Iterator<T>, limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  const worker = async () => {
    for (let next = items.next(); !next.done; next = items.next()) await fn(next.value);
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

/** `fn` over every item, at most `limit` at a time, with the results in the items' order. */
export async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  await forEachLimited(items.entries(), limit, async ([i, item]) => {
    results[i] = await fn(item);
  });
  return results;
}

/** Each value of a map in order, removing it as it is taken, so it can be collected once its work is done. */
export function* takeEach<V>(map: Map<string, V>): Generator<V> {
  for (const [key, value] of map) {
    map.delete(key);
    yield value;
  }
}
