import { describe, expect, it } from 'vitest';
import { SingleFlight } from '../../src/upstream/flight.js';

describe('SingleFlight', () => {
  it('runs the work once for callers that come while it runs, and again once it has settled, failure included', async () => {
    const flights = new SingleFlight();
    let runs = 0;
    let finish: (value: string) => void = () => {};
    const work = () => {
      runs++;
      return new Promise<string>((resolve) => (finish = resolve));
    };
    const waiting = [flights.run('a', work), flights.run('a', work), flights.run('a', work)];
    const other = flights.run('b', () => Promise.reject(new Error('upstream down')));
    finish('done');
    expect(await Promise.all(waiting)).toEqual(['done', 'done', 'done']);
    expect(runs).toBe(1);
    await expect(other).rejects.toThrow('upstream down');
    const again = flights.run('a', work);
    finish('later');
    expect(await again).toBe('later');
    expect(runs).toBe(2);
    expect(await flights.run('b', () => Promise.resolve('back'))).toBe('back');
  });
});
