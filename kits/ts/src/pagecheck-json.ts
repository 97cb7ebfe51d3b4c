// The strict JSON parser of the pagecheck port (Go jsonparse.go) and the
// JSON writer of snippets and markup (Go object.go).
//
// The parser reads a JavaScript string; its error offsets are converted to
// the UTF-8 byte offsets Go reports, and columns count code points as in Go.

import { hexDigit, utf8Length } from "./pagecheck-text.js";

/** The deepest nesting of arrays and objects parseJSON accepts. */
export const MAX_JSON_DEPTH = 100;

/** A JSON number, kept as its exact text (Go json.Number). */
export class JSONNumber {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
  valueOf(): number {
    return Number(this.text);
  }
}

/** A parsed JSON object: its members in source order, the last of duplicate keys kept. */
export type JSONObject = Map<string, JSONValue>;

/** A value as parseJSON builds it. */
export type JSONValue = null | boolean | string | JSONNumber | JSONValue[] | JSONObject;

/**
 * A JSON syntax error: a fixed message, the 1-based line and column (in code
 * points) and the UTF-8 byte offset of the offending character.
 */
export interface JSONError {
  message: string;
  line: number;
  column: number;
  offset: number;
}

/** Go's JSONError.Error() text. */
export function formatJSONError(e: JSONError): string {
  return `${e.message} at line ${e.line}, column ${e.column} (offset ${e.offset})`;
}

export type ParseResult = { ok: true; value: JSONValue } | { ok: false; error: JSONError };

class Fail {
  constructor(
    readonly message: string,
    readonly index: number,
  ) {}
}

const SIMPLE_ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

class Parser {
  i = 0;
  constructor(readonly s: string) {}

  fail(msg: string): Fail {
    return new Fail(msg, this.i);
  }

  eof(): Fail {
    return this.fail("unexpected end of input");
  }

  /** The character at i for messages: 'c', or U+XXXX for controls and U+FEFF. */
  charAt(): string {
    let r = this.s.codePointAt(this.i) ?? 0xfffd;
    if (r >= 0xd800 && r <= 0xdfff) r = 0xfffd; // a lone surrogate reads as U+FFFD
    if (r < 0x20 || (r >= 0x7f && r <= 0x9f) || r === 0xfeff) {
      return "U+" + r.toString(16).toUpperCase().padStart(4, "0");
    }
    return "'" + String.fromCodePoint(r) + "'";
  }

  skipWS(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s[this.i];
      if (c === " " || c === "\t" || c === "\n" || c === "\r") this.i++;
      else return;
    }
  }

  value(depth: number): JSONValue {
    const s = this.s;
    if (this.i >= s.length) throw this.eof();
    const c = s[this.i];
    if (c === "{") return this.object(depth + 1);
    if (c === "[") return this.array(depth + 1);
    if (c === '"') return this.str();
    if (c === "-" || (c >= "0" && c <= "9")) return this.number();
    if (c === "t") {
      this.literal("true");
      return true;
    }
    if (c === "f") {
      this.literal("false");
      return false;
    }
    if (c === "n") {
      this.literal("null");
      return null;
    }
    throw this.fail("expected value, found " + this.charAt());
  }

  literal(word: string): void {
    for (let k = 0; k < word.length; k++) {
      if (this.i >= this.s.length) throw this.eof();
      if (this.s[this.i] !== word[k]) throw this.fail("invalid literal");
      this.i++;
    }
  }

  object(depth: number): JSONObject {
    if (depth > MAX_JSON_DEPTH) throw this.fail("nesting too deep");
    const s = this.s;
    this.i++; // {
    const obj: JSONObject = new Map();
    this.skipWS();
    if (this.i < s.length && s[this.i] === "}") {
      this.i++;
      return obj;
    }
    for (;;) {
      if (this.i >= s.length) throw this.eof();
      if (s[this.i] !== '"') throw this.fail("expected string key, found " + this.charAt());
      const k = this.str();
      this.skipWS();
      if (this.i >= s.length) throw this.eof();
      if (s[this.i] !== ":") throw this.fail("expected ':' after object key, found " + this.charAt());
      this.i++;
      this.skipWS();
      const v = this.value(depth);
      obj.set(k, v);
      this.skipWS();
      if (this.i >= s.length) throw this.eof();
      switch (s[this.i]) {
        case ",":
          this.i++;
          this.skipWS();
          break;
        case "}":
          this.i++;
          return obj;
        default:
          throw this.fail("expected ',' or '}' after object member, found " + this.charAt());
      }
    }
  }

  array(depth: number): JSONValue[] {
    if (depth > MAX_JSON_DEPTH) throw this.fail("nesting too deep");
    const s = this.s;
    this.i++; // [
    const arr: JSONValue[] = [];
    this.skipWS();
    if (this.i < s.length && s[this.i] === "]") {
      this.i++;
      return arr;
    }
    for (;;) {
      arr.push(this.value(depth));
      this.skipWS();
      if (this.i >= s.length) throw this.eof();
      switch (s[this.i]) {
        case ",":
          this.i++;
          this.skipWS();
          break;
        case "]":
          this.i++;
          return arr;
        default:
          throw this.fail("expected ',' or ']' after array element, found " + this.charAt());
      }
    }
  }

  str(): string {
    const s = this.s;
    this.i++; // opening quote
    let out = "";
    let run = this.i; // start of the pending run of plain characters
    for (;;) {
      if (this.i >= s.length) throw this.eof();
      const c = s.charCodeAt(this.i);
      if (c === 0x22 /* " */) {
        out += s.slice(run, this.i);
        this.i++;
        return out;
      }
      if (c === 0x5c /* \ */) {
        out += s.slice(run, this.i);
        let r = this.escape();
        if (r >= 0xd800 && r <= 0xdbff && s.startsWith("\\u", this.i)) {
          const save = this.i;
          const r2 = this.escape();
          if (r2 >= 0xdc00 && r2 <= 0xdfff) {
            out += String.fromCodePoint(0x10000 + ((r - 0xd800) << 10) + (r2 - 0xdc00));
            run = this.i;
            continue;
          }
          this.i = save;
        }
        if (r >= 0xd800 && r <= 0xdfff) r = 0xfffd;
        out += String.fromCodePoint(r);
        run = this.i;
        continue;
      }
      if (c < 0x20) throw this.fail("control character in string");
      if (c >= 0xd800 && c <= 0xdfff) {
        // A surrogate pair is one character; a lone surrogate reads as U+FFFD
        // (as an invalid UTF-8 byte does in Go).
        if (c <= 0xdbff && this.i + 1 < s.length && (s.charCodeAt(this.i + 1) & 0xfc00) === 0xdc00) {
          this.i += 2;
        } else {
          out += s.slice(run, this.i) + "\ufffd";
          this.i++;
          run = this.i;
        }
        continue;
      }
      this.i++;
    }
  }

  /** Decodes the escape sequence at s[i] === "\\" to a code point (or a surrogate). */
  escape(): number {
    const s = this.s;
    const start = this.i;
    if (this.i + 1 >= s.length) {
      this.i = s.length;
      throw this.eof();
    }
    const c = s[this.i + 1];
    const simple = Object.prototype.hasOwnProperty.call(SIMPLE_ESCAPES, c) ? SIMPLE_ESCAPES[c] : undefined;
    if (simple !== undefined) {
      this.i += 2;
      return simple.charCodeAt(0);
    }
    if (c !== "u") throw new Fail("invalid escape sequence", start);
    let v = 0;
    for (let k = 0; k < 4; k++) {
      const j = this.i + 2 + k;
      if (j >= s.length) {
        this.i = s.length;
        throw this.eof();
      }
      const d = hexDigit(s.charCodeAt(j));
      if (d < 0) throw new Fail("invalid escape sequence", start);
      v = v * 16 + d;
    }
    this.i += 6;
    return v;
  }

  number(): JSONNumber {
    const s = this.s;
    const start = this.i;
    const isDigit = (k: number): boolean => k < s.length && s[k] >= "0" && s[k] <= "9";
    const digits = (): void => {
      if (this.i >= s.length) throw this.eof();
      if (!isDigit(this.i)) throw this.fail("invalid number");
      while (isDigit(this.i)) this.i++;
    };
    if (s[this.i] === "-") this.i++;
    if (this.i < s.length && s[this.i] === "0") this.i++;
    else digits();
    if (this.i < s.length && s[this.i] === ".") {
      this.i++;
      digits();
    }
    if (this.i < s.length && (s[this.i] === "e" || s[this.i] === "E")) {
      this.i++;
      if (this.i < s.length && (s[this.i] === "+" || s[this.i] === "-")) this.i++;
      digits();
    }
    return new JSONNumber(s.slice(start, this.i));
  }
}

/** The 1-based line (LF-separated) and code point column of index off. */
function lineCol(s: string, off: number): [number, number] {
  let line = 1;
  let ls = 0;
  for (let k = 0; k < off; k++) {
    if (s.charCodeAt(k) === 0x0a) {
      line++;
      ls = k + 1;
    }
  }
  let col = 1;
  for (let k = ls; k < off; k++) {
    const c = s.charCodeAt(k);
    if (c >= 0xd800 && c <= 0xdbff && k + 1 < off && (s.charCodeAt(k + 1) & 0xfc00) === 0xdc00) k++;
    col++;
  }
  return [line, col];
}

/**
 * Parses strict RFC 8259 JSON into Map (objects, members in order, the last
 * of duplicate keys kept), arrays, strings, JSONNumber (exact text), booleans
 * and null. A lone UTF-16 surrogate escape gives U+FFFD. Depth is limited to
 * MAX_JSON_DEPTH. Errors carry Go's messages, lines, columns and byte offsets.
 */
export function parseJSON(s: string): ParseResult {
  const p = new Parser(s);
  try {
    p.skipWS();
    const v = p.value(0);
    p.skipWS();
    if (p.i < s.length) throw p.fail("unexpected " + p.charAt() + " after JSON value");
    return { ok: true, value: v };
  } catch (e) {
    if (!(e instanceof Fail)) throw e;
    const [line, column] = lineCol(s, e.index);
    return { ok: false, error: { message: e.message, line, column, offset: utf8Length(s, 0, e.index) } };
  }
}

// ---------------------------------------------------------------------------
// Ordered objects and the snippet writer (object.go)

/** A JSON object that keeps its keys in insertion order (Go Object). */
export class OrderedObject {
  readonly members: [string, SnipValue][] = [];
  get(key: string): SnipValue | undefined {
    for (const [k, v] of this.members) if (k === key) return v;
    return undefined;
  }
  push(key: string, value: SnipValue): void {
    this.members.push([key, value]);
  }
  /** JSON.stringify writes the object with its keys in order (Go MarshalJSON). */
  toJSON(): unknown {
    return toPlain(this);
  }
}

/** What the snippet writer accepts: numbers are integers. */
export type SnipValue = null | boolean | number | JSONNumber | string | OrderedObject | SnipValue[];

/** An OrderedObject from alternating keys and values. */
export function obj(...kv: SnipValue[]): OrderedObject {
  const o = new OrderedObject();
  for (let i = 0; i + 1 < kv.length; i += 2) o.push(kv[i] as string, kv[i + 1]);
  return o;
}

/**
 * Quotes s as a JSON string: '"' and '\' escaped, \b \t \n \f \r, other
 * characters below U+0020 as \u00xx (lower-case hex), everything else as is.
 */
export function jsonQuote(s: string): string {
  let out = '"';
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let esc: string | undefined;
    switch (c) {
      case 0x22:
        esc = '\\"';
        break;
      case 0x5c:
        esc = "\\\\";
        break;
      case 0x08:
        esc = "\\b";
        break;
      case 0x0c:
        esc = "\\f";
        break;
      case 0x0a:
        esc = "\\n";
        break;
      case 0x0d:
        esc = "\\r";
        break;
      case 0x09:
        esc = "\\t";
        break;
      default:
        if (c < 0x20) esc = "\\u" + c.toString(16).padStart(4, "0");
    }
    if (esc !== undefined) {
      out += s.slice(run, i) + esc;
      run = i + 1;
    }
  }
  return out + s.slice(run) + '"';
}

function writeJSON(v: SnipValue, indent: string, cur: string): string {
  const nl = (level: string): string => (indent !== "" ? "\n" + level : "");
  if (v === null) return "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number") return String(v);
  if (typeof v === "string") return jsonQuote(v);
  if (v instanceof JSONNumber) return v.text;
  if (v instanceof OrderedObject) {
    if (v.members.length === 0) return "{}";
    let b = "{";
    v.members.forEach(([k, e], i) => {
      if (i > 0) b += ",";
      b += nl(cur + indent) + jsonQuote(k) + ":" + (indent !== "" ? " " : "") + writeJSON(e, indent, cur + indent);
    });
    return b + nl(cur) + "}";
  }
  if (v.length === 0) return "[]";
  let b = "[";
  v.forEach((e, i) => {
    if (i > 0) b += ",";
    b += nl(cur + indent) + writeJSON(e, indent, cur + indent);
  });
  return b + nl(cur) + "]";
}

/** v rendered as a Finding snippet: JSON with two-space indentation. */
export function snippet(v: SnipValue): string {
  return writeJSON(v, "  ", "");
}

/** A snippet value as a plain JavaScript value (objects keep key order for non-index keys). */
export function toPlain(v: SnipValue): unknown {
  if (v instanceof OrderedObject) {
    const o: Record<string, unknown> = {};
    for (const [k, e] of v.members) {
      Object.defineProperty(o, k, { value: toPlain(e), enumerable: true, writable: true, configurable: true });
    }
    return o;
  }
  if (Array.isArray(v)) return v.map(toPlain);
  if (v instanceof JSONNumber) return Number(v.text);
  return v;
}
