// What one configuration file declares, read the way
// hashicorp/terraform-config-inspect reads it (the public registry's extractor).
// Attributes that are absent stay undefined so override files can merge
// attribute by attribute (see `merge` in ./index.ts).

import { HclSyntaxError, MAX_NESTING, parseHcl, positionOf, TOO_DEEP, UNKNOWN, type Body, type Expr, type Value } from './hcl.js';

export interface VariableDecl {
  name: string;
  type?: string;
  description?: string;
  /** Present when the block has a `default` attribute; `value` is null when it is not a constant. */
  default?: { value: unknown };
  sensitive?: boolean;
  nullable?: boolean;
}

export interface OutputDecl {
  name: string;
  description?: string;
  sensitive?: boolean;
}

export interface ModuleCallDecl {
  name: string;
  source?: string;
  version?: string;
}

export interface ProviderDecl {
  name: string;
  source?: string;
  versions: string[];
}

/** A resource or data block; `provider` is the local name its `provider` argument names (`aws` of `aws.west`). */
export interface ResourceDecl {
  type: string;
  name: string;
  provider?: string;
}

export interface FileDeclarations {
  variables: VariableDecl[];
  outputs: OutputDecl[];
  resources: ResourceDecl[];
  dataSources: ResourceDecl[];
  moduleCalls: ModuleCallDecl[];
  providers: ProviderDecl[];
  requiredVersions: string[];
}

function emptyDeclarations(): FileDeclarations {
  return { variables: [], outputs: [], resources: [], dataSources: [], moduleCalls: [], providers: [], requiredVersions: [] };
}

/** Decoding to a string as gohcl does: strings, and numbers and bools converted. */
function asString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function asBool(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  return undefined;
}

function known(value: Value): unknown {
  return value === UNKNOWN ? null : value;
}

// ---- native syntax ---------------------------------------------------------

export function declarationsFromHcl(source: string): FileDeclarations {
  const body = parseHcl(source);
  const out = emptyDeclarations();
  const attr = (b: Body, name: string): Expr | undefined => b.attributes.find((a) => a.name === name)?.expr;
  const str = (b: Body, name: string) => {
    const e = attr(b, name);
    return e && asString(e.value);
  };
  const bool = (b: Body, name: string) => {
    const e = attr(b, name);
    return e && asBool(e.value);
  };

  for (const block of body.blocks) {
    const [first = '', second = ''] = block.labels;
    const b = block.body;
    switch (block.type) {
      case 'variable': {
        const v: VariableDecl = { name: first };
        const typeExpr = attr(b, 'type');
        if (typeExpr) v.type = typeof typeExpr.value === 'string' ? typeExpr.value : source.slice(typeExpr.start, typeExpr.end);
        const description = attr(b, 'description');
        if (description) v.description = asString(description.value) ?? '';
        const def = attr(b, 'default');
        if (def) v.default = { value: known(def.value) };
        const sensitive = bool(b, 'sensitive');
        if (sensitive !== undefined) v.sensitive = sensitive;
        const nullable = bool(b, 'nullable');
        if (nullable !== undefined) v.nullable = nullable;
        out.variables.push(v);
        break;
      }
      case 'output': {
        const o: OutputDecl = { name: first };
        const description = attr(b, 'description');
        if (description) o.description = asString(description.value) ?? '';
        const sensitive = bool(b, 'sensitive');
        if (sensitive !== undefined) o.sensitive = sensitive;
        out.outputs.push(o);
        break;
      }
      case 'resource':
      case 'data': {
        const r: ResourceDecl = { type: first, name: second };
        const ref = attr(b, 'provider');
        const provider = ref && providerRefName(typeof ref.value === 'string' ? ref.value : source.slice(ref.start, ref.end));
        if (provider !== undefined) r.provider = provider;
        (block.type === 'resource' ? out.resources : out.dataSources).push(r);
        break;
      }
      case 'module': {
        const m: ModuleCallDecl = { name: first };
        const src = str(b, 'source');
        if (src !== undefined) m.source = src;
        const version = str(b, 'version');
        if (version !== undefined) m.version = version;
        out.moduleCalls.push(m);
        break;
      }
      case 'provider': {
        const version = str(b, 'version');
        out.providers.push({ name: first, versions: version === undefined ? [] : [version] });
        break;
      }
      case 'terraform': {
        const required = str(b, 'required_version');
        if (required !== undefined) out.requiredVersions.push(required);
        for (const inner of b.blocks) {
          if (inner.type !== 'required_providers') continue;
          for (const { name, expr } of inner.body.attributes) out.providers.push(requiredProvider(name, expr));
        }
        break;
      }
    }
  }
  return out;
}

/**
 * The local name a resource's `provider` argument names: the root of a
 * traversal (`aws.west`), or of the same text quoted, as older configurations
 * wrote it (terraform-config-inspect's load_hcl.go reads both).
 */
export function providerRefName(text: string): string | undefined {
  return /^\s*([\p{L}_][\p{L}\p{N}_-]*)\s*(\.\s*[\p{L}_][\p{L}\p{N}_-]*\s*)?$/u.exec(text)?.[1];
}

/** `aws = "~> 3.0"` (legacy) or `aws = { source = "hashicorp/aws", version = ">= 5" }`. */
function requiredProvider(name: string, expr: Expr): ProviderDecl {
  const legacy = asString(expr.value);
  if (legacy !== undefined) return { name, versions: [legacy] };
  const decl: ProviderDecl = { name, versions: [] };
  // configuration_aliases holds references, so the object as a whole is not a constant.
  for (const { key, expr: item } of expr.entries ?? []) {
    const value = asString(item.value);
    if (value === undefined) continue;
    if (key === 'source') decl.source = value;
    if (key === 'version') decl.versions.push(value);
  }
  return decl;
}

// ---- JSON syntax (.tf.json) ------------------------------------------------

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(v: Json | undefined): v is { [key: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A JSON block may be given as an object or as an array of objects. */
function objects(v: Json | undefined): { [key: string]: Json }[] {
  if (Array.isArray(v)) return v.filter(isObject);
  return isObject(v) ? [v] : [];
}

/** Labelled blocks: `{"variable": {"name": {...}}}`, each level possibly an array. */
function labelled(v: Json | undefined, depth: number): { labels: string[]; body: { [key: string]: Json } }[] {
  if (depth === 0) return objects(v).map((body) => ({ labels: [], body }));
  return objects(v).flatMap((o) =>
    Object.entries(o).flatMap(([label, inner]) => labelled(inner, depth - 1).map((b) => ({ labels: [label, ...b.labels], body: b.body }))),
  );
}

/**
 * Where the first array or object past MAX_NESTING opens, or -1. JSON.parse
 * reads any depth, but what walks a value later (JSON.stringify of a default,
 * in the documents and the cache) recurses, so JSON is bounded as HCL is.
 */
function tooDeepAt(source: string): number {
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    if (c === 0x22) {
      // A string: brackets in it do not count; a backslash escapes the next character.
      for (i++; i < source.length && source.charCodeAt(i) !== 0x22; i++) if (source.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_NESTING) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return -1;
}

export function declarationsFromJson(source: string): FileDeclarations {
  let root: Json;
  try {
    root = JSON.parse(source) as Json;
  } catch (error) {
    const offset = Number(/position (\d+)/.exec(String(error))?.[1] ?? 0);
    const { line, column } = positionOf(source, offset);
    throw new HclSyntaxError(`Invalid JSON: ${(error as Error).message}`, line, column);
  }
  if (!isObject(root)) throw new HclSyntaxError('The root of a .tf.json file must be an object', 1, 1);
  const deep = tooDeepAt(source);
  if (deep !== -1) {
    const { line, column } = positionOf(source, deep);
    throw new HclSyntaxError(TOO_DEEP, line, column);
  }
  const out = emptyDeclarations();
  // With no evaluation context, JSON strings are literal (no template interpretation), as in HCL.
  for (const { labels, body } of labelled(root['variable'], 1)) {
    const v: VariableDecl = { name: labels[0]! };
    if ('type' in body) v.type = asString(body['type']) ?? JSON.stringify(body['type']);
    if ('description' in body) v.description = asString(body['description']) ?? '';
    if ('default' in body) v.default = { value: body['default'] };
    const sensitive = asBool(body['sensitive']);
    if (sensitive !== undefined) v.sensitive = sensitive;
    const nullable = asBool(body['nullable']);
    if (nullable !== undefined) v.nullable = nullable;
    out.variables.push(v);
  }
  for (const { labels, body } of labelled(root['output'], 1)) {
    const o: OutputDecl = { name: labels[0]! };
    if ('description' in body) o.description = asString(body['description']) ?? '';
    const sensitive = asBool(body['sensitive']);
    if (sensitive !== undefined) o.sensitive = sensitive;
    out.outputs.push(o);
  }
  for (const [key, list] of [
    ['resource', out.resources],
    ['data', out.dataSources],
  ] as const) {
    for (const { labels, body } of labelled(root[key], 2)) {
      const r: ResourceDecl = { type: labels[0]!, name: labels[1]! };
      // In JSON a reference is written as a string holding it.
      const ref = asString(body['provider']);
      const provider = ref === undefined ? undefined : providerRefName(ref);
      if (provider !== undefined) r.provider = provider;
      list.push(r);
    }
  }
  for (const { labels, body } of labelled(root['module'], 1)) {
    const m: ModuleCallDecl = { name: labels[0]! };
    const src = asString(body['source']);
    if (src !== undefined) m.source = src;
    const version = asString(body['version']);
    if (version !== undefined) m.version = version;
    out.moduleCalls.push(m);
  }
  for (const { labels, body } of labelled(root['provider'], 1)) {
    const version = asString(body['version']);
    out.providers.push({ name: labels[0]!, versions: version === undefined ? [] : [version] });
  }
  for (const { body } of labelled(root['terraform'], 0)) {
    const required = asString(body['required_version']);
    if (required !== undefined) out.requiredVersions.push(required);
    for (const providers of objects(body['required_providers'])) {
      for (const [name, spec] of Object.entries(providers)) {
        const legacy = asString(spec);
        if (legacy !== undefined) out.providers.push({ name, versions: [legacy] });
        else if (isObject(spec)) {
          const decl: ProviderDecl = { name, versions: [] };
          const src = asString(spec['source']);
          if (src !== undefined) decl.source = src;
          const version = asString(spec['version']);
          if (version !== undefined) decl.versions.push(version);
          out.providers.push(decl);
        }
      }
    }
  }
  return out;
}
