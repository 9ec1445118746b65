// The usage store: append-only segments folded into counts.json, bounded,
// and whole after a crash at any point (a torn last line, a fold written
// but its segment not yet removed).

import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { readUsage, USAGE_FLUSH_MS, UsageLog, type UsageEvent } from '../../src/usage/store.js';
import { tempDir } from '../helpers.js';

const event = (day: string, version = '1.0.0', organization = 'acme'): UsageEvent => ({ day, module: 'acme/net/aws', version, organization });
/** A day within the store's retention. */
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
const total = (data: string, day?: string) =>
  readUsage(data)
    .filter((r) => day === undefined || r.day === day)
    .reduce((sum, r) => sum + r.count, 0);

describe('UsageLog', () => {
  it('appends each download and reads them back as counts per day, caller, module and version', async () => {
    const data = tempDir();
    const log = new UsageLog(data);
    log.record(event('2025-01-01'));
    log.record(event('2025-01-01'));
    log.record({ day: '2025-01-02', module: 'acme/net/aws', version: '1.0.0', organization: 'acme', team: 'platform' });
    log.record({ day: '2025-01-02', module: 'acme/net/aws', version: '1.1.0', user: 'alice' });
    await log.close();
    expect(readUsage(data).sort((a, b) => (a.day + a.version + (a.team ?? '') < b.day + b.version + (b.team ?? '') ? -1 : 1))).toEqual([
      { day: '2025-01-01', module: 'acme/net/aws', version: '1.0.0', organization: 'acme', count: 2 },
      { day: '2025-01-02', module: 'acme/net/aws', version: '1.0.0', organization: 'acme', team: 'platform', count: 1 },
      { day: '2025-01-02', module: 'acme/net/aws', version: '1.1.0', user: 'alice', count: 1 },
    ]);
  });

  it('writes the downloads of a moment together, off the turn that recorded them, USAGE_FLUSH_MS later', async () => {
    const data = tempDir();
    // The clock is the test's: the write is due when USAGE_FLUSH_MS have passed, however loaded the machine.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const log = new UsageLog(data);
      for (let i = 0; i < 3; i++) log.record(event('2025-01-01'));
      await new Promise((r) => setImmediate(r));
      vi.advanceTimersByTime(USAGE_FLUSH_MS - 1);
      await new Promise((r) => setImmediate(r));
      expect(total(data)).toBe(0);
      vi.advanceTimersByTime(1);
      await vi.waitFor(() => expect(total(data)).toBe(3), { timeout: 2000, interval: 2 });
      expect(readFileSync(join(data, 'usage', '000001.jsonl'), 'utf8').split('\n')).toHaveLength(4);
      await log.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes what is pending on close, and records nothing after it', async () => {
    const data = tempDir();
    const log = new UsageLog(data);
    log.record(event('2025-01-01'));
    await log.close();
    expect(total(data)).toBe(1);
    log.record(event('2025-01-01'));
    await log.close();
    await new Promise((r) => setTimeout(r, USAGE_FLUSH_MS * 2));
    expect(total(data)).toBe(1);
  });

  it('warns when a write fails and keeps recording, the next write on a line of its own', async () => {
    const data = tempDir();
    const log = new UsageLog(data);
    const warnings = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      rmSync(join(data, 'usage'), { recursive: true });
      log.record(event('2025-01-01'));
      await log.flush();
      expect(warnings).toHaveBeenCalledWith(expect.stringMatching(/^warning: usage not recorded in .*usage: ENOENT/));
      mkdirSync(join(data, 'usage'));
      log.record(event('2025-01-02'));
      await log.close();
    } finally {
      warnings.mockRestore();
    }
    expect(total(data, '2025-01-01')).toBe(0);
    expect(total(data, '2025-01-02')).toBe(1);
  });

  it('skips a line torn by a crash, and starts the next write on a line of its own', async () => {
    const data = tempDir();
    const first = new UsageLog(data);
    first.record(event('2025-01-01'));
    await first.close();
    appendFileSync(join(data, 'usage', '000001.jsonl'), '{"day":"2025-01-01","mod');
    expect(total(data)).toBe(1);
    const second = new UsageLog(data);
    second.record(event('2025-01-02'));
    await second.close();
    expect(total(data, '2025-01-01')).toBe(1);
    expect(total(data, '2025-01-02')).toBe(1);
  });

  it('folds full segments into counts.json and stays within its bound, keeping every day it has room for', async () => {
    const data = tempDir();
    const log = new UsageLog(data, 64 * 1024);
    const days = Array.from({ length: 20 }, (_, i) => daysAgo(20 - i));
    for (const day of days) for (let i = 0; i < 100; i++) log.record(event(day, `1.0.${i % 7}`));
    await log.close();
    const files = readdirSync(join(data, 'usage'));
    expect(files).toContain('counts.json');
    const bytes = files.reduce((sum, f) => sum + statSync(join(data, 'usage', f)).size, 0);
    expect(bytes).toBeLessThanOrEqual(64 * 1024);
    expect(total(data)).toBe(2000);
    for (const day of days) expect(total(data, day)).toBe(100);
  });

  it('drops days past the retention, and the oldest days first when the counts outgrow half the bound', async () => {
    const data = tempDir();
    const log = new UsageLog(data, 16 * 1024);
    const days = Array.from({ length: 60 }, (_, i) => daysAgo(60 - i));
    log.record(event(daysAgo(500)));
    for (const day of days) for (let i = 0; i < 20; i++) log.record(event(day, `1.${i}.0`, `org${i % 3}`));
    await log.close();
    expect(total(data, daysAgo(500))).toBe(0);
    const kept = new Set(readUsage(data).map((r) => r.day));
    expect(kept.has(days.at(-1)!)).toBe(true);
    expect(kept.has(days[0]!)).toBe(false);
    // What is kept is whole: the days after the oldest kept one all there, each with all its downloads.
    const oldest = [...kept].sort()[0]!;
    for (const day of days.filter((d) => d > oldest)) expect(total(data, day)).toBe(20);
  });

  it('counts a segment once when a crash came after its fold was written but before it was removed', async () => {
    const data = tempDir();
    const log = new UsageLog(data, 16 * 1024);
    for (let i = 0; i < 400; i++) log.record(event(daysAgo(1)));
    await log.close();
    const counts = JSON.parse(readFileSync(join(data, 'usage', 'counts.json'), 'utf8')) as { through: number };
    // The folded segment put back, as if the removal had not happened.
    const name = `${String(counts.through).padStart(6, '0')}.jsonl`;
    writeFileSync(join(data, 'usage', name), `${JSON.stringify(event(daysAgo(1)))}\n`.repeat(5));
    expect(total(data)).toBe(400);
    const again = new UsageLog(data, 16 * 1024);
    await again.close();
    expect(readdirSync(join(data, 'usage'))).not.toContain(name);
    expect(total(data)).toBe(400);
  });
});
