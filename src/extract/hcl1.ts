// HCL1, the language of Terraform 0.11 and before, read as the HCL1 parser
// terraform-config-inspect falls back to (hashicorp/hcl before v2) reads it:
// a sequence of `KEY... = VALUE` and `KEY... { ... }` items, where a key is an
// identifier (letters, digits, `_`, `-` and `.`: `c4.2xlarge` is one key) or a
// quoted string, and a value is a literal, a `[...]` list or a `{...}`
// object. There are no expressions: `${...}` is text inside a string. Items
// need no newline between them; lists need commas. Its quirks are kept on
// purpose (a heredoc ends at the first line that ends with its marker; `x =`
// at the end of the file is no item), since the point is to read exactly what
// terraform-config-inspect reads.

import { HclSyntaxError, MAX_NESTING, TOO_DEEP } from './hcl.js';

export type Hcl1Token =
  | 'IDENT'
  | 'BOOL'
  | 'NUMBER'
  | 'FLOAT'
  | 'STRING'
  | 'HEREDOC'
  | 'LBRACK'
  | 'RBRACK'
  | 'LBRACE'
  | 'RBRACE'
  | 'COMMA'
  | 'ASSIGN'
  | 'PERIOD'
  | 'ADD'
  | 'SUB'
  | 'EOF';

export interface Token {
  type: Hcl1Token;
  text: string;
  line: number;
  column: number;
}

export interface Hcl1Item {
  /** Key tokens (IDENT or STRING); use keyValue() for their text. */
  keys: Token[];
  value: Hcl1Node;
}

export type Hcl1Node = { kind: 'literal'; token: Token } | { kind: 'object'; items: Hcl1Item[] } | { kind: 'list'; items: Hcl1Node[] };

const LITERALS = new Set<Hcl1Token>(['BOOL', 'NUMBER', 'FLOAT', 'STRING', 'HEREDOC']);
const PUNCTUATION: Record<string, Hcl1Token> = {
  '[': 'LBRACK',
  ']': 'RBRACK',
  '{': 'LBRACE',
  '}': 'RBRACE',
  ',': 'COMMA',
  '=': 'ASSIGN',
  '+': 'ADD',
  '-': 'SUB',
  '.': 'PERIOD',
};

/** Parses one file; throws HclSyntaxError where the HCL1 parser would fail. */
export function parseHcl1(source: string): Hcl1Item[] {
  const parser = new Parser(new Scanner(source.replace(/\r\n/g, '\n')));
  return parser.objectList(false);
}

const isLetter = (c: string) => /[A-Za-z_]/.test(c) || (c > '\x7f' && /\p{L}/u.test(c));
const isDigit = (c: string) => /[0-9]/.test(c) || (c > '\x7f' && /\p{Nd}/u.test(c));
const isDecimal = (c: string) => c >= '0' && c <= '9';
const isHex = (c: string) => /[0-9a-fA-F]/.test(c);

class Scanner {
  private pos = 0;
  private line = 1;
  private lineStart = 0;

  constructor(private readonly src: string) {}

  private fail(message: string, at = this.pos): never {
    // The line holding `at` (at is never before the current line's start by more than a token).
    const before = this.src.slice(0, at);
    const line = before.split('\n').length;
    throw new HclSyntaxError(message, line, at - (before.lastIndexOf('\n') + 1) + 1);
  }

  private peek(offset = 0): string {
    return this.src[this.pos + offset] ?? '';
  }

  private advance(): string {
    const c = this.src[this.pos++] ?? '';
    if (c === '\n') {
      this.line++;
      this.lineStart = this.pos;
    }
    return c;
  }

  next(): Token {
    for (;;) {
      while (/[ \t\n\r]/.test(this.peek())) this.advance();
      const start = this.pos;
      const line = this.line;
      const column = start - this.lineStart + 1;
      const token = (type: Hcl1Token): Token => ({ type, text: this.src.slice(start, this.pos), line, column });
      const c = this.advance();
      if (c === '') return token('EOF');
      if (c === '#' || (c === '/' && (this.peek() === '/' || this.peek() === '*'))) {
        this.comment(c, start);
        continue;
      }
      if (isLetter(c)) {
        while (isLetter(this.peek()) || isDigit(this.peek()) || this.peek() === '-' || this.peek() === '.') this.advance();
        const text = this.src.slice(start, this.pos);
        return token(text === 'true' || text === 'false' ? 'BOOL' : 'IDENT');
      }
      if (isDecimal(c) || (c === '-' && isDecimal(this.peek()))) return token(this.number(c === '-' ? this.advance() : c, start));
      if (c === '"') this.string(start);
      else if (c === '<') this.heredoc(start);
      else if (c === '.' && isDecimal(this.peek())) {
        while (isDecimal(this.peek())) this.advance();
        this.exponent();
        return token('FLOAT');
      } else if (PUNCTUATION[c]) return token(PUNCTUATION[c]);
      else this.fail(c === '/' ? "expected '/' for comment" : 'illegal char', start);
      return token(c === '"' ? 'STRING' : 'HEREDOC');
    }
  }

  private comment(first: string, start: number): void {
    if (first === '#' || this.peek() === '/') {
      while (this.peek() !== '\n' && this.peek() !== '') this.advance();
      return;
    }
    this.advance();
    for (;;) {
      if (this.peek() === '') this.fail('comment not terminated', start);
      if (this.advance() === '*' && this.peek() === '/') {
        this.advance();
        return;
      }
    }
  }

  /** After the first digit: hex, octal-looking, decimal; a fraction or an exponent makes it a FLOAT. */
  private number(first: string, start: number): Hcl1Token {
    if (first === '0' && (this.peek() === 'x' || this.peek() === 'X')) {
      this.advance();
      if (!isHex(this.peek())) this.fail('illegal hexadecimal number', start);
      while (isHex(this.peek())) this.advance();
      return 'NUMBER';
    }
    while (isDecimal(this.peek())) this.advance();
    if (this.peek() === '.' || this.peek() === 'e' || this.peek() === 'E') {
      if (this.peek() === '.') {
        this.advance();
        while (isDecimal(this.peek())) this.advance();
      }
      this.exponent();
      return 'FLOAT';
    }
    if (first === '0' && /[89]/.test(this.src.slice(start, this.pos))) this.fail('illegal octal number', start);
    return 'NUMBER';
  }

  private exponent(): void {
    if (this.peek() !== 'e' && this.peek() !== 'E') return;
    this.advance();
    if (this.peek() === '-' || this.peek() === '+') this.advance();
    while (isDecimal(this.peek())) this.advance();
  }

  /** A quoted string: `${...}` may hold quotes and braces; a newline outside one is an error. */
  private string(start: number): void {
    let braces = 0;
    for (;;) {
      const c = this.advance();
      if ((c === '\n' && braces === 0) || c === '') this.fail('literal not terminated', start);
      if (c === '"' && braces === 0) return;
      if (braces === 0 && c === '$' && this.peek() === '{') {
        braces++;
        this.advance();
      } else if (braces > 0 && c === '{') braces++;
      if (braces > 0 && c === '}') braces--;
      if (c === '\\') this.escape();
    }
  }

  private escape(): void {
    const at = this.pos - 1;
    const c = this.advance();
    const digits = (count: number, valid: (d: string) => boolean) => {
      for (let i = 0; i < count; i++) {
        if (!valid(this.peek())) this.fail('illegal char escape', at);
        this.advance();
      }
    };
    if ('abfnrtv\\"'.includes(c) && c !== '') return;
    if (c >= '0' && c <= '7') return digits(2, (d) => d >= '0' && d <= '7');
    if (c === 'x') return digits(2, isHex);
    if (c === 'u') return digits(4, isHex);
    if (c === 'U') return digits(8, isHex);
    this.fail('illegal char escape', at);
  }

  /** `<<MARKER` or `<<-MARKER`, a newline, then lines up to one that ends with MARKER (and its newline). */
  private heredoc(start: number): void {
    if (this.advance() !== '<') this.fail("heredoc expected second '<', didn't see it", start);
    const anchorStart = this.pos;
    if (this.peek() === '-') this.advance();
    while (isLetter(this.peek()) || isDigit(this.peek())) this.advance();
    const anchor = this.src.slice(anchorStart, this.pos);
    if (this.peek() === '') this.fail('heredoc not terminated', start);
    if (this.advance() !== '\n') this.fail('invalid characters in heredoc anchor', start);
    if (anchor === '' || anchor === '-') this.fail('zero-length heredoc anchor', start);
    const marker = anchor.startsWith('-') ? anchor.slice(1) : anchor;
    for (;;) {
      const end = this.src.indexOf('\n', this.pos);
      if (end === -1) this.fail('heredoc not terminated', start);
      const line = this.src.slice(this.pos, end);
      while (this.pos <= end) this.advance();
      // HCL1's test is the regexp `[[:space:]]*MARKER\z`, unanchored at the start: any line ending with the marker ends it.
      if (line.length >= anchor.length && line.endsWith(marker)) return;
    }
  }
}

class Parser {
  private token: Token | undefined;
  private buffered = false;
  /** Objects and lists open around the current token, bounded as in the HCL2 parser (see MAX_NESTING). */
  private depth = 0;

  constructor(private readonly scanner: Scanner) {}

  private scan(): Token {
    if (this.buffered) this.buffered = false;
    else this.token = this.scanner.next();
    return this.token!;
  }

  private unscan(): void {
    this.buffered = true;
  }

  private fail(message: string, at: Token): never {
    throw new HclSyntaxError(message, at.line, at.column);
  }

  /** Items up to the end of the file, or up to (not including) the `}` of an object. */
  objectList(inObject: boolean): Hcl1Item[] {
    const items: Hcl1Item[] = [];
    for (;;) {
      if (inObject) {
        const next = this.scan();
        this.unscan();
        if (next.type === 'RBRACE') break;
      }
      const item = this.objectItem();
      if (item === 'EOF') break;
      items.push(item);
      if (this.scan().type !== 'COMMA') this.unscan();
    }
    return items;
  }

  /** `'EOF'` where the HCL1 parser stops quietly: at the end of the file, even after `KEY =`. */
  private objectItem(): Hcl1Item | 'EOF' {
    const keys: Token[] = [];
    for (;;) {
      const t = this.scan();
      if (t.type === 'IDENT' || t.type === 'STRING') {
        keys.push(t);
        continue;
      }
      if (t.type === 'EOF' && keys.length === 0) return 'EOF';
      const names = keys.map((k) => k.text).join(' ');
      if (t.type === 'ASSIGN') {
        if (keys.length === 0) this.fail('no object keys found!', t);
        if (keys.length > 1) this.fail('nested object expected: LBRACE got: ASSIGN', t);
        const value = this.value();
        return value === 'EOF' ? 'EOF' : { keys, value };
      }
      if (t.type === 'LBRACE') {
        if (keys.length === 0) this.fail('expected: IDENT | STRING got: LBRACE', t);
        return { keys, value: this.object(t) };
      }
      if (keys.length > 0 && (t.type === 'EOF' || t.type === 'RBRACE')) this.fail(`key '${names}' expected start of object ('{') or assignment ('=')`, t);
      this.fail(`expected: IDENT | STRING | ASSIGN | LBRACE got: ${t.type}`, t);
    }
  }

  private value(): Hcl1Node | 'EOF' {
    const t = this.scan();
    if (LITERALS.has(t.type)) return { kind: 'literal', token: t };
    if (t.type === 'LBRACE') return this.object(t);
    if (t.type === 'LBRACK') return this.list(t);
    if (t.type === 'EOF') return 'EOF';
    this.fail(`Unknown token: ${t.type} ${JSON.stringify(t.text)}`, t);
  }

  /** After `{`. */
  private object(open: Token): Hcl1Node {
    this.deeper(open);
    const items = this.objectList(true);
    const close = this.scan();
    if (close.type !== 'RBRACE') this.fail(`object expected closing RBRACE got: ${close.type}`, close);
    this.depth--;
    return { kind: 'object', items };
  }

  /** Not undone when a syntax error is thrown: the parser is then discarded. */
  private deeper(open: Token): void {
    if (++this.depth > MAX_NESTING) this.fail(TOO_DEEP, open);
  }

  /** After `[`: commas between items (a nested list needs none after it, as in HCL1). */
  private list(open: Token): Hcl1Node {
    this.deeper(open);
    const items: Hcl1Node[] = [];
    let needComma = false;
    for (;;) {
      const t = this.scan();
      if (needComma && t.type !== 'COMMA' && t.type !== 'RBRACK') this.fail(`error parsing list, expected comma or list end, got: ${t.type}`, t);
      if (LITERALS.has(t.type)) {
        items.push({ kind: 'literal', token: t });
        needComma = true;
      } else if (t.type === 'COMMA') needComma = false;
      else if (t.type === 'LBRACE') {
        items.push(this.object(t));
        needComma = true;
      } else if (t.type === 'LBRACK') items.push(this.list(t));
      else if (t.type === 'RBRACK') {
        this.depth--;
        return { kind: 'list', items };
      } else this.fail(`unexpected token while parsing list: ${t.type}`, t);
    }
  }
}
