// Values of an HCL1 tree as hashicorp/hcl v1's decoder gives them to
// terraform-config-inspect's legacy loader: token values (strings unquoted
// with `${...}` kept verbatim, heredocs unindented, `0x`/octal integers), the
// case-insensitive key filter, and decoding into Go's interface{}, where an
// object directly inside an object becomes a one-element list of maps (the
// HCL1 ambiguity between a block and a map, which callers then unwrap).

import { HclSyntaxError } from './hcl.js';
import type { Hcl1Item, Hcl1Node, Token } from './hcl1.js';

export class Hcl1DecodeError extends HclSyntaxError {}

const fail = (message: string, at: Token | undefined): never => {
  throw new Hcl1DecodeError(message, at?.line ?? 1, at?.column ?? 1);
};

/** A key's text: an identifier as written, a string unquoted. */
export function keyValue(token: Token): string {
  return token.type === 'STRING' ? unquote(token) : token.text;
}

/** `ObjectList.Filter(keys...)`: items whose first keys match (ignoring case), with those keys removed. */
export function filter(items: Hcl1Item[], key: string): Hcl1Item[] {
  const lower = key.toLowerCase();
  return items.filter((i) => i.keys.length >= 1 && keyValue(i.keys[0]!).toLowerCase() === lower).map((i) => ({ ...i, keys: i.keys.slice(1) }));
}

/** A list of items, as HCL1's decoder sees an object body or a filtered list. */
export interface ItemList {
  kind: 'items';
  items: Hcl1Item[];
}
type Node = Hcl1Node | ItemList | { kind: 'item'; item: Hcl1Item };

const firstToken = (node: Node): Token | undefined => (node.kind === 'literal' ? node.token : node.kind === 'item' ? node.item.keys[0] : undefined);

/** decodeString: a string, a heredoc, or a number's text. */
export function decodeString(node: Node): string {
  if (node.kind === 'literal') {
    if (node.token.type === 'NUMBER') return node.token.text;
    if (node.token.type === 'STRING' || node.token.type === 'HEREDOC') return literalValue(node.token) as string;
  }
  return fail(`unknown type for string ${node.kind}`, firstToken(node));
}

export function decodeBool(node: Node): boolean {
  if (node.kind === 'literal' && node.token.type === 'BOOL') return node.token.text === 'true';
  return fail(`unknown type for bool ${node.kind}`, firstToken(node));
}

type Kind = 'struct' | 'map' | 'slice';

/**
 * decodeInterface: what `interface{}` receives. `parent` is the Go kind being
 * decoded into around it: an object at the root or directly inside a slice
 * is a map, anywhere else a list of maps.
 */
export function decodeAny(node: Node, parent: Kind, existing?: unknown): unknown {
  if (node.kind === 'literal') return literalValue(node.token);
  if (node.kind === 'list') return decodeSlice(node, 'any', existing);
  if (node.kind === 'item') return fail('cannot decode an item into interface', firstToken(node));
  if (parent === 'slice') return decodeMap(node, existing);
  return decodeSlice(node, 'map', existing);
}

function decodeSlice(node: Node, element: 'any' | 'map', existing: unknown): unknown[] {
  const out: unknown[] = Array.isArray(existing) ? [...(existing as unknown[])] : [];
  let parts: Node[];
  if (node.kind === 'items') parts = node.items.map((item) => ({ kind: 'item', item }));
  else if (node.kind === 'object') parts = [node];
  else if (node.kind === 'list') parts = node.items;
  else return fail('unknown slice type', firstToken(node));
  for (const part of parts) out.push(element === 'map' ? decodeMap(part, undefined) : decodeAny(part, 'slice'));
  return out;
}

function decodeMap(node: Node, existing: unknown): Record<string, unknown> {
  let items: Hcl1Item[];
  if (node.kind === 'item') items = [node.item];
  else if (node.kind === 'object' || node.kind === 'items') items = node.items;
  else return fail('not an object type for map', firstToken(node));
  const out: Record<string, unknown> = existing !== null && typeof existing === 'object' && !Array.isArray(existing) ? { ...existing } : {};
  const done = new Set<string>();
  for (const item of items) {
    if (item.keys.length === 0) fail('map must have string keys', undefined);
    const key = keyValue(item.keys[0]!);
    if (done.has(key)) continue;
    let value: Node = item.value;
    // `a "b" { }` inside a map: every item under the key `a`, gathered as one list.
    if (item.keys.length > 1) {
      value = { kind: 'items', items: filter(items, key) };
      done.add(key);
    }
    out[key] = decodeAny(value, 'map', Object.hasOwn(out, key) ? out[key] : undefined);
  }
  return out;
}

/** Token.Value(): the Go value a literal decodes to. */
export function literalValue(token: Token): unknown {
  switch (token.type) {
    case 'BOOL':
      return token.text === 'true';
    case 'FLOAT':
      return Number(token.text.endsWith('.') ? token.text.slice(0, -1) : token.text);
    case 'NUMBER':
      return parseInteger(token.text);
    case 'HEREDOC':
      return unindentHeredoc(token.text);
    case 'STRING':
      return unquote(token);
    default:
      return fail(`unexpected ${token.type}`, token);
  }
}

/** strconv.ParseInt(text, 0, 64): a `0x` prefix is hexadecimal, a leading 0 octal. */
function parseInteger(text: string): number {
  const negative = text.startsWith('-');
  const digits = negative ? text.slice(1) : text;
  let value: number;
  if (/^0[xX]/.test(digits)) value = parseInt(digits.slice(2), 16);
  else if (digits.length > 1 && digits.startsWith('0')) value = parseInt(digits.slice(1), 8);
  else value = parseInt(digits, 10);
  return negative ? -value : value;
}

/** hcl/strconv.Unquote: escapes decoded outside `${...}`, everything inside one kept as written. */
function unquote(token: Token): string {
  const s = token.text.slice(1, -1);
  let out = '';
  for (let i = 0; i < s.length;) {
    if (s[i] === '$' && s[i + 1] === '{') {
      let depth = 1;
      let j = i + 2;
      for (; j < s.length && depth > 0; j++) depth += s[j] === '{' ? 1 : s[j] === '}' ? -1 : 0;
      if (depth !== 0) fail('invalid syntax: unclosed "${" in a string', token);
      out += s.slice(i, j);
      i = j;
      continue;
    }
    if (s[i] === '\n') fail('invalid syntax: newline in a string', token);
    if (s[i] !== '\\') {
      out += s[i++];
      continue;
    }
    const c = s[i + 1] ?? '';
    const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"' };
    if (c in simple) {
      out += simple[c];
      i += 2;
    } else if (/[0-7]/.test(c)) {
      out += String.fromCharCode(parseInt(s.slice(i + 1, i + 4), 8));
      i += 4;
    } else {
      const width = c === 'x' ? 2 : c === 'u' ? 4 : c === 'U' ? 8 : fail(`invalid syntax: escape "\\${c}"`, token);
      out += String.fromCodePoint(parseInt(s.slice(i + 2, i + 2 + width), 16));
      i += 2 + width;
    }
  }
  return out;
}

/**
 * unindentHeredoc, with its arithmetic kept: the text runs from `<<` to the
 * newline after the closing line, and the value drops the marker's length
 * plus one from the end (so spaces before an indented marker stay in a `<<`
 * heredoc). `<<-` removes the closing line's indentation from every line when
 * all of them have it.
 */
function unindentHeredoc(text: string): string {
  const idx = text.indexOf('\n');
  if (text[2] !== '-') return text.slice(idx + 1, text.length - idx + 1);
  const lines = text.slice(idx + 1, text.length - idx + 2).split('\n');
  const prefix = lines[lines.length - 1]!;
  if (!lines.every((l) => l.startsWith(prefix))) return text.slice(idx + 1, text.length - idx + 1).replace(/[ \t]+$/, '');
  return lines.map((l, k) => (k === lines.length - 1 ? '' : l.slice(prefix.length))).join('\n');
}
