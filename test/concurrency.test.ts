import { expect, it } from 'vitest';
import { mapLimited, takeEach } from '../src/concurrency.js';

it('runs at most `limit` tasks at once and keeps the results in order', async () => {
  let running = 0;
  let most = 0;
  const results = await mapLimited([5, 1, 4, 2, 3, 0], 2, async (ms) => {
    most = Math.max(most, ++running);
    await new Promise((r) => setTimeout(r, ms));
    running--;
    return ms * 10;
  });
  expect(results).toEqual([50, 10, 40, 20, 30, 0]);
  expect(most).toBe(2);
});

it('takes each value out of the map as it goes', () => {
  const map = new Map([
    ['a', 1],
    ['b', 2],
  ]);
  const taken = takeEach(map);
  expect(taken.next().value).toBe(1);
  expect([...map.keys()]).toEqual(['b']);
  expect([...taken]).toEqual([2]);
  expect(map.size).toBe(0);
});
