// The browse page's module view (#/namespace/name/provider[/version][/tab]):
// a breadcrumb, the header, the version picker, tabs with their counts (each
// a link to itself), the provision snippet and the modules that call this
// one. Its text comes from module.js; the page's shared parts (el, show,
// table, getJson, the rows) from app.js, which calls renderModule. A classic
// script, loaded before app.js: its names are the page's.
/* global el, show, main, index, modules, rows, table, code, getJson, readmeHtml, copyButton, mirroredProvider, providerHref, moduleHref,
   isPrerelease, safeUrl, createModuleText -- from app.js and module.js */
/* exported renderModule -- called by app.js */
'use strict';

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

/**
 * Where a version came from, from its provenance (ARCHIVE.intoto.jsonl beside
 * the archive): the repository, tag and commit, or the folder; undefined when
 * the version has none (or the caller may not read it).
 */
async function provenanceOf(base, version, name, provider) {
  const envelope = await getJson(`${base}${encodeURIComponent(version)}/${encodeURIComponent(`${name}-${provider}-${version}.tar.gz.intoto.jsonl`)}`).catch(
    () => undefined,
  );
  if (typeof envelope?.payload !== 'string') return undefined;
  try {
    const bytes = Uint8Array.from(atob(envelope.payload), (c) => c.charCodeAt(0));
    const definition = JSON.parse(new TextDecoder().decode(bytes)).predicate?.buildDefinition ?? {};
    const params = definition.externalParameters ?? {};
    const dependency = definition.resolvedDependencies?.[0] ?? {};
    return {
      repository: params.repository,
      tag: typeof params.ref === 'string' ? params.ref.replace(/^refs\/tags\//, '') : undefined,
      commit: dependency.digest?.gitCommit,
      folder: params.folder,
      signed: Array.isArray(envelope.signatures) && envelope.signatures.length > 0,
    };
  } catch {
    return undefined;
  }
}

/** "Built from REPOSITORY, tag T, commit C (signed)", or the folder's name. */
function provenanceLine(p) {
  if (!p || (!p.commit && !p.folder)) return null;
  const repository = p.repository ? safeUrl(p.repository) : undefined;
  return el(
    'p',
    { id: 'provenance', class: 'muted' },
    'Built from ',
    p.commit
      ? [
          repository ? el('a', { href: repository, rel: 'noopener noreferrer', text: p.repository }) : code(p.repository ?? 'a git repository'),
          p.tag ? [', tag ', code(p.tag)] : [],
          ', commit ',
          code(p.commit.slice(0, 12)),
        ].flat()
      : ['folder ', code(p.folder)],
    p.signed ? ' (signed provenance)' : ' (provenance)',
  );
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
  const [downloads, listed, provenance] = await Promise.all([
    getJson(`v2/modules/${key}/downloads/summary`).catch(() => undefined),
    getJson(`${base}versions`).catch(() => undefined),
    provenanceOf(base, detail.version, name, provider),
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
    provenanceLine(provenance),
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
