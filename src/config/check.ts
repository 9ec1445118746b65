// How every section of mirror.config.yaml is checked: each section's file
// collects its problems with a Checker, each at the key path it is about, and
// index.ts reports them all at once with the file and line of each key.

export type KeyPath = (string | number)[];

export interface Problem {
  path: KeyPath;
  message: string;
}

/** A value as the config wrote it, for messages: `"abc"`, `3`, `[1,2]`. */
export const show = (value: unknown): string => JSON.stringify(value) ?? String(value);

/** An absolute http(s) URL, as `baseUrl` and `--base-url` must be. */
export function isAbsoluteHttpUrl(value: string): boolean {
  return /^https?:\/\/[^/]+/.test(value);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What a list of strings holds: `list` names the items as a list ("key files"), `item` one of them ("a key file"). */
export interface ListSpec {
  list: string;
  item: string;
  mayBeEmpty?: boolean;
  check?: (item: string) => string | undefined;
}

export class Checker {
  readonly problems: Problem[] = [];

  /** Records `message` at `path` unless `ok`; returns `ok`, so a check can guard the ones that need it. */
  expect(ok: boolean, path: KeyPath, message: string): boolean {
    if (!ok) this.problems.push({ path, message });
    return ok;
  }

  /** A mapping, or a problem saying what was expected instead. */
  mapping(value: unknown, path: KeyPath, expected: string): value is Record<string, unknown> {
    return this.expect(isRecord(value), path, expected);
  }

  /** Keys not in `allowed` are problems; one that differs from an allowed key only in case, `_` or `-` is named. */
  knownKeys(obj: Record<string, unknown>, allowed: readonly string[], path: KeyPath): void {
    for (const key of Object.keys(obj)) {
      if (allowed.includes(key)) continue;
      const meant = allowed.find((candidate) => spelling(candidate) === spelling(key));
      this.problems.push({
        path: [...path, key],
        message: meant === undefined ? `unknown key; expected one of ${allowed.join(', ')}` : `unknown key; did you mean ${meant}?`,
      });
    }
  }

  optionalString(obj: Record<string, unknown>, key: string, path: KeyPath): void {
    if (key in obj) this.expect(typeof obj[key] === 'string', [...path, key], `expected a string, got ${show(obj[key])}`);
  }

  optionalBoolean(obj: Record<string, unknown>, key: string, path: KeyPath): void {
    if (key in obj) this.expect(typeof obj[key] === 'boolean', [...path, key], `expected true or false, got ${show(obj[key])}`);
  }

  /** A list of non-empty strings at `path`, each passed to the spec's `check` (which returns a problem or undefined). */
  stringList(value: unknown, path: KeyPath, spec: ListSpec): void {
    const ok = Array.isArray(value) && (spec.mayBeEmpty === true || value.length > 0);
    if (!this.expect(ok, path, `expected a list of ${spec.list}`)) return;
    (value as unknown[]).forEach((item, i) => {
      if (!this.expect(typeof item === 'string' && item !== '', [...path, i], `expected ${spec.item}, got ${show(item)}`)) return;
      const problem = spec.check?.(item as string);
      if (problem !== undefined) this.problems.push({ path: [...path, i], message: problem });
    });
  }
}

/** A key's spelling with case, `_` and `-` set aside: `tag_prefix`, `TagPrefix` and `tagPrefix` are one. */
function spelling(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, '');
}
