import { describe, expect, it } from 'vitest';
import { resolveLinks, type SymlinkEntry } from '../../src/scan/links.js';
import type { SourceFile } from '../../src/types.js';

const file = (path: string, text = path, mode = 0o644): SourceFile => ({ path, mode, data: Buffer.from(text) });
const link = (path: string, target: string): SymlinkEntry => ({ path, target });
const tree = (files: SourceFile[], links: SymlinkEntry[]) => {
  const { files: out, warnings } = resolveLinks(files, links);
  return { files: Object.fromEntries(out.map((f) => [f.path, f.data.toString()])), warnings };
};

describe('resolveLinks', () => {
  it('returns the files untouched when there is no link', () => {
    const files = [file('main.tf')];
    expect(resolveLinks(files, []).files).toBe(files);
  });

  it('replaces a link to a file by that file, keeping its mode', () => {
    const { files, warnings } = resolveLinks(
      [file('a/main.tf', 'x'), file('a/run.sh', '#!', 0o755)],
      [link('b/main.tf', '../a/main.tf'), link('b/run.sh', '../a/run.sh')],
    );
    expect(warnings).toEqual([]);
    expect(files.map((f) => [f.path, f.data.toString(), f.mode])).toEqual([
      ['a/main.tf', 'x', 0o644],
      ['a/run.sh', '#!', 0o755],
      ['b/main.tf', 'x', 0o644],
      ['b/run.sh', '#!', 0o755],
    ]);
  });

  it('expands a link to a folder, and follows chains of links', () => {
    const { files, warnings } = tree(
      [file('modules/m/main.tf'), file('modules/m/sub/x.tf')],
      [link('examples/e', '../modules/m'), link('examples/f', 'e'), link('examples/g.tf', './f/sub/x.tf')],
    );
    expect(warnings).toEqual([]);
    expect(files).toEqual({
      'modules/m/main.tf': 'modules/m/main.tf',
      'modules/m/sub/x.tf': 'modules/m/sub/x.tf',
      'examples/e/main.tf': 'modules/m/main.tf',
      'examples/e/sub/x.tf': 'modules/m/sub/x.tf',
      'examples/f/main.tf': 'modules/m/main.tf',
      'examples/f/sub/x.tf': 'modules/m/sub/x.tf',
      'examples/g.tf': 'modules/m/sub/x.tf',
    });
  });

  it('resolves `..` from where a folder link really points, as the kernel does', () => {
    const { files } = tree([file('shared/a/main.tf', 'a'), file('shared/b.tf', 'b')], [link('x', 'shared/a'), link('y.tf', 'x/../b.tf')]);
    expect(files['y.tf']).toBe('b');
  });

  it('leaves out, with a warning naming each, links that escape, loop or point to nothing', () => {
    const { files, warnings } = tree(
      [file('main.tf')],
      [
        link('abs.tf', '/etc/passwd'),
        link('up.tf', '../../secret.tf'),
        link('self', '.'),
        link('parent/loop', '..'),
        link('a.tf', 'b.tf'),
        link('b.tf', 'a.tf'),
        link('gone.tf', 'nothing.tf'),
      ],
    );
    expect(Object.keys(files)).toEqual(['main.tf']);
    expect(warnings.sort()).toEqual([
      'a.tf: left out: the link loops (-> b.tf)',
      'abs.tf: left out: the link points outside the module (-> /etc/passwd)',
      'b.tf: left out: the link loops (-> a.tf)',
      'gone.tf: left out: the link points to nothing in the module (-> nothing.tf)',
      'parent/loop: left out: the link loops: it points to a folder that contains it (-> ..)',
      'self: left out: the link loops: it points to a folder that contains it (-> .)',
      'up.tf: left out: the link points outside the module (-> ../../secret.tf)',
    ]);
  });

  it('stops two folders linking to each other after one round', () => {
    const { files, warnings } = tree([file('a/x.tf'), file('b/y.tf')], [link('a/to-b', '../b'), link('b/to-a', '../a')]);
    expect(Object.keys(files).sort()).toEqual(['a/to-b/y.tf', 'a/x.tf', 'b/to-a/x.tf', 'b/y.tf']);
    expect(warnings).toEqual([
      'a/to-b/to-a: left out: the link loops: it points to a folder that contains it (-> ../a)',
      'b/to-a/to-b: left out: the link loops: it points to a folder that contains it (-> ../b)',
    ]);
  });
});
