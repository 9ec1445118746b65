// The module page's text, made from a version's detail document: defaults as
// HCL (the detail keeps them as JSON), the README without the title and
// description the page's header already shows, and the `module` block to
// provision it with its required inputs. Pure functions, no DOM: a classic
// script, so the page's other script (and the tests, in a VM) can call it.
// Its one global is the function below.
/* exported createModuleText -- called by app.js and the tests */

function createModuleText() {
  'use strict';
  const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;
  const INLINE_WIDTH = 60;

  // A literal `${` or `%{` in an HCL string is written doubled, or it would be a template.
  const hclString = (s) => JSON.stringify(s).replace(/([$%])\{/g, (_, sign) => `${sign}${sign}{`);

  /** A value as HCL: lists and objects as Terraform writes them, short lists on one line. */
  function hclOf(value, indent = '') {
    if (value === null || value === undefined) return 'null';
    if (typeof value === 'string') return hclString(value);
    if (typeof value !== 'object') return String(value);
    const inner = `${indent}  `;
    if (Array.isArray(value)) {
      if (value.length === 0) return '[]';
      const items = value.map((v) => hclOf(v, inner));
      const inline = `[${items.join(', ')}]`;
      if (!inline.includes('\n') && inline.length <= INLINE_WIDTH) return inline;
      return `[\n${items.map((i) => `${inner}${i},`).join('\n')}\n${indent}]`;
    }
    const keys = Object.keys(value);
    if (keys.length === 0) return '{}';
    const names = keys.map((k) => (IDENTIFIER.test(k) ? k : hclString(k)));
    const width = Math.max(...names.map((n) => n.length));
    return `{\n${keys.map((k, i) => `${inner}${names[i].padEnd(width)} = ${hclOf(value[k], inner)}`).join('\n')}\n${indent}}`;
  }

  /** A default as the detail document has it (JSON text, or an expression kept as written) shown as HCL. */
  function defaultAsHcl(text) {
    if (typeof text !== 'string' || text === '') return text ?? '';
    try {
      return hclOf(JSON.parse(text));
    } catch {
      return text;
    }
  }

  const plain = (text) =>
    text
      .replace(/[*_`]/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\s+/g, ' ')
      .trim();

  /**
   * The README without its leading title (a level-one heading, which the page's
   * header shows as the module's address) and, right after it, the paragraph
   * the module's description was taken from.
   */
  function readmeBody(markdown, description) {
    const lines = markdown.split('\n');
    let i = 0;
    const blanks = () => {
      while (i < lines.length && lines[i].trim() === '') i++;
    };
    blanks();
    if (/^#\s/.test(lines[i] ?? '')) i++;
    else if (i + 1 < lines.length && lines[i].trim() !== '' && /^=+\s*$/.test(lines[i + 1])) i += 2;
    blanks();
    const start = i;
    while (i < lines.length && lines[i].trim() !== '' && !/^(#|```|~~~|[-*+] |\d+\. |\||>|!\[|\[!\[)/.test(lines[i].trim())) i++;
    const paragraph = plain(lines.slice(start, i).join(' '));
    const wanted = plain(description ?? '');
    const same = wanted !== '' && (paragraph === wanted || (wanted.endsWith('...') && paragraph.startsWith(wanted.slice(0, -3))));
    return lines
      .slice(same ? i : start)
      .join('\n')
      .replace(/^\s*\n/, '');
  }

  /** A value of the input's type to start from: Terraform accepts it as that type. */
  function placeholder(type) {
    const t = (type ?? '').trim();
    if (t === 'string') return '""';
    if (t === 'number') return '0';
    if (t === 'bool') return 'false';
    if (/^(list|set|tuple)\b/.test(t)) return '[]';
    if (/^(map|object)\b/.test(t)) return '{}';
    return 'null';
  }

  /** The `module` block that provisions the version, with each required input to fill in. */
  function provision(name, source, version, inputs) {
    const required = inputs.filter((i) => i.required);
    const head = `module "${name}" {\n  source  = "${source}"\n  version = "${version}"\n`;
    if (required.length === 0) return `${head}}\n`;
    const width = Math.max(...required.map((i) => i.name.length));
    const lines = required.map((i) => {
      const type = (i.type || 'any').split('\n')[0];
      return `  ${i.name.padEnd(width)} = ${placeholder(i.type)} # ${type}${type === i.type || !i.type ? '' : ' ...'}`;
    });
    return `${head}\n  # Required inputs\n${lines.join('\n')}\n}\n`;
  }

  /**
   * The module addresses a module call's source names in a registry
   * (`HOST/NS/NAME/PROVIDER` or `NS/NAME/PROVIDER`, with an optional `//subdir`),
   * as `ns/name/provider`; undefined for a local path, a Git or HTTP source.
   */
  function calledModule(source) {
    const s = String(source ?? '').split('//')[0];
    if (/^(\.{1,2}\/|\/|[a-z0-9+]+::|[a-z]+:\/\/|git@|github\.com\/|bitbucket\.org\/)/i.test(s)) return undefined;
    const parts = s.split('/');
    const address = parts.length === 4 ? parts.slice(1) : parts.length === 3 ? parts : undefined;
    return address && address.every((p) => /^[0-9A-Za-z][0-9A-Za-z_-]*$/.test(p)) ? address.join('/').toLowerCase() : undefined;
  }

  return { defaultAsHcl, hclOf, readmeBody, provision, calledModule };
}
