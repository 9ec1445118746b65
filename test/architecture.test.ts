// No import circles between the parts of src/: each folder is one
// part, and so is each file directly in src/. A reader can then draw the data
// flow (config, scan, extract, pack, emit, then browse and hosting; serve over
// its routes and the management API) without an arrow pointing back.
// `import type` counts: a reader follows it all the same.

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const SRC = join(ROOT, 'src');

/** The part of src/ a file belongs to: its top folder, or the file itself. */
function partOf(file: string): string {
  return file.includes('/') ? file.slice(0, file.indexOf('/')) : file.replace(/\.ts$/, '');
}

/** Arrows between parts, each with the file-level imports that make it. */
function importGraph(): Map<string, string[]> {
  const arrows = new Map<string, string[]>();
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  for (const file of files) {
    const text = readFileSync(join(SRC, file), 'utf8');
    // Static imports and re-exports, side-effect imports, and the CLI's imports on demand.
    for (const [, specifier] of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = normalize(join(dirname(file), specifier!)).replace(/\.js$/, '.ts');
      const [from, to] = [partOf(file), partOf(target)];
      if (from === to) continue;
      const key = `${from} -> ${to}`;
      arrows.set(key, [...(arrows.get(key) ?? []), `${file} -> ${target}`]);
    }
  }
  return arrows;
}

/** One circle through the arrows, as the parts in order, or undefined if there is none. */
function findCircle(arrows: Iterable<string>): string[] | undefined {
  const next = new Map<string, string[]>();
  for (const arrow of arrows) {
    const [from, to] = arrow.split(' -> ') as [string, string];
    next.set(from, [...(next.get(from) ?? []), to]);
  }
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (part: string): string[] | undefined => {
    const at = path.indexOf(part);
    if (at !== -1) return [...path.slice(at), part];
    if (done.has(part)) return undefined;
    path.push(part);
    for (const to of next.get(part) ?? []) {
      const circle = visit(to);
      if (circle) return circle;
    }
    path.pop();
    done.add(part);
    return undefined;
  };
  for (const part of [...next.keys()].sort()) {
    const circle = visit(part);
    if (circle) return circle;
  }
  return undefined;
}

describe('imports between the parts of src/', () => {
  const arrows = importGraph();

  it('sees the imports it should (the check itself works)', () => {
    expect(arrows.get('serve -> management')).toContain('serve/index.ts -> management/index.ts');
    expect(arrows.get('serve -> protocol')?.length).toBeGreaterThan(1);
    expect(findCircle(['a -> b', 'b -> c', 'c -> a', 'c -> d'])).toEqual(['a', 'b', 'c', 'a']);
    expect(findCircle(['a -> b', 'a -> c', 'b -> c'])).toBeUndefined();
  });

  it('form no circle', () => {
    const circle = findCircle([...arrows.keys()]);
    const imports = circle?.slice(1).flatMap((to, i) => arrows.get(`${circle[i]} -> ${to}`)!.slice(0, 2));
    expect(circle && `${circle.join(' -> ')}, through ${imports!.join(', ')}`).toBeUndefined();
  });

  it('keep the protocol module, the HTTP helpers and the error type at the bottom', () => {
    for (const leaf of ['protocol', 'http', 'errors', 'types']) {
      const upward = [...arrows.keys()].filter((arrow) => arrow.startsWith(`${leaf} -> `) && !/ -> (protocol|errors|types)$/.test(arrow));
      expect(upward, leaf).toEqual([]);
    }
  });

  it('leave the top of src/ to the CLI entry and what every part shares', () => {
    // Each stage or job is a folder of its own; a new file at the top is a part without a home.
    const top = readdirSync(SRC)
      .filter((f) => f.endsWith('.ts'))
      .sort();
    expect(top).toEqual(['atomic.ts', 'cli.ts', 'concurrency.ts', 'errors.ts', 'file-stamp.ts', 'processes.ts', 'types.ts', 'version-order.ts', 'version.ts']);
  });
});
