// What one HCL1 file declares, read as terraform-config-inspect's legacy
// loader (tfconfig/load_legacy.go) reads it when HCL2 cannot load a folder:
// variables (type as its string, default decoded by HCL1's rules, required
// when there is none), outputs, resources, data sources, module calls,
// provider versions and required_version. Anything its loader rejects (a
// missing label, a value of the wrong kind, `required_providers`) throws, so
// the folder keeps HCL2's errors instead, as terraform-config-inspect does.

import type { FileDeclarations, ModuleCallDecl, OutputDecl, ResourceDecl, VariableDecl } from './declarations.js';
import { parseHcl1, type Hcl1Item } from './hcl1.js';
import { decodeAny, decodeBool, decodeString, filter, Hcl1DecodeError, keyValue, type ItemList } from './hcl1-decode.js';

export function declarationsFromHcl1(source: string): FileDeclarations {
  const root = parseHcl1(source);
  const out: FileDeclarations = { variables: [], outputs: [], resources: [], dataSources: [], moduleCalls: [], providers: [], requiredVersions: [] };

  for (const item of filter(root, 'terraform')) {
    const body = item.keys.length > 0 ? [item] : bodyOf(item);
    if (filter(body, 'required_providers').length > 0) reject(item, 'terraform.required_providers must not exist');
    const required = field(body, 'required_version', decodeString);
    if (required) out.requiredVersions.push(required);
  }
  for (const item of labelled(root, 'variable', 1)) {
    const body = bodyOf(item);
    const v: VariableDecl = { name: keyValue(item.keys[0]!) };
    const type = field(body, 'type', decodeString);
    if (type !== undefined) v.type = type;
    const description = field(body, 'description', decodeString);
    if (description !== undefined) v.description = description;
    const value = field(body, 'default', decodeDefault);
    if (value !== undefined) v.default = { value };
    out.variables.push(v);
  }
  for (const item of labelled(root, 'output', 1)) {
    const body = bodyOf(item);
    const o: OutputDecl = { name: keyValue(item.keys[0]!) };
    const description = field(body, 'description', decodeString);
    if (description !== undefined) o.description = description;
    const sensitive = field(body, 'sensitive', decodeBool);
    if (sensitive !== undefined) o.sensitive = sensitive;
    out.outputs.push(o);
  }
  for (const [blockType, list] of [
    ['resource', out.resources],
    ['data', out.dataSources],
  ] as const) {
    for (const item of labelled(root, blockType, 2)) {
      const r: ResourceDecl = { type: keyValue(item.keys[0]!), name: keyValue(item.keys[1]!) };
      // `provider = "aws.west"`: the name is what precedes the first dot; empty means the type's own.
      const provider = field(bodyOf(item), 'provider', decodeString)?.split('.')[0];
      if (provider) r.provider = provider;
      list.push(r);
    }
  }
  for (const item of labelled(root, 'module', 1)) {
    const body = bodyOf(item);
    const m: ModuleCallDecl = { name: keyValue(item.keys[0]!) };
    const source = field(body, 'source', decodeString);
    if (source !== undefined) m.source = source;
    const version = field(body, 'version', decodeString);
    if (version !== undefined) m.version = version;
    out.moduleCalls.push(m);
  }
  for (const item of labelled(root, 'provider', 1)) {
    const version = field(bodyOf(item), 'version', decodeString);
    out.providers.push({ name: keyValue(item.keys[0]!), versions: version ? [version] : [] });
  }
  return out;
}

function reject(item: Hcl1Item | undefined, message: string): never {
  const at = item?.keys[0];
  throw new Hcl1DecodeError(message, at?.line ?? 1, at?.column ?? 1);
}

/** `list.Filter(type).Children()`, each with exactly the labels the block needs. */
function labelled(root: Hcl1Item[], type: string, labels: number): Hcl1Item[] {
  const items = filter(root, type).filter((i) => i.keys.length > 0);
  for (const item of items) if (item.keys.length !== labels) reject(item, `${type} block has ${labels === 1 ? 'no label' : 'wrong label count'}`);
  return items;
}

/** A block's body as the struct decoder reads it; a block that is not an object fails to decode. */
function bodyOf(item: Hcl1Item): Hcl1Item[] {
  if (item.value.kind !== 'object') reject(item, 'not an object type for struct');
  return item.value.items;
}

/**
 * One struct field, matched by name ignoring case: `name = value` items and
 * `name "label" {...}` items both count; the last one decoded wins.
 */
function field<T>(body: Hcl1Item[], name: string, decode: (node: ItemList | Hcl1Item['value']) => T): T | undefined {
  const matches = filter(body, name);
  const prefixed = matches.filter((i) => i.keys.length > 0);
  let result: T | undefined;
  if (prefixed.length > 0) result = decode({ kind: 'items', items: prefixed });
  for (const match of matches.filter((i) => i.keys.length === 0)) {
    // An object value is decoded as the list of its items, as decodeStruct hands it on.
    result = decode(match.value.kind === 'object' ? { kind: 'items', items: match.value.items } : match.value);
  }
  return result;
}

/**
 * A default as interface{} receives it. An object is decoded as a list of
 * one-entry maps (HCL1 cannot tell a map from repeated blocks); the loader
 * merges them back into one map. A list of objects stays a list.
 */
function decodeDefault(node: ItemList | Hcl1Item['value']): unknown {
  const value = decodeAny(node, 'struct');
  return node.kind === 'items' ? Object.assign({}, ...(value as object[])) : value;
}

/**
 * The legacy loader refuses a second variable, output or resource of the same
 * name anywhere in the folder; override files are merged before this, as
 * Terraform merges them (see index.ts).
 */
export function legacyDuplicate(files: FileDeclarations[]): string | undefined {
  const seen = new Set<string>();
  for (const f of files) {
    const keys = [
      ...f.variables.map((v) => `variable "${v.name}"`),
      ...f.outputs.map((o) => `output "${o.name}"`),
      ...f.resources.map((r) => `resource "${r.type}" "${r.name}"`),
      ...f.dataSources.map((r) => `data "${r.type}" "${r.name}"`),
    ];
    for (const key of keys) {
      if (seen.has(key)) return `duplicate ${key}`;
      seen.add(key);
    }
  }
  return undefined;
}
