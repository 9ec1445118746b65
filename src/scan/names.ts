// File names as bytes. A name on Linux, and in a git tree, is any bytes, not
// necessarily UTF-8, and the archive must hold each file under its own name:
// go-getter (Go's archive/tar) unpacks a name's bytes as they are. Paths stay
// strings everywhere else, so a name that is not UTF-8 is carried in one
// without loss as Python's "surrogateescape" does (PEP 383): each byte UTF-8
// cannot read becomes the lone surrogate U+DC80 + (byte - 0x80). A UTF-8 name
// is the same string as before, no two names share a string (UTF-8 never
// decodes to a lone surrogate), and nameBytes gives the bytes back.

/** A lone surrogate, which only a name that is not UTF-8 has (a surrogate pair is one code point under `u`). */
const LONE_SURROGATE = /\p{Surrogate}/u;

export function nameFromBytes(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  // U+FFFD marks what UTF-8 could not read, unless the name holds that character itself.
  if (!text.includes('\uFFFD') || Buffer.from(text).equals(bytes)) return text;
  let out = '';
  for (let i = 0; i < bytes.length;) {
    const length = sequenceLength(bytes, i);
    if (length === 0) out += String.fromCharCode(0xdc00 + bytes[i++]!);
    else out += bytes.toString('utf8', i, (i += length));
  }
  return out;
}

/** The bytes of a name nameFromBytes made. */
export function nameBytes(name: string): Buffer {
  if (!LONE_SURROGATE.test(name)) return Buffer.from(name);
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < name.length; i++) {
    const unit = name.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < name.length && isLow(name.charCodeAt(i + 1))) i++;
    else if (unit >= 0xdc80 && unit <= 0xdcff) {
      parts.push(Buffer.from(name.slice(start, i)), Buffer.of(unit - 0xdc00));
      start = i + 1;
    }
  }
  parts.push(Buffer.from(name.slice(start)));
  return Buffer.concat(parts);
}

/** Whether the name is UTF-8 text, so the string is its name as it stands. */
export const isTextName = (name: string): boolean => !LONE_SURROGATE.test(name);

/** A name for messages: each byte that is not UTF-8 shown as `\xNN`. */
export function showName(name: string): string {
  return isTextName(name) ? name : name.replace(/[\udc80-\udcff]/g, (c) => `\\x${(c.charCodeAt(0) - 0xdc00).toString(16)}`);
}

const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;
const isContinuation = (byte: number | undefined) => byte !== undefined && byte >= 0x80 && byte <= 0xbf;

/** The length of the well-formed UTF-8 sequence at `i` (Unicode's table 3-7), or 0 if there is none. */
function sequenceLength(bytes: Buffer, i: number): number {
  const b = bytes[i]!;
  if (b < 0x80) return 1;
  const [second, third, fourth] = [bytes[i + 1], bytes[i + 2], bytes[i + 3]];
  const within = (byte: number | undefined, low: number, high: number) => byte !== undefined && byte >= low && byte <= high;
  if (b >= 0xc2 && b <= 0xdf) return isContinuation(second) ? 2 : 0;
  if (b >= 0xe0 && b <= 0xef) {
    const secondOk = b === 0xe0 ? within(second, 0xa0, 0xbf) : b === 0xed ? within(second, 0x80, 0x9f) : isContinuation(second);
    return secondOk && isContinuation(third) ? 3 : 0;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    const secondOk = b === 0xf0 ? within(second, 0x90, 0xbf) : b === 0xf4 ? within(second, 0x80, 0x8f) : isContinuation(second);
    return secondOk && isContinuation(third) && isContinuation(fourth) ? 4 : 0;
  }
  return 0;
}
