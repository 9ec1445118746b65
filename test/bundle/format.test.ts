// The bundle's own format (src/bundle/format.ts): which paths a bundle may
// write, and which bundle manifests are refused, each before anything is
// unpacked.

import { describe, expect, it } from 'vitest';
import { BUNDLE_FORMAT, BUNDLE_MANIFEST, isSafePath, parseBundleManifest, versionsOf } from '../../src/bundle/format.js';

const SHA = 'ab'.repeat(32);
const file = (path: string, extra: Record<string, unknown> = {}) => ({ path, sha256: SHA, size: 10, ...extra });
const manifestText = (value: Record<string, unknown>) =>
  JSON.stringify({ format: BUNDLE_FORMAT, generator: 'modmirror 0.1.0', files: [file('manifest.json'), file('v1/modules/a/b/c/versions')], ...value });
const parse = (text: string) => parseBundleManifest(text, '/tmp/drop.tar.gz');

/** The refusal's message, or undefined when the manifest is accepted. */
function refusal(text: string): string | undefined {
  try {
    parse(text);
    return undefined;
  } catch (error) {
    expect(error).toMatchObject({ code: 'BUNDLE_INVALID', hint: expect.stringMatching(/nothing was changed/) });
    return (error as Error).message;
  }
}

describe('isSafePath', () => {
  it('accepts plain relative paths inside the mirror', () => {
    for (const path of ['manifest.json', 'v1/modules/a/b/c/1.0.0/b-c-1.0.0.tar.gz', '.well-known/terraform.json', 'a..b/c', '...']) {
      expect(isSafePath(path), path).toBe(true);
    }
  });

  it('refuses every path that could land outside the mirror or be misread', () => {
    const refused = [
      '',
      '/etc/passwd',
      '../escaped',
      'v1/../../escaped',
      'v1/..',
      './manifest.json',
      'v1/./x',
      'v1//x',
      'v1/',
      'v1\\..\\x',
      'a\0b',
      BUNDLE_MANIFEST,
    ];
    expect(refused.filter((path) => isSafePath(path))).toEqual([]);
  });
});

describe('parseBundleManifest', () => {
  it('gives back a well-formed manifest as written', () => {
    const text = manifestText({ base: { sha256: SHA, versions: 3 } });
    expect(parse(text)).toEqual(JSON.parse(text));
  });

  it('refuses text that is not JSON, or not an object', () => {
    expect(refusal('{"format": 1,')).toMatch(/^\/tmp\/drop\.tar\.gz is not a usable modmirror bundle: modmirror-bundle\.json does not parse \(/);
    expect(refusal('null')).toBe('/tmp/drop.tar.gz is not a usable modmirror bundle: modmirror-bundle.json is not an object.');
    expect(refusal('7')).toBe('/tmp/drop.tar.gz is not a usable modmirror bundle: modmirror-bundle.json is not an object.');
  });

  it('refuses another format version, saying another modmirror made it', () => {
    expect(refusal(manifestText({ format: 3 }))).toBe(
      '/tmp/drop.tar.gz is not a usable modmirror bundle: format 3 is not 1 or 2; it was made by another modmirror version.',
    );
    expect(refusal(manifestText({ format: undefined }))).toMatch(/: format undefined is not 1 or 2;/);
  });

  it('reads format 1, which lists only carried files', () => {
    expect(BUNDLE_FORMAT).toBe(2);
    expect(refusal(manifestText({ format: 1 }))).toBeUndefined();
    expect(refusal(manifestText({ format: 1, kept: [file('browse/x')] }))).toMatch(/: modmirror-bundle\.json of format 1 lists files outside the bundle\.$/);
  });

  it('accepts kept and derived files, and refuses unusable ones or a path listed in two kinds', () => {
    const derived = (extra: Record<string, unknown> = {}) =>
      file('v1/modules/a/b/c/1.0.0/index.json', { module: 'a/b/c', keys: ['id', 'versions'], values: { id: 'a/b/c/1.0.0' }, ...extra });
    const shared = { 'a/b/c': { versions: ['1.1.0', '1.0.0'] } };
    expect(refusal(manifestText({ kept: [file('browse/readme/a/b/c/1.0.0.json')], derived: [derived()], shared }))).toBeUndefined();
    for (const bad of [
      derived({ module: 7 }),
      derived({ keys: 'id' }),
      derived({ keys: ['id', 'id'] }),
      derived({ keys: [1] }),
      derived({ values: [] }),
      derived({ path: '../x' }),
    ]) {
      expect(refusal(manifestText({ derived: [bad], shared })), JSON.stringify(bad)).toMatch(/: modmirror-bundle\.json has an unusable file entry /);
    }
    expect(refusal(manifestText({ kept: [file('x', { size: -1 })] }))).toMatch(/has an unusable file entry/);
    expect(refusal(manifestText({ kept: {} }))).toMatch(/has an unusable "kept", "derived", "shared" or "copies"\.$/);
    expect(refusal(manifestText({ derived: [derived()], shared: { 'a/b/c': 'x' } }))).toMatch(/has an unusable file entry/);
    expect(refusal(manifestText({ kept: [file('v1/modules/a/b/c/versions')] }))).toMatch(/lists v1\/modules\/a\/b\/c\/versions twice\.$/);
    expect(refusal(manifestText({ files: [file('v1/x')], kept: [file('manifest.json')] }))).toMatch(/: it carries no manifest\.json\.$/);
  });

  it('accepts a copy only of a file it carries with the same bytes', () => {
    const copy = (extra: Record<string, unknown> = {}) => file('v1/modules/a/b/c/index.json', { from: 'v1/modules/a/b/c/versions', ...extra });
    expect(refusal(manifestText({ copies: [copy()] }))).toBeUndefined();
    // Of a file not carried (kept files are the receiver's, not the bundle's), of other bytes, of no file.
    for (const bad of [copy({ from: 'browse/x' }), copy({ sha256: 'cd'.repeat(32) }), copy({ size: 11 }), copy({ from: undefined })]) {
      expect(refusal(manifestText({ copies: [bad], kept: [file('browse/x')] })), JSON.stringify(bad)).toMatch(/has an unusable file entry/);
    }
    expect(refusal(manifestText({ copies: [copy({ path: 'manifest.json' })] }))).toMatch(/lists manifest\.json twice\.$/);
    expect(refusal(manifestText({ copies: {} }))).toMatch(/has an unusable "kept", "derived", "shared" or "copies"\.$/);
    expect(refusal(manifestText({ format: 1, copies: [] }))).toMatch(/of format 1 lists files outside the bundle\.$/);
  });

  it('refuses a manifest without a files list, and one that carries no mirror manifest', () => {
    expect(refusal(manifestText({ files: {} }))).toMatch(/: modmirror-bundle\.json has no "files" list\.$/);
    expect(refusal(manifestText({ files: [file('v1/x')] }))).toMatch(/: it carries no manifest\.json\.$/);
  });

  it('refuses each kind of unusable file entry, quoting it', () => {
    const entries = [
      'manifest.json',
      file('../escaped'),
      file('/abs'),
      file('x', { sha256: 'AB'.repeat(32) }),
      file('x', { sha256: 'ab' }),
      file('x', { size: -1 }),
      file('x', { size: 1.5 }),
      file('x', { size: '10' }),
      { path: 'x', sha256: SHA },
      null,
    ];
    for (const entry of entries) {
      expect(refusal(manifestText({ files: [file('manifest.json'), entry] })), JSON.stringify(entry)).toBe(
        `/tmp/drop.tar.gz is not a usable modmirror bundle: modmirror-bundle.json has an unusable file entry ${JSON.stringify(entry)}.`,
      );
    }
  });

  it('refuses a path listed twice', () => {
    expect(refusal(manifestText({ files: [file('manifest.json'), file('v1/x'), file('v1/x')] }))).toMatch(/: modmirror-bundle\.json lists v1\/x twice\.$/);
  });

  it('quotes at most 200 characters of a bad entry', () => {
    const message = refusal(manifestText({ files: [file('manifest.json'), file('x'.repeat(500), { size: -1 })] }))!;
    expect(message.slice(message.indexOf('entry ') + 'entry '.length, -1)).toHaveLength(200);
  });
});

describe('versionsOf', () => {
  it('lists every version of a mirror manifest as address@version with its archive and sha256', () => {
    const manifest = {
      modules: {
        'acme/vpc/aws': {
          versions: [
            { version: '1.0.0', archive: 'v1/modules/acme/vpc/aws/1.0.0/vpc-aws-1.0.0.tar.gz', sha256: SHA },
            { version: '0.9.0', archive: 'a2', sha256: 'cd'.repeat(32) },
          ],
        },
        'acme/dns/google': { versions: [{ version: '2.0.0-rc.1', archive: 'a3', sha256: 'ef'.repeat(32) }] },
      },
    } as unknown as Parameters<typeof versionsOf>[0];
    expect([...versionsOf(manifest)]).toEqual([
      ['acme/vpc/aws@1.0.0', { sha256: SHA, archive: 'v1/modules/acme/vpc/aws/1.0.0/vpc-aws-1.0.0.tar.gz' }],
      ['acme/vpc/aws@0.9.0', { sha256: 'cd'.repeat(32), archive: 'a2' }],
      ['acme/dns/google@2.0.0-rc.1', { sha256: 'ef'.repeat(32), archive: 'a3' }],
    ]);
  });
});
