// Symbolic links inside a module version's tree, replaced by what they point
// at. Real modules link shared files into their examples (git mode 120000).
// Terraform and OpenTofu unpack a registry archive with go-getter, whose untar
// has had no case for symlink entries since 2019 (its symlink support was
// reverted a month after it landed): a link entry becomes an empty file, and a
// link to a folder an empty file where the folder should be. So a link inside
// the tree is carried as the regular file (or folder of files) it points to,
// and extraction reads the same files. A link that leaves the tree, loops, or
// points at nothing is left out with a warning; nothing outside is ever read.

import type { VersionFile } from '../types.js';
import { showName } from './names.js';

export interface SymlinkEntry {
  /** POSIX path of the link relative to the module root. */
  path: string;
  /** The link's text, as `readlink` or git's blob gives it. */
  target: string;
}

export interface ResolvedTree<F extends VersionFile = VersionFile> {
  files: F[];
  /** One per link left out, naming it: `path: left out: why (-> target)`. */
  warnings: string[];
}

/** Links followed in one lookup before calling it a loop, as Linux's ELOOP limit. */
const MAX_HOPS = 40;

type Lookup = { real: string } | 'outside' | 'loop';

interface Tree<F extends VersionFile> {
  files: Map<string, F>;
  links: Map<string, string>;
  /** Folder (`''` for the root) -> full paths of its entries, sorted. */
  children: Map<string, string[]>;
}

const parentOf = (path: string) => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');
const join = (dir: string, name: string) => (dir === '' ? name : `${dir}/${name}`);

/** The tree as a client unpacking the archive sees it: every in-tree link replaced by its target's files. */
export function resolveLinks<F extends VersionFile>(files: F[], links: SymlinkEntry[]): ResolvedTree<F> {
  if (links.length === 0) return { files, warnings: [] };
  const tree: Tree<F> = { files: new Map(files.map((f) => [f.path, f])), links: new Map(links.map((l) => [l.path, l.target])), children: new Map() };
  for (const path of [...tree.files.keys(), ...tree.links.keys()]) {
    // Register the entry under its folder, and each folder under its parent, up to the root.
    for (let child = path, dir = parentOf(path); ; child = dir, dir = parentOf(dir)) {
      const known = tree.children.get(dir);
      if (known?.includes(child)) break;
      if (known) known.push(child);
      else tree.children.set(dir, [child]);
      if (dir === '') break;
    }
  }
  for (const list of tree.children.values()) list.sort();
  const out: ResolvedTree<F> = { files: [], warnings: [] };
  walk(tree, '', '', [''], out);
  return out;
}

/**
 * Every file under the real folder `dir`, placed under `visible`. `stack`
 * holds the real folders being expanded: a folder link to one of them, or to
 * a folder above one, would expand forever.
 */
function walk<F extends VersionFile>(tree: Tree<F>, dir: string, visible: string, stack: string[], out: ResolvedTree<F>): void {
  for (const child of tree.children.get(dir) ?? []) {
    const path = join(visible, child.slice(dir === '' ? 0 : dir.length + 1));
    const file = tree.files.get(child);
    if (file) {
      out.files.push(path === file.path ? file : { ...file, path });
      continue;
    }
    const target = tree.links.get(child);
    if (target === undefined) {
      walk(tree, child, path, [...stack, child], out);
      continue;
    }
    const leftOut = (why: string) => out.warnings.push(`${showName(path)}: left out: ${why} (-> ${showName(target)})`);
    const found = lookup(tree, child, { hops: 0 });
    if (found === 'outside') leftOut('the link points outside the module');
    else if (found === 'loop') leftOut('the link loops');
    else if (tree.files.has(found.real)) out.files.push({ ...tree.files.get(found.real)!, path });
    else if (!tree.children.has(found.real)) leftOut('the link points to nothing in the module');
    else if (stack.some((s) => s === found.real || found.real === '' || s.startsWith(`${found.real}/`)))
      leftOut('the link loops: it points to a folder that contains it');
    else walk(tree, found.real, path, [...stack, found.real], out);
  }
}

/** Resolves `path` component by component, following links, as the kernel would inside the module root. */
function lookup(tree: Tree<VersionFile>, path: string, budget: { hops: number }): Lookup {
  let real = '';
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (real === '') return 'outside';
      real = parentOf(real);
      continue;
    }
    const next = join(real, part);
    const target = tree.links.get(next);
    if (target === undefined) {
      real = next;
      continue;
    }
    if (++budget.hops > MAX_HOPS) return 'loop';
    if (target.startsWith('/') || /^[A-Za-z]:[\\/]/.test(target)) return 'outside';
    // A relative target is read from the link's own (real) folder.
    const found = lookup(tree, join(real, target), budget);
    if (typeof found === 'string') return found;
    real = found.real;
  }
  return { real };
}
