// What a write into a bucket reads of the browse page's pages (browse/pages.ts)
// before the local writer derives them: for each namespace it writes, the
// list of pages, and the pages it replaces, planned as the writer plans them
// (with every module of the write's families taken as rewritten, which only
// adds pages); or, for a namespace with no list yet, the one file an older
// modmirror kept. The rows those lack are made from module states, which the
// caller fetches: a stand-in state would fail the writer.

import { browsePageFile, browsePageListFile, legacyBrowseNamespaceFile, parsePageList, planPages } from '../browse/pages.js';
import type { StoredObject } from './store.js';

export interface BrowsedNamespace {
  namespace: string;
  /** Its modules, sorted. */
  keys: string[];
  /** Whether it has a folder of pages in the bucket. */
  paged: boolean;
}

/** Fetches (and keeps, through `fetch`) what deriving the pages of `namespaces` reads; returns the modules whose states it needs. */
export async function browseReads(
  fetch: (rels: string[]) => Promise<[string, StoredObject][]>,
  namespaces: BrowsedNamespace[],
  rewritten: ReadonlySet<string>,
): Promise<string[]> {
  const lists = new Map((await fetch(namespaces.filter((n) => n.paged).map((n) => browsePageListFile(n.namespace)))).map(([rel, o]) => [rel, o.body]));
  const legacies = new Map(
    (await fetch(namespaces.filter((n) => !lists.has(browsePageListFile(n.namespace))).map((n) => legacyBrowseNamespaceFile(n.namespace)))).map(([rel, o]) => [
      rel,
      o.body,
    ]),
  );
  const plans = namespaces.map(({ namespace, keys }) => {
    const list = lists.get(browsePageListFile(namespace));
    const old = list ? parsePageList(list.toString('utf8')) : undefined;
    const legacy = old === undefined ? rowKeys(legacies.get(legacyBrowseNamespaceFile(namespace))) : new Set<string>();
    return { namespace, legacy, pages: planPages(namespace, keys, old, (key) => rewritten.has(key)).pages.filter((p) => p.write) };
  });
  const wanted = [...new Set(plans.flatMap(({ namespace, pages }) => pages.flatMap((p) => p.from.map((page) => browsePageFile(namespace, page)))))];
  const fetched = new Map((await fetch(wanted)).map(([rel, o]) => [rel, rowKeys(o.body)]));
  const lacking: string[] = [];
  for (const { namespace, legacy, pages } of plans) {
    for (const page of pages) {
      const held = (key: string) => legacy.has(key) || page.from.some((from) => fetched.get(browsePageFile(namespace, from))?.has(key) === true);
      for (const key of page.keys) if (!rewritten.has(key) && !held(key)) lacking.push(key);
    }
  }
  return lacking;
}

/** The modules a page (or an older modmirror's namespace file) has rows for; none when it is unreadable. */
function rowKeys(body: Buffer | undefined): Set<string> {
  if (!body) return new Set();
  try {
    const { modules } = JSON.parse(body.toString('utf8')) as { modules: unknown[][] };
    return new Set(modules.map((row) => row.slice(0, 3).join('/')));
  } catch {
    return new Set();
  }
}
