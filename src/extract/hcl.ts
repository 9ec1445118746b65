// A parser for HCL native syntax (the `.tf` language) that keeps what the
// registry needs: the body structure, the exact source range of every
// attribute expression, and its value when it is a constant.
//
// Values follow HCL's `Expr.Value(nil)`: literals, collections, templates
// without references and operators on constants evaluate; anything that needs
// a variable, a function or a `for` expression is UNKNOWN. Syntax errors carry
// the 1-based line and column of the offending character.

export const UNKNOWN: unique symbol = Symbol('unknown');
export type Value = string | number | boolean | null | Value[] | { [key: string]: Value } | typeof UNKNOWN;

export interface Expr {
  /** Offsets into the source: `source.slice(start, end)` is the expression's exact text. */
  start: number;
  end: number;
  value: Value;
  /** For an object constructor: its items one by one, so a partly unknown object can still be read. */
  entries?: { key: string; expr: Expr }[];
}

export interface Attribute {
  name: string;
  expr: Expr;
}

export interface Block {
  type: string;
  labels: string[];
  body: Body;
}

export interface Body {
  attributes: Attribute[];
  blocks: Block[];
}

export class HclSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
    this.name = 'HclSyntaxError';
  }
}

/**
 * How deep blocks and expressions may nest. Each level is a few frames of
 * this recursive-descent parser (and of whatever walks the value after it),
 * and a file nested past what the stack holds (1000 brackets, 2 KB) crashed
 * the whole build. Real configurations nest a few levels of blocks and rarely
 * more than 20-30 of expressions; 128 leaves them ample room and stays far
 * below the stack's limit (about 1000 levels) wherever extraction runs.
 */
export const MAX_NESTING = 128;

/** The syntax error of a file nested deeper than MAX_NESTING, in any of the readers. */
export const TOO_DEEP = `Nested more than ${MAX_NESTING} levels deep (blocks, brackets, parentheses, operators), deeper than modmirror reads`;

/** Parses one `.tf` file. Throws HclSyntaxError at the first syntax error. */
export function parseHcl(source: string): Body {
  const parser = new Parser(source);
  const body = parser.body(false);
  parser.expectEnd();
  return body;
}

/** Line and column (1-based) of an offset, for messages. */
export function positionOf(source: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = source.indexOf('\n'); i !== -1 && i < offset; i = source.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

const enum Ch {
  Tab = 9,
  LF = 10,
  CR = 13,
  Space = 32,
  Bang = 33,
  Quote = 34,
  Hash = 35,
  Dollar = 36,
  Percent = 37,
  Amp = 38,
  LParen = 40,
  RParen = 41,
  Star = 42,
  Plus = 43,
  Comma = 44,
  Minus = 45,
  Dot = 46,
  Slash = 47,
  Zero = 48,
  Nine = 57,
  Colon = 58,
  Lt = 60,
  Eq = 61,
  Gt = 62,
  Question = 63,
  LBracket = 91,
  Backslash = 92,
  RBracket = 93,
  Underscore = 95,
  LBrace = 123,
  Pipe = 124,
  RBrace = 125,
  Tilde = 126,
}

const BINARY_PRECEDENCE: Record<string, number> = {
  '||': 1,
  '&&': 2,
  '==': 3,
  '!=': 3,
  '<': 4,
  '<=': 4,
  '>': 4,
  '>=': 4,
  '+': 5,
  '-': 5,
  '*': 6,
  '/': 6,
  '%': 6,
};

const OPERATOR_STARTS = new Set(Object.keys(BINARY_PRECEDENCE).map((op) => op.charCodeAt(0)));

function isIdentStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === Ch.Underscore || c > 127;
}
function isIdentPart(c: number): boolean {
  return isIdentStart(c) || (c >= Ch.Zero && c <= Ch.Nine) || c === Ch.Minus;
}
function isDigit(c: number): boolean {
  return c >= Ch.Zero && c <= Ch.Nine;
}

class Parser {
  private pos = 0;
  /** Newlines end attributes at the top level of an expression but not inside brackets. */
  private newlinesSignificant: boolean[] = [true];

  /** `depth`: the nesting a heredoc's sub-parser starts at, its parent's. */
  constructor(
    private readonly src: string,
    private depth = 0,
  ) {}

  fail(message: string, at = this.pos): never {
    const { line, column } = positionOf(this.src, at);
    throw new HclSyntaxError(message, line, column);
  }

  /**
   * One level deeper, for the recursions that follow the input's nesting
   * (expressions, blocks, unary operators). Not undone when a syntax error
   * is thrown: the parser is then discarded.
   */
  private deeper(): void {
    if (++this.depth > MAX_NESTING) this.fail(TOO_DEEP);
  }

  expectEnd(): void {
    this.skip(true);
    if (this.pos < this.src.length) this.fail(`Unexpected ${this.describe()}`);
  }

  private code(offset = 0): number {
    return this.src.charCodeAt(this.pos + offset);
  }

  private describe(): string {
    if (this.pos >= this.src.length) return 'end of file';
    const c = this.src[this.pos]!;
    return c === '\n' ? 'newline' : `character ${JSON.stringify(c)}`;
  }

  /** Skips spaces and comments, and newlines too when `newlines` is true. */
  private skip(newlines: boolean): void {
    const src = this.src;
    for (;;) {
      const c = src.charCodeAt(this.pos);
      if (c === Ch.Space || c === Ch.Tab || c === Ch.CR) this.pos++;
      else if (c === Ch.LF && newlines) this.pos++;
      else if (c === Ch.Hash || (c === Ch.Slash && src.charCodeAt(this.pos + 1) === Ch.Slash)) {
        const end = src.indexOf('\n', this.pos);
        this.pos = end === -1 ? src.length : end;
      } else if (c === Ch.Slash && src.charCodeAt(this.pos + 1) === Ch.Star) {
        const end = src.indexOf('*/', this.pos + 2);
        if (end === -1) this.fail('Unterminated block comment');
        this.pos = end + 2;
      } else return;
    }
  }

  private skipInExpr(): void {
    this.skip(!this.newlinesSignificant[this.newlinesSignificant.length - 1]);
  }

  private withNewlines<T>(significant: boolean, fn: () => T): T {
    this.newlinesSignificant.push(significant);
    try {
      return fn();
    } finally {
      this.newlinesSignificant.pop();
    }
  }

  private eat(text: string): boolean {
    if (this.src.startsWith(text, this.pos)) {
      this.pos += text.length;
      return true;
    }
    return false;
  }

  private expect(text: string, what = `"${text}"`): void {
    if (!this.eat(text)) this.fail(`Expected ${what}, found ${this.describe()}`);
  }

  private identifier(): string {
    const start = this.pos;
    if (!isIdentStart(this.code())) this.fail(`Expected a name, found ${this.describe()}`);
    this.pos++;
    while (isIdentPart(this.code())) this.pos++;
    return this.src.slice(start, this.pos);
  }

  // ---- structure ---------------------------------------------------------

  body(inBlock: boolean): Body {
    const body: Body = { attributes: [], blocks: [] };
    for (;;) {
      this.skip(true);
      if (this.pos >= this.src.length) {
        if (inBlock) this.fail('Unclosed block: expected "}" before end of file');
        return body;
      }
      if (this.code() === Ch.RBrace) {
        if (!inBlock) this.fail('Unexpected "}" with no block to close');
        return body;
      }
      const name = this.identifier();
      this.skip(false);
      if (this.code() === Ch.Eq && this.code(1) !== Ch.Eq) {
        this.pos++;
        this.skip(false);
        body.attributes.push({ name, expr: this.withNewlines(true, () => this.expression()) });
      } else {
        body.blocks.push(this.block(name));
      }
      this.endOfItem();
    }
  }

  private endOfItem(): void {
    this.skip(false);
    const c = this.code();
    if (c === Ch.LF) this.pos++;
    else if (c !== Ch.RBrace && this.pos < this.src.length) {
      this.fail(`Expected a newline after the argument or block, found ${this.describe()}`);
    }
  }

  private block(type: string): Block {
    const labels: string[] = [];
    for (;;) {
      const c = this.code();
      if (c === Ch.LBrace) break;
      if (c === Ch.Quote) {
        const start = this.pos;
        const label = this.quotedTemplate();
        if (typeof label !== 'string') this.fail('Block labels must be literal strings', start);
        labels.push(label);
      } else if (isIdentStart(c)) labels.push(this.identifier());
      else this.fail(`Expected "=" or a block body "{" after "${type}", found ${this.describe()}`);
      this.skip(false);
    }
    this.deeper();
    this.pos++;
    const body = this.withNewlines(true, () => this.body(true));
    this.expect('}');
    this.depth--;
    return { type, labels, body };
  }

  // ---- expressions -------------------------------------------------------

  expression(): Expr {
    this.deeper();
    const expr = this.conditional();
    this.depth--;
    return expr;
  }

  private conditional(): Expr {
    const start = this.pos;
    const cond = this.binary(0);
    this.skipInExpr();
    if (this.code() !== Ch.Question) return cond;
    this.pos++;
    this.skipInExpr();
    const whenTrue = this.expression();
    this.skipInExpr();
    this.expect(':', '":" in a conditional expression');
    this.skipInExpr();
    const whenFalse = this.expression();
    let value: Value = UNKNOWN;
    if (typeof cond.value === 'boolean') value = cond.value ? whenTrue.value : whenFalse.value;
    return { start, end: whenFalse.end, value };
  }

  private binaryOperator(): string | undefined {
    // Most terms have no operator after them: decided on one character, before making any string.
    if (!OPERATOR_STARTS.has(this.code())) return undefined;
    const two = this.src.slice(this.pos, this.pos + 2);
    if (two in BINARY_PRECEDENCE) return two;
    const one = this.src[this.pos];
    // `=>` belongs to for expressions; `<<` starts a heredoc, never an operator here.
    if (one !== undefined && one in BINARY_PRECEDENCE && two !== '<<') return one;
    return undefined;
  }

  private binary(minPrecedence: number): Expr {
    let left = this.unary();
    for (;;) {
      const save = this.pos;
      this.skipInExpr();
      const op = this.binaryOperator();
      const precedence = op === undefined ? 0 : BINARY_PRECEDENCE[op]!;
      if (op === undefined || precedence <= minPrecedence) {
        this.pos = save;
        return left;
      }
      this.pos += op.length;
      this.skipInExpr();
      const right = this.binary(precedence);
      left = { start: left.start, end: right.end, value: applyBinary(op, left.value, right.value) };
    }
  }

  private unary(): Expr {
    const start = this.pos;
    const c = this.code();
    if (c === Ch.Minus || c === Ch.Bang) {
      this.deeper();
      this.pos++;
      this.skipInExpr();
      const operand = this.unary();
      this.depth--;
      let value: Value = UNKNOWN;
      if (c === Ch.Minus && typeof operand.value === 'number') value = -operand.value;
      if (c === Ch.Bang && typeof operand.value === 'boolean') value = !operand.value;
      return { start, end: operand.end, value };
    }
    return this.postfix(this.term());
  }

  private postfix(term: Expr): Expr {
    let { value, end } = term;
    let changed = false;
    for (;;) {
      const save = this.pos;
      this.skipInExpr();
      const c = this.code();
      if (c === Ch.Dot && this.code(1) !== Ch.Dot) {
        this.pos++;
        if (this.eat('*')) value = UNKNOWN;
        else if (isDigit(this.code())) {
          const index = this.number().value;
          value = index === UNKNOWN ? UNKNOWN : indexValue(value, index);
        } else {
          const name = this.identifier();
          value = indexValue(value, name);
        }
      } else if (c === Ch.LBracket) {
        this.pos++;
        value = this.withNewlines(false, () => {
          this.skipInExpr();
          if (this.eat('*')) {
            this.skipInExpr();
            this.expect(']');
            return UNKNOWN;
          }
          const key = this.expression();
          this.skipInExpr();
          this.expect(']', '"]" to close the index');
          return indexValue(value, key.value);
        });
      } else {
        this.pos = save;
        return changed ? { start: term.start, end, value } : term;
      }
      changed = true;
      end = this.pos;
    }
  }

  private term(): Expr {
    const start = this.pos;
    const c = this.code();
    let value: Value;
    if (isDigit(c)) return this.number();
    if (c === Ch.Quote) value = this.quotedTemplate();
    else if (c === Ch.Lt && this.code(1) === Ch.Lt) value = this.heredoc();
    else if (c === Ch.LParen) {
      this.pos++;
      value = this.withNewlines(false, () => {
        this.skipInExpr();
        const inner = this.expression();
        this.skipInExpr();
        this.expect(')', '")" to close the parenthesis');
        return inner.value;
      });
    } else if (c === Ch.LBracket) value = this.tuple();
    else if (c === Ch.LBrace) {
      const entries: { key: string; expr: Expr }[] = [];
      value = this.object(entries);
      return { start, end: this.pos, value, entries };
    } else if (isIdentStart(c)) value = this.identifierTerm();
    else this.fail(`Expected an expression, found ${this.describe()}`);
    return { start, end: this.pos, value };
  }

  private number(): Expr {
    const start = this.pos;
    while (isDigit(this.code())) this.pos++;
    if (this.code() === Ch.Dot && isDigit(this.code(1))) {
      this.pos++;
      while (isDigit(this.code())) this.pos++;
    }
    const e = this.code();
    if (e === 69 || e === 101) {
      const sign = this.code(1);
      const digitAt = sign === Ch.Plus || sign === Ch.Minus ? 2 : 1;
      if (isDigit(this.code(digitAt))) {
        this.pos += digitAt;
        while (isDigit(this.code())) this.pos++;
      }
    }
    return { start, end: this.pos, value: Number(this.src.slice(start, this.pos)) };
  }

  private identifierTerm(): Value {
    const name = this.identifier();
    if (name === 'true') return true;
    if (name === 'false') return false;
    if (name === 'null') return null;
    // Provider-defined functions: provider::NAME::FUNCTION(...)
    while (this.code() === Ch.Colon && this.code(1) === Ch.Colon) {
      this.pos += 2;
      this.identifier();
    }
    const save = this.pos;
    this.skip(false);
    if (this.code() === Ch.LParen) {
      this.pos++;
      this.withNewlines(false, () => this.list(')', () => this.eat('...')));
      return UNKNOWN;
    }
    this.pos = save;
    return UNKNOWN;
  }

  /** Comma-separated expressions up to `close`; trailing comma allowed. */
  private list(close: string, afterItem?: () => void): Value[] {
    const values: Value[] = [];
    for (;;) {
      this.skipInExpr();
      if (this.eat(close)) return values;
      values.push(this.expression().value);
      this.skipInExpr();
      afterItem?.();
      this.skipInExpr();
      if (this.eat(close)) return values;
      this.expect(',', `"," or "${close}"`);
    }
  }

  private tuple(): Value {
    this.pos++;
    return this.withNewlines(false, () => {
      this.skipInExpr();
      if (this.isForKeyword()) {
        this.forExpression(']', false);
        return UNKNOWN;
      }
      const items = this.list(']');
      return items.some(isUnknown) ? UNKNOWN : items;
    });
  }

  private isForKeyword(): boolean {
    return this.src.startsWith('for', this.pos) && !isIdentPart(this.code(3));
  }

  /** `KEY[, VALUE] in`, shared by for expressions and template for directives. */
  private forBindings(what: string): void {
    this.identifier();
    this.skipInExpr();
    if (this.eat(',')) {
      this.skipInExpr();
      this.identifier();
      this.skipInExpr();
    }
    if (!(this.eat('in') && !isIdentPart(this.code()))) this.fail(`Expected "in" in a ${what}`);
  }

  private forExpression(close: string, isObject: boolean): void {
    this.pos += 3;
    this.skipInExpr();
    this.forBindings('for expression');
    this.skipInExpr();
    this.expression();
    this.skipInExpr();
    this.expect(':', '":" in a for expression');
    this.skipInExpr();
    this.expression();
    this.skipInExpr();
    if (isObject) {
      this.expect('=>', '"=>" in a for expression building an object');
      this.skipInExpr();
      this.expression();
      this.skipInExpr();
      this.eat('...');
      this.skipInExpr();
    }
    if (this.src.startsWith('if', this.pos) && !isIdentPart(this.code(2))) {
      this.pos += 2;
      this.skipInExpr();
      this.expression();
      this.skipInExpr();
    }
    this.expect(close, `"${close}" to close the for expression`);
  }

  private object(entries: { key: string; expr: Expr }[]): Value {
    this.pos++;
    this.skip(true);
    if (this.isForKeyword()) {
      this.withNewlines(false, () => this.forExpression('}', true));
      return UNKNOWN;
    }
    return this.withNewlines(true, () => {
      const result: { [key: string]: Value } = {};
      let known = true;
      for (;;) {
        this.skip(true);
        if (this.eat('}')) return known ? result : UNKNOWN;
        const key = this.objectKey();
        this.skip(false);
        if (!this.eat('=') && !this.eat(':')) this.fail(`Expected "=" or ":" after the object key, found ${this.describe()}`);
        this.skip(false);
        const item = this.expression();
        if (typeof key === 'string') entries.push({ key, expr: item });
        if (typeof key === 'string' && item.value !== UNKNOWN) result[key] = item.value;
        else known = false;
        this.skip(false);
        if (this.eat(',')) continue;
        const c = this.code();
        if (c !== Ch.LF && c !== Ch.RBrace) this.fail(`Expected a newline, "," or "}" after the object item, found ${this.describe()}`);
      }
    });
  }

  /** A bare identifier key is a literal name, unlike in other expressions. */
  private objectKey(): Value {
    const c = this.code();
    if (isIdentStart(c)) {
      const start = this.pos;
      const name = this.identifier();
      this.skip(false);
      const next = this.code();
      if ((next === Ch.Eq && this.code(1) !== Ch.Eq) || next === Ch.Colon) return name;
      this.pos = start;
    }
    const key = this.expression().value;
    if (typeof key === 'number' || typeof key === 'boolean') return String(key);
    return key;
  }

  // ---- templates ---------------------------------------------------------

  /** A `"..."` string; returns its value when it has no references. */
  private quotedTemplate(): Value {
    const open = this.pos;
    this.pos++;
    const value = this.template((c) => {
      if (c === Ch.Quote) return true;
      if (c === Ch.LF || Number.isNaN(c)) this.fail('Unterminated string: a quoted string must end on the line it starts', open);
      return false;
    }, true);
    this.pos++;
    return value;
  }

  private heredoc(): Value {
    const open = this.pos;
    this.pos += 2;
    const flush = this.eat('-');
    const marker = this.identifier();
    this.skip(false);
    if (this.code() !== Ch.LF) this.fail('Expected a newline after the heredoc marker');
    this.pos++;
    const contentStart = this.pos;
    const closing = new RegExp(`^[ \\t]*${marker}[ \\t]*\\r?$`, 'm');
    const rest = this.src.slice(contentStart);
    const match = closing.exec(rest);
    if (!match) this.fail(`Unterminated heredoc: no closing "${marker}" line`, open);
    const contentEnd = contentStart + match.index;
    let content = this.src.slice(contentStart, contentEnd);
    if (flush) content = flushIndent(content);
    this.pos = contentEnd + match[0].length;
    // The content is a template of its own; parse it in a sub-parser over the (dedented) text.
    const sub = new Parser(content, this.depth);
    try {
      return sub.template((c) => Number.isNaN(c), false);
    } catch (error) {
      if (!(error instanceof HclSyntaxError)) throw error;
      const base = positionOf(this.src, contentStart);
      throw new HclSyntaxError(error.message, base.line + error.line - 1, error.column);
    }
  }

  /**
   * Template body up to the character for which `atEnd` is true (not consumed).
   * Literal parts, `${ }` interpolations and `%{ }` directives; escapes only in quoted strings.
   */
  private template(atEnd: (c: number) => boolean, quoted: boolean): Value {
    const parts: Value[] = [];
    let literal = '';
    let stripNext = false;
    let onlyInterpolation = true;
    const pushLiteral = () => {
      if (stripNext) literal = literal.replace(/^\s+/, '');
      stripNext = false;
      if (literal !== '') {
        parts.push(literal);
        onlyInterpolation = false;
      }
      literal = '';
    };
    const directiveStack: string[] = [];
    for (;;) {
      const c = this.code();
      if (atEnd(c)) break;
      if ((c === Ch.Dollar || c === Ch.Percent) && this.code(1) === Ch.LBrace) {
        this.pos += 2;
        if (this.code() === Ch.Tilde) {
          this.pos++;
          literal = literal.replace(/\s+$/, '');
        }
        pushLiteral();
        const value = this.withNewlines(false, () => {
          this.skipInExpr();
          const v = c === Ch.Dollar ? this.expression().value : this.directive(directiveStack);
          this.skipInExpr();
          return v;
        });
        if (this.eat('~')) stripNext = true;
        this.expect('}', `"}" to close the template ${c === Ch.Dollar ? 'interpolation' : 'directive'}`);
        parts.push(value);
        if (c === Ch.Percent) onlyInterpolation = false;
        continue;
      }
      if ((c === Ch.Dollar || c === Ch.Percent) && this.code(1) === c && this.code(2) === Ch.LBrace) {
        literal += this.src[this.pos] + '{';
        this.pos += 3;
        continue;
      }
      if (quoted && c === Ch.Backslash) {
        literal += this.escape();
        continue;
      }
      // A run of plain characters at once: most of a template is literal text.
      const runStart = this.pos++;
      for (let d = this.code(); d !== Ch.Dollar && d !== Ch.Percent && !(quoted && d === Ch.Backslash) && !atEnd(d); d = this.code()) this.pos++;
      literal += this.src.slice(runStart, this.pos);
    }
    pushLiteral();
    if (directiveStack.length > 0) this.fail(`Missing %{ end${directiveStack.at(-1)} } in the template`);
    if (parts.length === 1 && onlyInterpolation) return parts[0]!;
    const scalars = parts.filter((p): p is string | number | boolean | null => p !== UNKNOWN && (typeof p !== 'object' || p === null));
    if (scalars.length < parts.length) return UNKNOWN;
    return scalars.map((p) => (p === null ? '' : String(p))).join('');
  }

  /** Parses a template directive's keyword and expression; directives make the template's value unknown. */
  private directive(stack: string[]): Value {
    const keyword = this.identifier();
    this.skipInExpr();
    if (keyword === 'if' || keyword === 'for') {
      if (keyword === 'for') {
        this.forBindings('template for directive');
        this.skipInExpr();
      }
      this.expression();
      stack.push(keyword);
    } else if (keyword === 'else') {
      if (stack.at(-1) !== 'if') this.fail('%{ else } without a matching %{ if }');
    } else if (keyword === 'endif' || keyword === 'endfor') {
      if (stack.pop() !== keyword.slice(3)) this.fail(`%{ ${keyword} } without a matching opening directive`);
    } else {
      this.fail(`Unknown template directive "${keyword}"`);
    }
    return UNKNOWN;
  }

  private escape(): string {
    const at = this.pos;
    const c = this.src[this.pos + 1];
    this.pos += 2;
    switch (c) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case '"':
        return '"';
      case '\\':
        return '\\';
      case 'u':
      case 'U': {
        const digits = c === 'u' ? 4 : 8;
        const hex = this.src.slice(this.pos, this.pos + digits);
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== digits) this.fail(`Invalid \\${c} escape: expected ${digits} hex digits`, at);
        this.pos += digits;
        return String.fromCodePoint(parseInt(hex, 16));
      }
      default:
        this.fail(`Invalid escape sequence "\\${c ?? ''}"`, at);
    }
  }
}

function isUnknown(v: Value): boolean {
  return v === UNKNOWN;
}

/** `<<-` heredocs drop the indentation common to all non-blank lines. */
function flushIndent(content: string): string {
  const lines = content.split('\n');
  let min = Infinity;
  for (const line of lines) {
    if (line.trim() === '') continue;
    const indent = /^[ \t]*/.exec(line)![0].length;
    min = Math.min(min, indent);
  }
  if (min === Infinity || min === 0) return content;
  return lines.map((line) => (line.trim() === '' ? line : line.slice(min))).join('\n');
}

function indexValue(collection: Value, key: Value): Value {
  if (collection === UNKNOWN || key === UNKNOWN) return UNKNOWN;
  if (Array.isArray(collection) && typeof key === 'number') return collection[key] ?? UNKNOWN;
  if (collection !== null && typeof collection === 'object' && !Array.isArray(collection) && typeof key === 'string') {
    return Object.hasOwn(collection, key) ? collection[key]! : UNKNOWN;
  }
  return UNKNOWN;
}

function applyBinary(op: string, a: Value, b: Value): Value {
  if (a === UNKNOWN || b === UNKNOWN) return UNKNOWN;
  if (typeof a === 'number' && typeof b === 'number') {
    switch (op) {
      case '+':
        return a + b;
      case '-':
        return a - b;
      case '*':
        return a * b;
      case '/':
        return b === 0 ? UNKNOWN : a / b;
      case '%':
        return b === 0 ? UNKNOWN : a % b;
      case '<':
        return a < b;
      case '<=':
        return a <= b;
      case '>':
        return a > b;
      case '>=':
        return a >= b;
    }
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') {
    if (op === '&&') return a && b;
    if (op === '||') return a || b;
  }
  const primitive = (v: Value) => v === null || typeof v !== 'object';
  if ((op === '==' || op === '!=') && primitive(a) && primitive(b)) return op === '==' ? a === b : a !== b;
  return UNKNOWN;
}
