// `versions-index.json`: each module's versions, newest first, as the manifest
// lists them. The server loads this at start instead of the manifest, which
// also carries every archive's path, digest and date (36 MB at 100,000
// versions, and a heap of that size left behind after parsing it).

/** Module key (`ns/name/provider`) -> versions, newest first. */
export type VersionsIndex = Map<string, string[]>;

/** Sorted by key like the manifest; one module a line, so a publish shows as a one-line diff. */
export function versionsIndexText(modules: [key: string, versions: string[]][]): string {
  const lines = modules.map(([key, versions]) => `${JSON.stringify(key)}:${JSON.stringify(versions)}`);
  return lines.length === 0 ? '{"modules":{}}\n' : `{"modules":{\n${lines.join(',\n')}\n}}\n`;
}

/** The index in a parsed `versions-index.json`; throws naming the first entry that is not a list of strings. */
export function versionsIndexOf(document: unknown): VersionsIndex {
  const value = (document as { modules?: unknown } | null)?.modules;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('no "modules" object');
  const index: VersionsIndex = new Map();
  for (const [key, versions] of Object.entries(value)) {
    if (!Array.isArray(versions) || !versions.every((v) => typeof v === 'string')) throw new Error(`${key}: expected a list of version strings`);
    index.set(key, versions);
  }
  return index;
}
