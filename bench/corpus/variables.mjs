// Variables of a module: a type drawn by kind (object types with optional
// fields among them), a default that fits the type, a validation now and then.

import { lit } from './hcl.mjs';
import { description, FIELD_POOL, NOUNS, NUMBER_LITERALS, STRINGS, SUFFIX } from './words.mjs';

export function valueOf(type, r, depth = 0) {
  switch (type.t) {
    case 'string':
      return r.pick(STRINGS);
    case 'number':
      return lit(r.pick(NUMBER_LITERALS));
    case 'bool':
      return r.chance(0.5);
    case 'list':
    case 'set':
      return Array.from({ length: r.int(depth > 0 ? 0 : 1, 3) }, () => valueOf(type.of, r, depth + 1));
    case 'map': {
      const out = {};
      for (let i = r.int(1, 3); i > 0; i--)
        out[r.pick(['primary', 'secondary', 'default', 'Environment', 'Team', 'a', 'b', 'logs'])] = valueOf(type.of, r, depth + 1);
      return out;
    }
    case 'object': {
      const out = {};
      for (const f of type.fields) if (!f.optional || r.chance(0.4)) out[f.name] = valueOf(f.type, r, depth + 1);
      return out;
    }
    default: {
      // `any`: nested maps and lists
      return {
        defaults: { retries: lit('3'), backoff: [lit('1'), lit('2'), lit('4')], timeout: lit(r.pick(NUMBER_LITERALS)) },
        overrides: depth > 0 ? {} : { [r.pick(NOUNS)]: { enabled: r.chance(0.5) } },
      };
    }
  }
}

function objectType(r, depth = 0) {
  const fields = r.sample(FIELD_POOL, r.int(3, 6)).map(([name, make], i) => {
    const type = make();
    const optional = i > 0 && r.chance(0.7);
    const def = optional && r.chance(0.6) ? (type.t === 'list' || type.t === 'set' ? [] : type.t === 'map' ? {} : valueOf(type, r, 1)) : undefined;
    return { name, type, optional, def };
  });
  if (depth === 0 && r.chance(0.3)) {
    fields.push({ name: 'settings', type: objectType(r, 1), optional: true, def: {} });
  }
  return { t: 'object', fields };
}

const VAR_KINDS = [
  [5, 'string'],
  [5, 'bool'],
  [4, 'number'],
  [2, 'list'],
  [2, 'map'],
  [1, 'set'],
  [3, 'object'],
  [2, 'mapobj'],
  [2, 'listobj'],
  [1, 'any'],
];

function typeOfKind(kind, r) {
  switch (kind) {
    case 'string':
      return { t: 'string' };
    case 'bool':
      return { t: 'bool' };
    case 'number':
      return { t: 'number' };
    case 'list':
      return { t: 'list', of: { t: 'string' } };
    case 'map':
      return { t: 'map', of: { t: 'string' } };
    case 'set':
      return { t: 'set', of: { t: 'string' } };
    case 'object':
      return objectType(r);
    case 'mapobj':
      return { t: 'map', of: objectType(r, 1) };
    case 'listobj':
      return { t: 'list', of: objectType(r, 1) };
    default:
      return { t: 'any' };
  }
}

export function defaultOf(type, r) {
  if (type.t === 'string') return r.chance(0.3) ? null : r.pick(STRINGS);
  if ((type.t === 'list' || type.t === 'map' || type.t === 'set') && r.chance(0.4)) return type.t === 'map' ? {} : [];
  if (type.t === 'object' && r.chance(0.3)) return {};
  return valueOf(type, r);
}

export function makeVariable(r, name, kind, extra = {}) {
  const type = typeOfKind(kind, r);
  const v = {
    name,
    type,
    description: description(r, name),
    default: r.chance(0.9) ? defaultOf(type, r) : undefined,
    sensitive: (kind === 'string' && r.chance(0.05)) || undefined,
    nullable: kind !== 'string' && r.chance(0.08) ? false : undefined,
    validation: undefined,
    ...extra,
  };
  if (v.nullable === false && v.default === null) v.default = valueOf(type, r);
  if (kind === 'number' && r.chance(0.2)) v.validation = { condition: `var.${name} >= 0`, message: `The ${name} must not be negative.` };
  if (kind === 'string' && r.chance(0.1)) {
    v.validation = {
      condition: `var.${name} == null || can(regex("^[a-z0-9-_]+$", var.${name}))`,
      message: `The ${name} may only hold lower-case letters, digits, "-" and "_".`,
    };
  }
  return v;
}

export function freeVariable(r, unit) {
  const kind = r.weighted(VAR_KINDS);
  let name;
  for (let tries = 0; tries < 20; tries++) {
    name = `${r.pick(NOUNS)}_${r.pick(SUFFIX[kind])}`;
    if (!unit.vars.some((v) => v.name === name)) break;
    name = undefined;
  }
  name ??= `${r.pick(NOUNS)}_${r.pick(SUFFIX[kind])}_${unit.vars.length}`;
  return makeVariable(r, name, kind);
}
