// One request to the upstream for many callers: the first caller for a key
// starts the work, the others wait for the same promise, and the key is free
// again once it settles (its result is kept elsewhere, or not at all).

export class SingleFlight {
  private readonly running = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const already = this.running.get(key);
    if (already) return already as Promise<T>;
    const started = work().finally(() => this.running.delete(key));
    this.running.set(key, started);
    return started;
  }
}
