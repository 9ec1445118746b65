// The browse page: a home view (search as you type, filters, recent
// versions, the mirrored providers), a module view
// (#/namespace/name/provider[/version][/tab], in module-page.js) and a provider view
// (#/-/providers/hostname/namespace/type; "-" is no module namespace), built
// from the registry's own documents. Every value from the mirror is put into
// the page as text; only the README, rendered by readme.js with raw HTML
// escaped and links checked, is inserted as HTML.
/* global markdownit, createReadmeRenderer, renderModule -- from markdown-it.min.js, readme.js and module-page.js, loaded before this script */
/* exported table, code, copyButton, readmeHtml, mirroredProvider, safeUrl, isPrerelease -- also used by module-page.js */
'use strict';

const main = document.getElementById('main');
const count = document.getElementById('count');
let index;
/** Every module's row (as index.fields names them): a promise, loaded as the page starts, that only the home view waits for. */
let modules;
/** The provider network mirror: {path, providers: [{hostname, namespace, type, registry?, versions: [{version, platforms, key_id?}]}]}; registry: in-house. */
let providers = { path: 'providers', providers: [] };

const el = (tag, attributes = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'text') node.textContent = value;
    else node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children.flat()) if (child !== undefined && child !== null) node.append(child);
  return node;
};

/** Replaces the page's content; absent parts (null) are left out rather than shown as text. */
const show = (...nodes) => main.replaceChildren(...nodes.flat().filter((n) => n !== null && n !== undefined));

// A private registry (serve --access private) answers 401 without a token. The token the
// person gives is kept in this tab's session storage only and sent as a header: never in a URL.
const TOKEN_KEY = 'modmirror.token';
const token = () => sessionStorage.getItem(TOKEN_KEY);

class Unauthorized extends Error {}

// modmirror dev serves the page with a flag naming its event stream: the page then shows each rebuild as it
// happens, and asks again for every document rather than trusting its cache. Never on a static host or under serve.
const devEvents = document.querySelector('meta[name="modmirror-dev"]')?.getAttribute('content');
/** The preview's last build: {build, errors: [{module?, version?, lines}]}. */
let devState = { build: 0, errors: [] };

async function getJson(path) {
  const headers = { Accept: 'application/json' };
  if (token()) headers.Authorization = `Bearer ${token()}`;
  const res = await fetch(path, { headers, cache: devEvents ? 'no-cache' : 'default' });
  if (res.status === 401) throw new Unauthorized(`${path}: 401`);
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return res.json();
}

function renderSignIn(rejected) {
  const input = el('input', { id: 'token', type: 'password', autocomplete: 'off', 'aria-label': 'API token', placeholder: 'API token' });
  const form = el('form', { id: 'sign-in', class: 'controls' }, input, el('button', { type: 'submit', text: 'Sign in' }));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (input.value.trim() === '') return;
    sessionStorage.setItem(TOKEN_KEY, input.value.trim());
    start();
  });
  count.textContent = '';
  show(
    el('h1', { text: 'Private registry' }),
    el('p', {
      text: rejected
        ? 'That token was not accepted. Give a valid API token.'
        : 'This registry shows its modules to token holders only. Give your API token (user, team or organization).',
    }),
    el('p', { class: 'muted', text: 'It is kept in this tab only, and sent to this registry as a header.' }),
    form,
  );
  input.focus();
}

function signOutButton() {
  const button = el('button', { id: 'sign-out', type: 'button', text: 'Sign out' });
  button.addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    start();
  });
  return button;
}

/** The README renderer (readme.js, markdown-it), made on the first README shown. */
let renderReadme;
const readmeHtml = (markdown) => (renderReadme ??= createReadmeRenderer(markdownit, index.imageHosts ?? []))(markdown);

const isPrerelease = (version) => /^[^+]*-/.test(version);
const moduleHref = (ns, name, provider, version) => `#/${[ns, name, provider, version].filter(Boolean).map(encodeURIComponent).join('/')}`;
const providerKey = (p) => `${p.hostname}/${p.namespace}/${p.type}`;
const providerHref = (key) => `#/-/providers/${key.split('/').map(encodeURIComponent).join('/')}`;
const isPrereleaseVersion = (v) => /-/.test(v);
/**
 * The mirrored provider a required_providers source names: "NS/TYPE" is
 * registry.terraform.io's for Terraform and registry.opentofu.org's for
 * OpenTofu, so either one the mirror holds.
 */
function mirroredProvider(source) {
  const parts = String(source ?? '')
    .toLowerCase()
    .split('/');
  const candidates =
    parts.length === 3 ? [parts.join('/')] : parts.length === 2 ? [`registry.terraform.io/${parts.join('/')}`, `registry.opentofu.org/${parts.join('/')}`] : [];
  return candidates.find((key) => providers.providers.some((p) => providerKey(p) === key));
}
const safeUrl = (url) => (/^https?:\/\//i.test(url) ? url : undefined);

// ---- home --------------------------------------------------------------------

function rows(loaded) {
  const f = Object.fromEntries(index.fields.map((name, i) => [name, i]));
  return loaded.map((m) => ({
    namespace: m[f.namespace],
    name: m[f.name],
    provider: m[f.provider],
    version: m[f.version],
    description: m[f.description],
    published: m[f.published_at],
    verified: m[f.verified],
    // The modules its latest version calls (a mirror written before rows had them: none).
    calls: f.calls === undefined ? [] : (m[f.calls] ?? []),
    haystack: `${m[f.namespace]} ${m[f.name]} ${m[f.provider]} ${m[f.description]}`.toLowerCase(),
  }));
}

async function renderHome() {
  const all = rows(await modules);
  const options = (values, label) => [el('option', { value: '', text: label }), ...[...new Set(values)].sort().map((v) => el('option', { value: v, text: v }))];
  const search = el('input', {
    id: 'search',
    type: 'search',
    placeholder: 'Search modules: name, namespace, provider, description',
    'aria-label': 'Search modules',
    autocomplete: 'off',
  });
  const provider = el(
    'select',
    { id: 'provider', 'aria-label': 'Filter by provider' },
    options(
      all.map((m) => m.provider),
      'All providers',
    ),
  );
  const namespace = el(
    'select',
    { id: 'namespace', 'aria-label': 'Filter by namespace' },
    options(
      all.map((m) => m.namespace),
      'All namespaces',
    ),
  );
  const summary = el('p', { id: 'summary', class: 'muted', 'aria-live': 'polite' });
  const results = el('ul', { id: 'results', class: 'results' });
  const update = () => {
    const terms = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    const q = search.value.trim().toLowerCase();
    const hits = all.filter(
      (m) =>
        (!provider.value || m.provider === provider.value) &&
        (!namespace.value || m.namespace === namespace.value) &&
        terms.every((t) => m.haystack.includes(t)),
    );
    // Exact names first, then name prefixes, then the rest (the server's search ranks the same way).
    const rank = (m) => (m.name === q ? 0 : m.name.startsWith(q) ? 1 : 2);
    if (q) hits.sort((a, b) => rank(a) - rank(b));
    summary.textContent = `${hits.length} of ${all.length} modules`;
    results.replaceChildren(
      ...hits
        .slice(0, 100)
        .map((m) =>
          el(
            'li',
            {},
            el('a', { class: 'title', href: moduleHref(m.namespace, m.name, m.provider), text: `${m.namespace}/${m.name}/${m.provider}` }),
            m.verified ? el('span', { class: 'badge', text: 'verified' }) : null,
            el('span', { class: 'muted', text: ` ${m.version}` }),
            el('div', { text: m.description }),
          ),
        ),
    );
  };
  for (const control of [search, provider, namespace]) control.addEventListener('input', update);
  const recent = el(
    'ul',
    { id: 'recent', class: 'results' },
    index.recent.map(([ns, name, prov, version, published]) =>
      el(
        'li',
        {},
        el('a', { href: moduleHref(ns, name, prov, version), text: `${ns}/${name}/${prov} ${version}` }),
        ' ',
        el('time', { class: 'muted date', datetime: published, text: published.slice(0, 10) }),
      ),
    ),
  );
  const providerList =
    providers.providers.length === 0
      ? null
      : [
          el('h2', { text: 'Providers' }),
          el(
            'ul',
            { id: 'providers', class: 'results' },
            providers.providers.map((p) =>
              el(
                'li',
                {},
                el('a', { href: providerHref(providerKey(p)), text: providerKey(p) }),
                el('span', { class: 'muted', text: ` ${p.versions[0]?.version ?? ''}${p.registry ? ' · in-house' : ''}` }),
              ),
            ),
          ),
        ];
  show(
    el(
      'div',
      { class: 'columns' },
      el('section', {}, el('h1', { text: 'Modules' }), el('div', { class: 'controls' }, search, provider, namespace), summary, results),
      el('aside', {}, el('h2', { text: 'Recently published' }), recent, providerList),
    ),
  );
  update();
  search.focus();
}

// ---- module ------------------------------------------------------------------

function table(caption, headers, items, cells) {
  if (items.length === 0) return el('p', { class: 'muted', text: `No ${caption.toLowerCase()}.` });
  // A wide table scrolls on its own: keyboard users reach it by Tab (a scrollable region must take focus).
  return el(
    'div',
    { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': caption },
    el(
      'table',
      {},
      el('caption', { class: 'muted', text: caption }),
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          headers.map((h) => el('th', { scope: 'col', text: h })),
        ),
      ),
      el(
        'tbody',
        {},
        items.map((item) =>
          el(
            'tr',
            {},
            cells(item).map((c) => el('td', {}, c)),
          ),
        ),
      ),
    ),
  );
}

const code = (text) => (text === '' ? '' : el('code', { text }));
function copyButton(id, text) {
  const button = el('button', { id, type: 'button', text: 'Copy' });
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      const area = el('textarea', {}, text);
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    button.textContent = 'Copied';
  });
  return button;
}

// ---- provider ----------------------------------------------------------------

function renderProvider(parts) {
  const key = parts.join('/');
  const provider = providers.providers.find((p) => providerKey(p) === key);
  if (!provider) throw new Error(`${key} is not in this mirror`);
  // The network mirror's URL: its folder under this page's own location (Terraform needs it over https).
  const mirrorUrl = new URL(`${providers.path}/`, index.baseUrl || document.baseURI).href;
  const newest = provider.versions.find((v) => !isPrereleaseVersion(v.version)) ?? provider.versions[0];
  const required = `terraform {\n  required_providers {\n    ${provider.type} = {\n      source  = "${key}"\n      version = "${newest.version}"\n    }\n  }\n}\n`;
  const installation = `provider_installation {\n  network_mirror {\n    url     = "${mirrorUrl}"\n    include = ["${key}"]\n  }\n  direct {\n    exclude = ["${key}"]\n  }\n}\n`;
  // In-house: published over this registry's providers.v1, so `terraform init` needs no CLI configuration, and each
  // version is signed; the key IDs are the ones Terraform reports ("self-signed, key ID ...").
  const inHouse = provider.registry === true;
  const keyIds = [...new Set(provider.versions.map((v) => v.key_id).filter(Boolean))];
  show(
    el('h1', { id: 'provider-title', text: key }),
    inHouse
      ? el('p', {
          id: 'provider-origin',
          class: 'muted',
          text: `In-house provider of this registry: terraform init installs it from ${provider.hostname} and checks its signature`,
        })
      : el('p', { class: 'muted', text: `Provider from the network mirror at ${mirrorUrl}` }),
    el('h3', { text: 'Use it in a configuration' }),
    el('div', { class: 'snippet' }, el('pre', { id: 'required-providers', tabindex: '0', text: required }), copyButton('copy-required', required)),
    ...(inHouse
      ? [el('h3', { text: 'Signing keys' }), el('p', { id: 'signing-keys', text: `Signed with key ID ${keyIds.join(', ')}` })]
      : [
          el('h3', { text: 'CLI configuration (~/.terraformrc or ~/.tofurc)' }),
          el(
            'div',
            { class: 'snippet' },
            el('pre', { id: 'provider-installation', tabindex: '0', text: installation }),
            copyButton('copy-installation', installation),
          ),
        ]),
    el('h3', { text: 'Versions' }),
    inHouse
      ? table('Versions', ['Version', 'Platforms', 'Key ID'], provider.versions, (v) => [code(v.version), v.platforms.join(', '), code(v.key_id ?? '')])
      : table('Versions', ['Version', 'Platforms'], provider.versions, (v) => [code(v.version), v.platforms.join(', ')]),
  );
  document.title = `${key} (provider)`;
  main.focus({ preventScroll: true });
}

async function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  try {
    if (parts[0] === '-' && parts[1] === 'providers' && parts.length === 5) renderProvider(parts.slice(2));
    else if (parts.length >= 3) await renderModule(parts);
    else {
      await renderHome();
      document.title = 'Module registry';
    }
  } catch (error) {
    if (error instanceof Unauthorized) return renderSignIn(true);
    show(el('p', { class: 'error', text: `Could not load this page: ${error.message}` }), el('a', { href: '#/', text: 'All modules' }));
  }
  showDevErrors(parts);
}

// ---- modmirror dev -------------------------------------------------------------

/**
 * The preview's build errors: on a module's page, that module's; on the home
 * page, a banner naming every failing module; errors that belong to no module
 * (the config) everywhere.
 */
function showDevErrors(parts) {
  document.getElementById('dev-errors')?.remove();
  if (!devEvents || devState.errors.length === 0) return;
  const isModule = parts.length >= 3 && parts[0] !== '-';
  const key = isModule ? parts.slice(0, 3).join('/') : undefined;
  const shown = devState.errors.filter((e) => e.module === undefined || !isModule || e.module === key);
  if (shown.length === 0) return;
  const title = isModule
    ? 'This module fails to build: the last version that built is shown'
    : 'Some modules fail to build: their last versions that built are shown';
  main.prepend(
    el(
      'section',
      { id: 'dev-errors', class: 'dev-errors', role: 'alert' },
      el('strong', { text: title }),
      el(
        'ul',
        {},
        shown.map((e) =>
          el(
            'li',
            {},
            e.module && !isModule ? el('a', { href: moduleHref(...e.module.split('/')), text: `${e.module} ${e.version}` }) : null,
            e.module && isModule ? el('span', { text: e.version }) : null,
            el('pre', { text: e.lines.join('\n') }),
          ),
        ),
      ),
    ),
  );
}

/** Follows the preview's builds: each new one renders the page again where the reader is. */
function followDev() {
  const source = new EventSource(devEvents);
  source.addEventListener('build', (event) => {
    const next = JSON.parse(event.data);
    const rebuilt = devState.build !== 0 && next.build !== devState.build;
    devState = next;
    if (!rebuilt) return showDevErrors(location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent));
    const y = window.scrollY;
    void start().then(() => window.scrollTo(0, y));
  });
}

// A static mirror keeps each namespace's rows in pages, which its list names (a write rewrites only the pages
// it changes); a private server sends every row the caller may read inline.
async function namespaceRows(namespace, again = true) {
  const folder = `browse/modules/${encodeURIComponent(namespace)}/`;
  const { pages } = await getJson(`${folder}index.json`);
  try {
    const files = await Promise.all(pages.map((page) => getJson(`${folder}${encodeURIComponent(page)}.json`)));
    return files.flatMap((file) => file.modules);
  } catch (error) {
    // A write replaced a page between the list and the page: the list read again names the new one.
    if (again && !(error instanceof Unauthorized)) return namespaceRows(namespace, false);
    throw error;
  }
}

async function loadModules(loaded) {
  if (loaded.modules) return loaded.modules;
  return (await Promise.all(loaded.namespaces.map((namespace) => namespaceRows(namespace)))).flat();
}

let listening = false;
function start() {
  // A mirror built before providers has no providers index: it has none.
  return Promise.all([getJson('browse/index.json'), getJson('providers-index.json').catch(() => providers)])
    .then(([loaded, loadedProviders]) => {
      index = loaded;
      providers = loadedProviders;
      modules = loadModules(loaded);
      const n = providers.providers.length;
      const providerCount = n > 0 ? ` · ${n} provider${n === 1 ? '' : 's'}` : '';
      const signOut = token() ? [' ', signOutButton()] : [];
      count.replaceChildren(...signOut);
      // A module's or a provider's view needs no rows; the home view waits for them, and says if they failed.
      modules.then((rows) => count.replaceChildren(`${rows.length} modules${providerCount}`, ...signOut)).catch(() => {});
      if (!listening) window.addEventListener('hashchange', route);
      listening = true;
      return route();
    })
    .catch((error) => {
      if (error instanceof Unauthorized) return renderSignIn(token() !== null);
      show(el('p', { class: 'error', text: `Could not load the module index: ${error.message}` }));
    });
}

start();
if (devEvents) followDev();
