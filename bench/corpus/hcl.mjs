// Writes HCL: values (strings, numbers, lists, objects) and type expressions
// in the layout terraform fmt gives, plus one-line forms for README tables.

/** A literal written as-is (numbers like 1e3, `null`). Plain object so structuredClone keeps it. */
export const lit = (text) => ({ $lit: text });
const isLit = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && '$lit' in v;
const IDENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;

export function hclString(s) {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\$\{/g, '$${').replace(/%\{/g, '%%{')}"`;
}

export function renderValue(v, indent = '') {
  if (v === null) return 'null';
  if (isLit(v)) return v.$lit;
  if (typeof v === 'string') return hclString(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const inner = `${indent}  `;
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    if (v.every((x) => x === null || typeof x !== 'object' || isLit(x))) return `[${v.map((x) => renderValue(x)).join(', ')}]`;
    return `[\n${v.map((x) => `${inner}${renderValue(x, inner)},`).join('\n')}\n${indent}]`;
  }
  const keys = Object.keys(v);
  if (keys.length === 0) return '{}';
  const shown = keys.map((k) => (IDENT.test(k) ? k : hclString(k)));
  const width = Math.max(...shown.map((k) => k.length));
  return `{\n${keys.map((k, i) => `${inner}${shown[i].padEnd(width)} = ${renderValue(v[k], inner)}`).join('\n')}\n${indent}}`;
}

/** Types: {t: 'string'|'number'|'bool'|'any'} | {t: 'list'|'set'|'map', of} | {t: 'object', fields: [{name, type, optional, def}]} */
export function renderType(type, indent = '') {
  switch (type.t) {
    case 'list':
    case 'set':
    case 'map':
      return `${type.t}(${renderType(type.of, indent)})`;
    case 'object': {
      const inner = `${indent}  `;
      const width = Math.max(...type.fields.map((f) => f.name.length));
      const lines = type.fields.map((f) => {
        const t = renderType(f.type, inner);
        const shown = !f.optional ? t : f.def === undefined ? `optional(${t})` : `optional(${t}, ${renderValue(f.def, inner)})`;
        return `${inner}${f.name.padEnd(width)} = ${shown}`;
      });
      return `object({\n${lines.join('\n')}\n${indent}})`;
    }
    default:
      return type.t;
  }
}

/** One-line form for README tables. */
export function inlineType(type) {
  switch (type.t) {
    case 'list':
    case 'set':
    case 'map':
      return `${type.t}(${inlineType(type.of)})`;
    case 'object':
      return `object({ ${type.fields.map((f) => `${f.name} = ${f.optional ? `optional(${inlineType(f.type)})` : inlineType(f.type)}`).join(', ')} })`;
    default:
      return type.t;
  }
}

export const inlineValue = (v) => renderValue(v).replace(/\n\s*/g, ' ');
