// verify's check of the browse page's rows of a namespace (browse/pages.ts):
// its list names the pages its modules make, and each page has the rows the
// module states make. A namespace an older modmirror wrote, with one file of
// rows and no list, is checked as that file until a write replaces it.

import { existsSync } from 'node:fs';
import { browseRow } from '../browse/index.js';
import { browsePageFile, browsePageListFile, legacyBrowseNamespaceFile, pagesOf } from '../browse/pages.js';
import type { ModulesView } from '../mirror/view.js';

type Json = Record<string, unknown>;

export interface BrowseCheck {
  at: (rel: string) => string;
  json: (rel: string) => Promise<Json | undefined>;
  problem: (path: string, message: string) => void;
}

/**
 * The pages of `namespace` agree with the states: every row of every page
 * for a whole mirror; for a change, the list and the rows of the modules it
 * wrote (`keys`), so a publish reads its own page, not the namespace's.
 */
export async function verifyBrowsePages(namespace: string, view: ModulesView, keys: string[] | undefined, check: BrowseCheck): Promise<void> {
  const { at, json, problem } = check;
  const modules = view.modulesIn(namespace);
  const rowOf = (key: string) => {
    const listing = view.listing(key);
    return listing && listing.versions > 0 && listing.latest ? [browseRow(listing.latest, listing.versions, listing.calls)] : [];
  };
  const checkRows = (rel: string, rows: unknown[][] | undefined, shownKeys: string[]) => {
    if (rows === undefined) return;
    const wanted = keys === undefined ? undefined : new Set(keys);
    const shown = wanted ? rows.filter((row) => wanted.has(row.slice(0, 3).join('/'))) : rows;
    const expected = shownKeys.filter((key) => !wanted || wanted.has(key)).flatMap(rowOf);
    if (JSON.stringify(shown) !== JSON.stringify(expected)) problem(rel, 'disagrees with the module states');
  };
  const listFile = browsePageListFile(namespace);
  const legacy = legacyBrowseNamespaceFile(namespace);
  if (!existsSync(at(listFile)) && existsSync(at(legacy))) {
    checkRows(legacy, (await json(legacy))?.['modules'] as unknown[][] | undefined, modules);
    return;
  }
  const list = await json(listFile);
  if (!list) return;
  const pages = pagesOf(modules);
  if (JSON.stringify(list['pages']) !== JSON.stringify(pages.map((p) => p.name))) {
    problem(listFile, 'does not list the pages the module states make');
    return;
  }
  for (const page of pages) {
    if (keys !== undefined && !page.keys.some((key) => keys.includes(key))) continue;
    const rel = browsePageFile(namespace, page.name);
    checkRows(rel, (await json(rel))?.['modules'] as unknown[][] | undefined, page.keys);
  }
}
