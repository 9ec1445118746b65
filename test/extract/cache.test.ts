// The parse cache a build shares across versions: bounded by the bytes of
// source it holds, keeping the files used most recently.

import { expect, it } from 'vitest';
import { createExtractCache, extractVersion } from '../../src/extract/index.js';
import type { SourceFile } from '../../src/types.js';

const file = (n: number): SourceFile => ({ path: 'main.tf', mode: 0o644, data: Buffer.from(`variable "v${n}" {\n  default = ${n}\n}\n`) });

it('holds at most its byte limit, evicting the least recently used file first', () => {
  const size = file(0).data.length;
  const cache = createExtractCache(size * 3);
  for (const n of [0, 1, 2]) extractVersion([file(n)], cache);
  extractVersion([file(0)], cache); // used again: now the most recent
  extractVersion([file(3)], cache); // over the limit: file 1 goes, not file 0
  expect(cache.bytes).toBeLessThanOrEqual(size * 3);
  expect(cache.entries.size).toBe(3);
  const held = [...cache.entries.values()].map((e) => (e.parsed as { variables: { name: string }[] }).variables[0]!.name);
  expect(held.sort()).toEqual(['v0', 'v2', 'v3']);
  // A file the cache evicted is parsed again, to the same result.
  expect(extractVersion([file(1)], cache).root.inputs[0]!.name).toBe('v1');
});
