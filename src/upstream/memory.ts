// What the cache remembers of the upstream's answers, and how an upstream
// failure is answered: values believed until they expire (a bounded number:
// anyone can ask for any name), and a failure as a 502 or a 504.

import { MirrorError, messageOf } from '../errors.js';

/** Entries of each memory kept, at most. */
const MAX_ENTRIES = 10_000;

/** Values believed until they expire, the oldest dropped first past MAX_ENTRIES. */
export class Memory<T> {
  private readonly entries = new Map<string, { value: T; until: number }>();

  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (entry && Date.now() < entry.until) return entry.value;
    if (entry) this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: T, ms: number): T {
    this.entries.delete(key);
    this.entries.set(key, { value, until: Date.now() + ms });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }
}

/** An upstream failure as the server answers it when it holds nothing: 504 when the upstream did not answer in time, else 502. */
export function gatewayError(error: unknown, what: string, origin: string): MirrorError {
  if (error instanceof MirrorError && (error.code === 'BAD_GATEWAY' || error.code === 'GATEWAY_TIMEOUT')) return error;
  const timedOut = causes(error).some((e) => {
    const code = (e as { code?: unknown }).code;
    return typeof code === 'string' && /TIMEOUT/.test(code);
  });
  return new MirrorError(timedOut ? 'GATEWAY_TIMEOUT' : 'BAD_GATEWAY', `The upstream ${origin} could not give ${what}: ${messageOf(error)}`, {
    hint: 'The mirror holds nothing to answer with; try again once the upstream answers.',
    cause: error,
  });
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error; e !== undefined && e !== null && chain.length < 10; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}
