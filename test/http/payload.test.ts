import { gunzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { gzipped, payload } from '../../src/http/payload.js';

it('gzips a JSON body once into a buffer that holds only its own bytes', () => {
  const body = JSON.stringify({ modules: Array.from({ length: 100 }, (_, i) => ({ id: `acme/m${i}/aws/1.0.0`, downloads: 0 })) });
  const p = payload(body);
  const zipped = gzipped(p)!;
  expect(gunzipSync(zipped).toString('utf8')).toBe(body);
  // A cached view of zlib's output chunk would keep the whole chunk for each document.
  expect(zipped.buffer.byteLength).toBe(zipped.length);
  expect(gzipped(p)).toBe(zipped);
});

it('leaves small and non-JSON bodies as they are', () => {
  expect(gzipped(payload('{"a":1}'))).toBeUndefined();
  expect(gzipped(payload('x'.repeat(5000), 'text/html; charset=utf-8'))).toBeUndefined();
});
