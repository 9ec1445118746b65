// `serve --access private`: every registry endpoint for every kind of caller
// (anonymous, an unknown token, a user, a team, an organization, a site
// administrator, another organization, a disabled organization and a member
// of only that one), over HTTP. A module is readable exactly when Terraform
// Enterprise's rules say so; otherwise the answer is the same 404 a missing
// module gets (401 only without a known token), and no listing, count,
// next_offset, search or browse index shows it. Changes through the
// management API count on the next request; refusals leave one audit line.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, ORGANIZATIONS, startPrivateSite, VISIBLE, type CallerKind, type PrivateSite } from './private-site.js';

let site: PrivateSite;
beforeAll(async () => {
  site = await startPrivateSite();
});
afterAll(async () => site?.close());

const CALLERS = Object.keys(VISIBLE) as CallerKind[];
const base = (ns: string) => `v1/modules/${ns}/hello/null`;

/** Per module: the path, and the status a caller who may read it gets. */
const MODULE_ENDPOINTS: [string, (ns: string) => string, number][] = [
  ['latest detail', (ns) => base(ns), 200],
  ['detail as a file', (ns) => `${base(ns)}/index.json`, 200],
  ['versions', (ns) => `${base(ns)}/versions`, 200],
  ['version detail', (ns) => `${base(ns)}/1.0.0`, 200],
  ['latest download', (ns) => `${base(ns)}/download`, 302],
  ['download', (ns) => `${base(ns)}/1.0.0/download`, 200],
  ['archive with a token', (ns) => `${base(ns)}/1.0.0/hello-null-1.0.0.tar.gz`, 200],
  ['providers listing', (ns) => `v1/modules/${ns}/hello`, 200],
  ['downloads summary (v2)', (ns) => `v2/modules/${ns}/hello/null/downloads/summary`, 200],
];

describe('every registry endpoint x every caller', () => {
  for (const caller of CALLERS) {
    const visible = VISIBLE[caller];
    it(`${caller}: modules ${visible ? visible.join(', ') : 'none (401)'}`, async () => {
      for (const ns of ORGANIZATIONS) {
        for (const [what, path, ok] of MODULE_ENDPOINTS) {
          const res = await get(site, caller, path(ns));
          const want = visible === undefined ? 401 : visible.includes(ns) ? ok : 404;
          expect(res.status, `${caller} ${what} ${ns}`).toBe(want);
          if (want === 404) {
            // The body of a module that is there but hidden is the body of one that is not.
            const missing = await get(site, caller, path('nobody'));
            expect(res.text, `${caller} ${what} ${ns}`).toBe(missing.text.replaceAll('nobody', ns));
          }
          if (want === 401) expect(res.json().errors[0]).toMatch(/private: send a token/);
        }
        // A namespace listing of a hidden namespace is the empty one a namespace without modules gets.
        const listing = await get(site, caller, `v1/modules/${ns}`);
        expect(listing.status).toBe(visible ? 200 : 401);
        if (visible) expect(listing.json().modules.map((m: any) => m.namespace)).toEqual(visible.includes(ns) ? [ns, ns].slice(0, 1) : []);
      }
      // Whole-mirror answers: the caller's modules and nothing else, counts and pages included.
      // The mirror's truth (the root, each module's state) and the browse page's pages are a site administrator's alone.
      const adminOnly = ['manifest.json', 'state/acme/hello.null.json', 'browse/modules/acme/index.json', 'browse/modules/acme/hello.null.json'];
      for (const path of ['v1/modules', 'v1/modules/search?q=hello', 'browse/index.json', ...adminOnly]) {
        const res = await get(site, caller, path);
        const wantStatus = visible === undefined ? 401 : adminOnly.includes(path) && caller !== 'admin' ? 404 : 200;
        expect(res.status, `${caller} ${path}`).toBe(wantStatus);
      }
      // Discovery answers everyone, as terraform login needs before it has a token; it names services, not modules.
      const discovery = await get(site, caller, '.well-known/terraform.json');
      expect(discovery.status, `${caller} discovery`).toBe(200);
      expect(Object.keys(discovery.json())).toEqual(expect.arrayContaining(['modules.v1', 'login.v1']));
      if (!visible) return;
      // The browse page renders READMEs from the detail documents, which the endpoints above guard.
      expect((await get(site, caller, `${base(visible[0]!)}/1.0.0`)).json().root.readme).toContain('# Hello 1.0.0');
      expect(await namespacesPaged(caller, 'v1/modules')).toEqual(visible);
      expect(await namespacesPaged(caller, 'v1/modules/search?q=hello')).toEqual(visible);
      const browse = (await get(site, caller, 'browse/index.json')).json();
      expect(browse.modules.map((m: unknown[]) => m[0])).toEqual(visible);
      expect([...new Set(browse.recent.map((m: unknown[]) => m[0]))].sort()).toEqual(visible);
    });
  }

  it('the browse page itself (no module data) is open to anyone, so a browser can load it and ask for a token', async () => {
    for (const path of ['', 'index.html', 'browse/app.js', 'browse/readme.js', 'browse/markdown-it.min.js', 'browse/style.css'])
      expect((await get(site, 'anonymous', path)).status, path).toBe(200);
  });

  it('answers are cached per set of readable organizations: one caller never gets another caller’s page', async () => {
    // Same URL, one after the other, each twice: a shared cache entry would hand the first caller's page to the next.
    for (const caller of ['admin', 'other', 'user', 'disabledMember', 'admin'] as const) {
      for (let i = 0; i < 2; i++) expect(await namespacesPaged(caller, 'v1/modules'), caller).toEqual(VISIBLE[caller]);
    }
    const res = await get(site, 'user', 'v1/modules');
    expect(res.headers['cache-control']).toBe('private, no-cache');
  });
});

/** Every namespace a listing shows, walking its pages one module at a time by next_offset. */
async function namespacesPaged(caller: CallerKind, path: string): Promise<string[]> {
  const seen: string[] = [];
  let offset: number | undefined = 0;
  while (offset !== undefined) {
    const page = (await get(site, caller, `${path}${path.includes('?') ? '&' : '?'}limit=1&offset=${offset}`)).json();
    seen.push(...page.modules.map((m: any) => m.namespace));
    offset = page.meta.next_offset;
  }
  return seen;
}

describe('changes through the management API count on the next request', () => {
  it('sharing: beta stops sharing with acme, and acme sees it no more; sharing again brings it back', async () => {
    expect((await get(site, 'user', `${base('beta')}/versions`)).status).toBe(200);
    expect((await site.api('PATCH', 'admin/organizations/beta/relationships/module-consumers', { data: [] })).status).toBe(204);
    expect((await get(site, 'user', `${base('beta')}/versions`)).status).toBe(404);
    expect((await get(site, 'team', 'v1/modules/search?q=hello')).json().modules.map((m: any) => m.namespace)).toEqual(['acme', 'gamma']);
    expect((await site.api('PATCH', 'admin/organizations/beta/relationships/module-consumers', { data: [{ type: 'organizations', id: 'acme' }] })).status).toBe(
      204,
    );
    expect((await get(site, 'user', `${base('beta')}/versions`)).status).toBe(200);
  });

  it('disabling an organization hides its modules from everyone, the site administrator included, and voids its tokens', async () => {
    expect((await get(site, 'admin', `${base('omega')}/versions`)).status).toBe(200);
    const disable = (on: boolean) => site.api('PATCH', 'admin/organizations/omega', { data: { type: 'organizations', attributes: { 'is-disabled': on } } });
    expect((await disable(true)).status).toBe(200);
    expect((await get(site, 'admin', `${base('omega')}/versions`)).status).toBe(404);
    expect((await get(site, 'other', `${base('omega')}/versions`)).status).toBe(401);
    expect((await disable(false)).status).toBe(200);
    expect((await get(site, 'other', `${base('omega')}/versions`)).status).toBe(200);
  });

  it('deleting an organization takes its modules from its consumers and its tokens with it', async () => {
    const extra = await startPrivateSite();
    try {
      expect((await get(extra, 'team', `${base('beta')}/versions`)).status).toBe(200);
      expect((await extra.api('DELETE', 'admin/organizations/acme')).status).toBe(204);
      for (const caller of ['team', 'organization'] as const) expect((await get(extra, caller, `${base('acme')}/versions`)).status).toBe(401);
      // alice's own token stays, but she is in no organization now: only what everyone shares.
      expect((await get(extra, 'user', `${base('beta')}/versions`)).status).toBe(404);
      expect((await get(extra, 'user', `${base('gamma')}/versions`)).status).toBe(200);
    } finally {
      await extra.close();
    }
  });
});

describe('audit', () => {
  it('writes one line per refused request: who, what and why, and never a token', async () => {
    site.audit.length = 0;
    await get(site, 'anonymous', `${base('acme')}/versions`);
    await get(site, 'unknown', `${base('acme')}/versions`);
    await get(site, 'other', `${base('acme')}/1.0.0/download`);
    await get(site, 'other', 'manifest.json');
    await get(site, 'user', `${base('acme')}/versions`); // allowed: no line
    await get(site, 'user', `${base('nobody')}/versions`); // missing, not refused: no line
    expect(site.audit).toEqual([
      `refused GET /${base('acme')}/versions 401 who=anonymous why="no bearer token"`,
      `refused GET /${base('acme')}/versions 401 who=unknown-token why="the token is not known, revoked, or its organization is disabled"`,
      `refused GET /${base('acme')}/1.0.0/download 404 who=organization:omega why="acme/hello/null is not readable by this caller"`,
      'refused GET /manifest.json 404 who=organization:omega why="manifest.json is not readable by this caller"',
    ]);
    const tokens = Object.values(site.tokens).filter((t): t is string => t !== undefined);
    for (const line of site.audit) for (const token of tokens) expect(line).not.toContain(token);
  });
});

describe('archive URLs', () => {
  const download = async (caller: CallerKind, ns = 'acme') => (await get(site, caller, `${base(ns)}/1.0.0/download`)).json().location as string;
  const archiveUrl = (location: string, ns = 'acme') => new URL(location, new URL(`${base(ns)}/1.0.0/download`, site.server.url));
  const fetchBare = async (url: URL) => {
    const res = await request(url);
    return { status: res.statusCode, body: Buffer.from(await res.body.arrayBuffer()), type: res.headers['content-type'] };
  };

  it('the download answer signs the archive URL; the signed URL needs no token, an altered one is a 403 with a JSON body', async () => {
    const res = await get(site, 'user', `${base('acme')}/1.0.0/download`);
    const { location, use_registry_credentials } = res.json();
    expect(location).toMatch(/^\.\/hello-null-1\.0\.0\.tar\.gz\?expires=\d+&token=at-\w+&signature=[\w-]{43}$/);
    expect(use_registry_credentials).toBe(true);
    expect(res.headers['x-terraform-get']).toBe(location);
    expect(res.headers['cache-control']).toBe('private, no-store');
    const url = archiveUrl(location);
    const ok = await fetchBare(url);
    expect(ok.status).toBe(200);
    expect(ok.body.equals(readFileSync(join(site.dist, `${base('acme')}/1.0.0/hello-null-1.0.0.tar.gz`)))).toBe(true);
    for (const [name, change] of [
      // Another last character (one signature in 16 ends in "A" already, which left the URL unaltered).
      [
        'signature',
        (u: URL) =>
          u.searchParams.set(
            'signature',
            u.searchParams.get('signature')!.replace(/.$/, (c) => (c === 'A' ? 'E' : 'A')),
          ),
      ],
      ['expiry', (u: URL) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600))],
      ['path', (u: URL) => (u.pathname = u.pathname.replace('/acme/', '/omega/'))],
      // Another token's id: the URL would then be read as that token reads.
      ['token', (u: URL) => u.searchParams.set('token', 'at-someoneelse')],
    ] as const) {
      const altered = new URL(url);
      change(altered);
      const bad = await fetchBare(altered);
      expect(bad.status, name).toBe(403);
      expect(bad.type).toMatch(/json/);
      expect(JSON.parse(bad.body.toString()).errors[0]).toMatch(/not one the registry signed/);
    }
    // No signature and no token: a 401, as for any request without a token.
    const bare = new URL(url);
    bare.search = '';
    expect((await fetchBare(bare)).status).toBe(401);
  });

  it('rotating the key (modmirror signing-key rotate) voids every URL signed before', async () => {
    const url = archiveUrl(await download('user'));
    expect((await fetchBare(url)).status).toBe(200);
    const { runCli } = await import('../helpers.js');
    const rotated = await runCli(['signing-key', 'rotate', '--data', site.data]);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect((await fetchBare(url)).status).toBe(403);
    expect((await fetchBare(archiveUrl(await download('user')))).status).toBe(200);
  });
});
