// The browse page: a home view (search as you type, filters, recent
// versions, the mirrored providers), a module view
// (#/namespace/name/provider[/version]) and a provider view
// (#/-/providers/hostname/namespace/type; "-" is no module namespace), built
// from the registry's own documents. Every value from the mirror is put into
// the page as text; only the README, rendered by readme.js with raw HTML
// escaped and links checked, is inserted as HTML.
/* global markdownit, createReadmeRenderer, createModuleText -- from markdown-it.min.js, readme.js and module.js, loaded before this script */
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
/** The module page's text helpers (module.js), made once. */
let moduleText;
const texts = () => (moduleText ??= createModuleText());

/** The module page's tabs, in order; Submodules and Examples only where the version has them. */
const TABS = ['readme', 'inputs', 'outputs', 'dependencies', 'resources', 'submodules', 'examples'];
const TAB_LABELS = {
  readme: 'Readme',
  inputs: 'Inputs',
  outputs: 'Outputs',
  dependencies: 'Dependencies',
  resources: 'Resources',
  submodules: 'Submodules',
  examples: 'Examples',
};

function readmeBlock(markdown, description) {
  const body = description === undefined ? markdown : texts().readmeBody(markdown, description);
  if (!body.trim()) return el('p', { class: 'muted', text: 'No README.' });
  const readme = el('div', { class: 'readme' });
  readme.innerHTML = readmeHtml(body); // raw HTML escaped, links checked (readme.js)
  // A code block wider than the page scrolls on its own: keyboard users reach it by Tab.
  for (const pre of readme.querySelectorAll('pre')) pre.setAttribute('tabindex', '0');
  return readme;
}

function inputsTable(content) {
  // Required inputs first, as a caller fills them in.
  const inputs = [...content.inputs].sort((a, b) => Number(b.required) - Number(a.required));
  return table('Inputs', ['Name', 'Type', 'Default', 'Required', 'Description'], inputs, (i) => [
    code(i.name),
    // A type of several lines (an object's attributes) keeps its lines.
    i.type.includes('\n') ? el('pre', { class: 'hcl', tabindex: '0', text: i.type }) : code(i.type),
    i.required ? '' : el('pre', { class: 'hcl', tabindex: '0', text: texts().defaultAsHcl(i.default) }),
    i.required ? 'yes' : 'no',
    i.description,
  ]);
}

const outputsTable = (content) =>
  table('Outputs', ['Name', 'Description', 'Sensitive'], content.outputs, (o) => [code(o.name), o.description, o.sensitive ? 'yes' : '']);

function dependencyTables(content) {
  return [
    el('h3', { text: 'Required providers' }),
    table('Required providers', ['Name', 'Source', 'Version'], content.provider_dependencies ?? [], (p) => {
      // No source (implied by a resource, or a legacy declaration): Terraform's hashicorp/NAME.
      const source = p.source || `hashicorp/${p.name}`;
      const mirrored = mirroredProvider(source);
      return [code(p.name), mirrored ? el('a', { class: 'provider-link', href: providerHref(mirrored), text: source }) : source, code(p.version)];
    }),
    el('h3', { text: 'Module calls' }),
    table('Module calls', ['Name', 'Source', 'Version'], content.dependencies ?? [], (m) => [code(m.name), code(m.source), code(m.version)]),
    content.required_version ? el('p', {}, 'Terraform ', code(content.required_version)) : null,
  ];
}

const resourceTables = (content) => [
  table('Resources', ['Type', 'Name'], content.resources, (r) => [code(r.type), r.name]),
  table('Data sources', ['Type', 'Name'], content.data_sources ?? [], (r) => [code(r.type), r.name]),
];

/** A submodule's or an example's whole documentation, folded. */
const folded = (kind, content) =>
  el(
    'details',
    { class: kind },
    el('summary', { text: content.path }),
    readmeBlock(content.readme ?? ''),
    el('h3', { text: 'Inputs' }),
    inputsTable(content),
    el('h3', { text: 'Outputs' }),
    outputsTable(content),
    ...dependencyTables(content),
    el('h3', { text: 'Resources' }),
    ...resourceTables(content),
  );

/** Each tab's count (none for the README) and panel; undefined for a tab the version does not have. */
function tabContents(detail) {
  const root = detail.root;
  return {
    readme: { panel: () => [readmeBlock(root.readme ?? '', detail.description)] },
    inputs: { count: root.inputs.length, panel: () => [inputsTable(root)] },
    outputs: { count: root.outputs.length, panel: () => [outputsTable(root)] },
    dependencies: { count: (root.dependencies ?? []).length + (root.provider_dependencies ?? []).length, panel: () => dependencyTables(root) },
    resources: { count: root.resources.length + (root.data_sources ?? []).length, panel: () => resourceTables(root) },
    submodules: detail.submodules.length ? { count: detail.submodules.length, panel: () => detail.submodules.map((s) => folded('submodule', s)) } : undefined,
    examples: detail.examples.length ? { count: detail.examples.length, panel: () => detail.examples.map((e) => folded('example', e)) } : undefined,
  };
}

/** The tabs and their panels (all in the page, the others hidden); each tab is a link to itself, `#/…/TAB`. */
function moduleTabs(detail, hrefOf, selected) {
  const contents = tabContents(detail);
  const names = TABS.filter((t) => contents[t]);
  const current = names.includes(selected) ? selected : 'readme';
  const tabs = [];
  const panels = [];
  const select = (name) => {
    for (const tab of tabs) tab.setAttribute('aria-selected', String(tab.dataset.tab === name));
    for (const panel of panels) panel.hidden = panel.dataset.tab !== name;
  };
  for (const name of names) {
    const { count: n, panel } = contents[name];
    const tab = el(
      'a',
      { id: `tab-${name}`, role: 'tab', href: hrefOf(name), 'aria-controls': `panel-${name}`, 'data-tab': name },
      TAB_LABELS[name],
      n === undefined ? null : [' ', el('span', { class: 'count', text: String(n) })],
    );
    // The link's own address, without a hashchange: the page stays where it is, and the address can be shared.
    tab.addEventListener('click', (event) => {
      event.preventDefault();
      history.pushState(null, '', tab.getAttribute('href'));
      select(name);
    });
    tabs.push(tab);
    panels.push(el('section', { id: `panel-${name}`, role: 'tabpanel', 'aria-labelledby': `tab-${name}`, 'data-tab': name }, ...panel()));
  }
  select(current);
  return [el('nav', { class: 'tabs', role: 'tablist', 'aria-label': 'Module documentation' }, tabs), ...panels];
}

/** The modules of this mirror whose latest version calls `key`, from the rows the home view loads. */
async function usedBy(key) {
  const loaded = await modules.catch(() => []);
  // Registry addresses are not case-sensitive: the rows keep the calls in lower case.
  const wanted = key.toLowerCase();
  return rows(loaded)
    .filter((m) => m.calls.includes(wanted))
    .map((m) => `${m.namespace}/${m.name}/${m.provider}`);
}

async function renderModule(parts) {
  const [ns, name, provider] = parts;
  // `#/ns/name/provider[/version][/tab]`: a tab's name is never a version.
  const rest = parts.slice(3);
  const tab = TABS.includes(rest.at(-1)) ? rest.pop() : undefined;
  const wanted = rest[0];
  const base = `v1/modules/${[ns, name, provider].map(encodeURIComponent).join('/')}/`;
  const detail = await getJson(wanted ? `${base}${encodeURIComponent(wanted)}/index.json` : `${base}index.json`);
  const key = `${ns}/${name}/${provider}`;
  const [downloads, listed] = await Promise.all([
    getJson(`v2/modules/${key}/downloads/summary`).catch(() => undefined),
    getJson(`${base}versions`).catch(() => undefined),
  ]);
  // Deprecated versions, from the versions document (a static host has it too).
  const deprecated = new Map((listed?.modules?.[0]?.versions ?? []).filter((v) => v.deprecation).map((v) => [v.version, v.deprecation]));
  const host = index.host || location.host;
  const usage = texts().provision(name, `${host}/${key}`, detail.version, detail.root.inputs);
  const label = (v) => [v, isPrerelease(v) ? '(pre-release)' : '', deprecated.has(v) ? '(deprecated)' : ''].filter(Boolean).join(' ');
  const picker = el(
    'select',
    { id: 'version', 'aria-label': 'Version' },
    detail.versions.map((v) => el('option', { value: v, selected: v === detail.version, text: label(v) })),
  );
  const deprecation = detail.deprecation ?? deprecated.get(detail.version);
  const deprecationLink = deprecation && deprecation.link ? safeUrl(deprecation.link) : undefined;
  picker.addEventListener('change', () => (location.hash = moduleHref(ns, name, provider, picker.value)));
  const providerTabs =
    detail.providers.length > 1
      ? el(
          'nav',
          { class: 'provider-tabs', 'aria-label': 'Providers' },
          detail.providers.map((p) => el('a', { href: moduleHref(ns, name, p), 'aria-current': p === provider ? 'page' : false, text: p })),
        )
      : null;
  const source = safeUrl(detail.source);
  const total = downloads?.data?.attributes?.total;
  const callers = el('ul', { id: 'used-by', class: 'results' });
  show(
    el(
      'nav',
      { class: 'breadcrumb', 'aria-label': 'Breadcrumb' },
      el(
        'ol',
        {},
        el('li', {}, el('a', { href: '#/', text: 'Modules' })),
        el('li', { text: ns }),
        el('li', { 'aria-current': 'page', text: `${name}/${provider}` }),
      ),
    ),
    el('h1', { id: 'module-title', text: key }, detail.verified ? el('span', { class: 'badge', text: 'verified' }) : null),
    el('p', { id: 'description', text: detail.description }),
    el(
      'p',
      { class: 'muted' },
      'Version ',
      picker,
      ` published ${detail.published_at.slice(0, 10)}`,
      typeof total === 'number' ? el('span', { id: 'downloads', text: ` · ${total} downloads` }) : null,
      source ? el('span', {}, ' · ', el('a', { href: source, rel: 'noopener noreferrer', text: 'source' })) : null,
    ),
    deprecation
      ? el(
          'p',
          { id: 'deprecation', class: 'deprecated', role: 'note' },
          el('strong', { text: 'Deprecated: ' }),
          deprecation.reason,
          deprecationLink ? el('span', {}, ' · ', el('a', { href: deprecationLink, rel: 'noopener noreferrer', text: 'more' })) : null,
        )
      : null,
    providerTabs,
    el(
      'div',
      { class: 'columns' },
      el(
        'div',
        { class: 'module-body' },
        moduleTabs(detail, (t) => `${moduleHref(ns, name, provider, wanted)}/${t}`, tab),
      ),
      el(
        'aside',
        {},
        el('h2', { text: 'Provision' }),
        el('div', { class: 'snippet' }, el('pre', { id: 'usage', tabindex: '0', text: usage }), copyButton('copy', usage)),
        el('h2', { text: 'Used by' }),
        callers,
      ),
    ),
  );
  document.title = `${key} ${detail.version}`;
  // For keyboard and screen reader users the new content is where they are; style.css draws no box around it.
  main.focus({ preventScroll: true });
  // The rows load in the background; the list fills in when they are there.
  const names = await usedBy(key);
  callers.replaceChildren(
    ...(names.length === 0
      ? [el('li', { class: 'muted', text: 'No module in this mirror calls it.' })]
      : names.map((k) => el('li', {}, el('a', { href: moduleHref(...k.split('/')), text: k })))),
  );
}

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
