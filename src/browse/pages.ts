// Where the browse page's rows of a namespace are kept, and how they are cut
// into pages. The boundaries are set by the modules themselves: a page ends
// after a module whose key hashes to a multiple of PAGE_MODULES (and at the
// namespace's end), so they do not move when a module is added elsewhere.
// A write of one module rewrites its page (two, when the module starts or
// stops ending one) and the namespace's list of pages, never the rest: what
// a publish writes follows the module, not the size of its namespace.
// Each page is named by its last module (`NAME.PROVIDER`, as module states
// are), which says which modules it can hold without reading it.

import { createHash } from 'node:crypto';

/** The folder of every namespace's pages. */
export const BROWSE_MODULES_DIR = 'browse/modules';
/** Modules per page, on average; a page's rows are about 100–300 bytes each. */
export const PAGE_MODULES = 32;

/** A namespace's list of pages, `{"pages": [NAME.PROVIDER, ...]}` in module order: what the browse page reads first. */
export const browsePageListFile = (namespace: string) => `${BROWSE_MODULES_DIR}/${namespace}/index.json`;
/** One page of a namespace's rows, `{"modules": [row, ...]}`, named by its last module. */
export const browsePageFile = (namespace: string, page: string) => `${BROWSE_MODULES_DIR}/${namespace}/${page}.json`;
/** Where an older modmirror kept all of a namespace's rows in one file: replaced by pages at the next write. */
export const legacyBrowseNamespaceFile = (namespace: string) => `${BROWSE_MODULES_DIR}/${namespace}.json`;

/** The page a module (`namespace/name/provider`) ends: `NAME.PROVIDER`. */
export function pageName(key: string): string {
  const [, name, provider] = key.split('/');
  return `${name}.${provider}`;
}

/** The module key a page of `namespace` is named by. */
const keyOfPage = (namespace: string, page: string) => `${namespace}/${page.replace('.', '/')}`;

/** Whether a module ends its page: its key's hash, not its place, decides. */
export function endsPage(key: string): boolean {
  return createHash('sha256').update(key).digest().readUInt32BE(0) % PAGE_MODULES === 0;
}

export interface Page {
  name: string;
  /** Its modules, in key order. */
  keys: string[];
}

/** A namespace's modules (`keys`, sorted) cut into pages. */
export function pagesOf(keys: readonly string[]): Page[] {
  const pages: Page[] = [];
  let current: string[] = [];
  for (const key of keys) {
    current.push(key);
    if (endsPage(key)) {
      pages.push({ name: pageName(key), keys: current });
      current = [];
    }
  }
  if (current.length > 0) pages.push({ name: pageName(current.at(-1)!), keys: current });
  return pages;
}

export interface PagePlan extends Page {
  /** False for a page the namespace's list names already, with the same modules, none of them rewritten: it stays as it is. */
  write: boolean;
  /** The listed pages that held this page's modules before: where the rows of the modules not rewritten are. */
  from: string[];
}

/**
 * Which pages of a namespace a write writes, and which it removes: `old`
 * is the page list it replaces (undefined when there is none, and every
 * page is written), `rewritten` says which modules the write changed.
 */
export function planPages(
  namespace: string,
  keys: readonly string[],
  old: readonly string[] | undefined,
  rewritten: (key: string) => boolean,
): { pages: PagePlan[]; removed: string[] } {
  const pages = pagesOf(keys);
  const oldEnds = (old ?? []).map((page) => keyOfPage(namespace, page));
  const oldAt = new Map((old ?? []).map((page, i) => [page, i]));
  const plans = pages.map((page, i): PagePlan => {
    const previous = i > 0 ? pages[i - 1]!.name : undefined;
    const at = oldAt.get(page.name);
    // The same name after the same page: the same range of modules, which only gains modules this write rewrites.
    const same = at !== undefined && (at > 0 ? old![at - 1] : undefined) === previous;
    const write = !same || page.keys.some(rewritten);
    const low = i > 0 ? pages[i - 1]!.keys.at(-1)! : undefined;
    const high = page.keys.at(-1)!;
    // Listed pages whose range, after the end of the one before, meets this page's.
    const from = write ? (old ?? []).filter((_, j) => oldEnds[j]! > (low ?? '') && (j === 0 || oldEnds[j - 1]! < high)) : [];
    return { ...page, write, from };
  });
  const kept = new Set(pages.map((p) => p.name));
  return { pages: plans, removed: (old ?? []).filter((page) => !kept.has(page)) };
}

/** A page list's pages, or undefined when it is not one (then every page is written again). */
export function parsePageList(text: string): string[] | undefined {
  try {
    const { pages } = JSON.parse(text) as { pages?: unknown };
    return Array.isArray(pages) && pages.every((p) => typeof p === 'string' && /^[^/.]+\.[^/.]+$/.test(p)) ? (pages as string[]) : undefined;
  } catch {
    return undefined;
  }
}
