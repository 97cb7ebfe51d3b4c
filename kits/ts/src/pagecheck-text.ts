// Text helpers, HTML character references, the HTML scanner, text
// extraction and placeholder detection of the pagecheck port (Go files
// scan.go, entity.go, text.go, placeholder.go and the small helpers).
//
// Strings here are JavaScript strings (UTF-16). The Go code works on UTF-8
// bytes, but every delimiter it looks for is ASCII, and an ASCII code unit
// never occurs inside another character in UTF-16 either, so scanning by
// code unit finds the same places and slices the same text. Where Go counts
// (code points, bytes) or orders (byte order) the helpers below do the same.

// ---------------------------------------------------------------------------
// Small string helpers

/** Lowers A-Z only; every other character is kept (Go asciiLower). */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

function trimSet(s: string, set: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && set.includes(s[a])) a++;
  while (b > a && set.includes(s[b - 1])) b--;
  return s.slice(a, b);
}

/** Go strings.Trim(s, cutset) for an ASCII cutset. */
export function trimChars(s: string, set: string): string {
  return trimSet(s, set);
}

/** Go strings.TrimLeft(s, cutset) for an ASCII cutset. */
export function trimLeftChars(s: string, set: string): string {
  let a = 0;
  while (a < s.length && set.includes(s[a])) a++;
  return s.slice(a);
}

/** Go strings.TrimRight(s, cutset) for an ASCII cutset. */
export function trimRightChars(s: string, set: string): string {
  let b = s.length;
  while (b > 0 && set.includes(s[b - 1])) b--;
  return s.slice(0, b);
}

/** Trims space, tab, LF, VT, FF and CR at both ends (Go trimASCII). */
export function trimASCII(s: string): string {
  return trimSet(s, " \t\n\v\f\r");
}

/** Trims the HTML whitespace (space, tab, LF, FF, CR) at both ends. */
export function trimHTMLSpace(s: string): string {
  return trimSet(s, " \t\n\f\r");
}

export function isASCIILetterCode(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

export function isASCIIAlnumCode(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39);
}

/** The HTML whitespace: tab, LF, FF, CR, space. */
export function isHTMLSpaceCode(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
}

export { wellFormed } from "./gostrings.js";

/** Counts code points (Go utf8.RuneCountInString on a well-formed string). */
export function runeCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** The number of UTF-8 bytes of s[from:to] (a lone surrogate counts as U+FFFD). */
export function utf8Length(s: string, from = 0, to = s.length): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < to && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * Compares two strings in the byte order of their UTF-8 encodings (Go's
 * string order), which is code point order; UTF-16 code unit order differs
 * for characters above U+FFFF against U+E000-U+FFFF.
 */
export function compareUTF8(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.codePointAt(i) ?? 0;
    const cb = b.codePointAt(j) ?? 0;
    if (ca !== cb) return ca < cb ? -1 : 1;
    i += ca > 0xffff ? 2 : 1;
    j += cb > 0xffff ? 2 : 1;
  }
  if (i < a.length) return 1;
  if (j < b.length) return -1;
  return 0;
}

/** The keys of a map in Go's sort.Strings order. */
export function sortedKeys<V>(m: Map<string, V>): string[] {
  return [...m.keys()].sort(compareUTF8);
}

// ---------------------------------------------------------------------------
// Character references (entity.go)

const NAMED_ENTITIES: readonly [string, string][] = [
  ["amp", "&"],
  ["lt", "<"],
  ["gt", ">"],
  ["quot", '"'],
  ["apos", "'"],
  ["nbsp", "\u00a0"],
];

const MAX_RUNE = 0x10ffff;

export function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

/** Decodes the reference at s[i] === "&": [text, length] or null. */
function decodeEntityAt(s: string, i: number): [string, number] | null {
  const rest = i + 1; // index of the character after "&"
  const n = s.length;
  if (rest < n && s[rest] === "#") {
    let j = rest + 1;
    let hex = false;
    if (j < n && (s[j] === "x" || s[j] === "X")) {
      hex = true;
      j++;
    }
    const start = j;
    let v = 0;
    let over = false;
    while (j < n) {
      const d = hexDigit(s.charCodeAt(j));
      if (d < 0 || (!hex && d > 9)) break;
      v = hex ? v * 16 + d : v * 10 + d;
      if (v > MAX_RUNE) {
        over = true;
        v = MAX_RUNE + 1;
      }
      j++;
    }
    if (j === start || j >= n || s[j] !== ";") return null;
    const len = j + 1 - i;
    if (over || v === 0 || (v >= 0xd800 && v <= 0xdfff)) return ["\ufffd", len];
    return [String.fromCodePoint(v), len];
  }
  for (const [name, text] of NAMED_ENTITIES) {
    if (s.startsWith(name, rest) && rest + name.length < n && s[rest + name.length] === ";") {
      return [text, name.length + 2];
    }
  }
  return null;
}

/**
 * Decodes HTML character references in one left-to-right pass: the named
 * references &amp; &lt; &gt; &quot; &apos; &nbsp; (case-sensitive, ";"
 * required) and decimal or hexadecimal numeric references with at least one
 * digit and their ";" (0, surrogates and values above U+10FFFF give U+FFFD).
 * Anything else is kept as written.
 */
export function decodeEntities(s: string): string {
  if (!s.includes("&")) return s;
  let out = "";
  let last = 0;
  let i = s.indexOf("&");
  while (i >= 0) {
    const r = decodeEntityAt(s, i);
    if (r) {
      out += s.slice(last, i) + r[0];
      last = i + r[1];
      i = s.indexOf("&", last);
    } else {
      i = s.indexOf("&", i + 1);
    }
  }
  return out + s.slice(last);
}

// ---------------------------------------------------------------------------
// The HTML scanner (scan.go)

/** The kinds of an HtmlToken. */
export const HtmlTokenKind = {
  /** Character data between tags (not entity-decoded). */
  Text: 0,
  /** "<name attr=value ...>". */
  StartTag: 1,
  /** "</name ...>". */
  EndTag: 2,
  /** "<!-- ... -->"; the content is the text between the markers. */
  Comment: 3,
  /** "<!...>", "<?...>" or "</" not followed by a letter: skipped markup. */
  Bogus: 4,
  /** The content of a raw text element (script, style, textarea, title). */
  RawText: 5,
} as const;
export type HtmlTokenKind = (typeof HtmlTokenKind)[keyof typeof HtmlTokenKind];

/** One attribute of a start tag: lower-case name, entity-decoded value. */
export interface HtmlAttr {
  name: string;
  value: string;
}

/**
 * One piece of scanned HTML. start and end delimit the whole token,
 * contentStart and contentEnd the content of comments and raw text (for
 * other kinds they equal start and end). Offsets are UTF-16 indexes into
 * the scanned string (Go's are byte offsets; they delimit the same text).
 */
export interface HtmlToken {
  kind: HtmlTokenKind;
  /** Lower-case tag name (start and end tags, raw text). */
  name: string;
  /** Start tags only, in source order, the first of duplicates kept. */
  attrs: HtmlAttr[];
  start: number;
  end: number;
  contentStart: number;
  contentEnd: number;
}

/** The value of the named attribute (lower case), or undefined when absent. */
export function tokenAttr(t: HtmlToken, name: string): string | undefined {
  for (const a of t.attrs) if (a.name === name) return a.value;
  return undefined;
}

const RAW_TEXT_ELEMENTS = new Set(["script", "style", "textarea", "title"]);

function tok(kind: HtmlTokenKind, name: string, start: number, end: number, cs = start, ce = end): HtmlToken {
  return { kind, name, attrs: [], start, end, contentStart: cs, contentEnd: ce };
}

/**
 * Splits HTML into tokens: a small, forgiving scanner, not an HTML5 parser
 * (the rules of the Go package's Scan).
 */
export function scanHTML(s: string): HtmlToken[] {
  const toks: HtmlToken[] = [];
  const n = s.length;
  let i = 0;
  let textStart = 0;
  const flush = (end: number): void => {
    if (end > textStart) toks.push(tok(HtmlTokenKind.Text, "", textStart, end));
  };
  while (i < n) {
    if (s.charCodeAt(i) !== 0x3c /* < */ || i + 1 >= n) {
      i++;
      continue;
    }
    const c = s[i + 1];
    if (c === "!" && s.startsWith("<!--", i)) {
      flush(i);
      const cs = i + 4;
      let ce: number;
      let end: number;
      if (s.startsWith(">", cs)) {
        ce = cs;
        end = cs + 1;
      } else if (s.startsWith("->", cs)) {
        ce = cs;
        end = cs + 2;
      } else {
        const k = s.indexOf("-->", cs);
        if (k < 0) {
          ce = n;
          end = n;
        } else {
          ce = k;
          end = k + 3;
        }
      }
      toks.push(tok(HtmlTokenKind.Comment, "", i, end, cs, ce));
      i = textStart = end;
    } else if (c === "!" || c === "?" || (c === "/" && (i + 2 >= n || !isASCIILetterCode(s.charCodeAt(i + 2))))) {
      flush(i);
      let end = n;
      const k = s.indexOf(">", i + 2);
      if (k >= 0) end = k + 1;
      toks.push(tok(HtmlTokenKind.Bogus, "", i, end));
      i = textStart = end;
    } else if (c === "/") {
      flush(i);
      let j = i + 2;
      while (j < n && !isHTMLSpaceCode(s.charCodeAt(j)) && s[j] !== "/" && s[j] !== ">") j++;
      const name = asciiLower(s.slice(i + 2, j));
      const k = s.indexOf(">", j);
      if (k < 0) return toks; // an unterminated end tag swallows the rest
      const end = k + 1;
      toks.push(tok(HtmlTokenKind.EndTag, name, i, end));
      i = textStart = end;
    } else if (isASCIILetterCode(s.charCodeAt(i + 1))) {
      flush(i);
      const t = scanStartTag(s, i);
      if (!t) return toks; // an unterminated start tag swallows the rest
      toks.push(t);
      i = textStart = t.end;
      if (RAW_TEXT_ELEMENTS.has(t.name)) {
        const cs = i;
        const [ce, end] = findRawEnd(s, cs, t.name);
        toks.push(tok(HtmlTokenKind.RawText, t.name, cs, ce));
        if (ce < n) toks.push(tok(HtmlTokenKind.EndTag, t.name, ce, end));
        i = textStart = end;
      }
    } else {
      i++;
    }
  }
  flush(n);
  return toks;
}

/** Finds the end tag of a raw text element: [contentEnd, end]. */
function findRawEnd(s: string, from: number, name: string): [number, number] {
  const n = s.length;
  for (let i = from; i + 1 < n; i++) {
    if (s[i] !== "<" || s[i + 1] !== "/") continue;
    let j = i + 2;
    if (j + name.length > n || asciiLower(s.slice(j, j + name.length)) !== name) continue;
    j += name.length;
    if (j < n && !isHTMLSpaceCode(s.charCodeAt(j)) && s[j] !== "/" && s[j] !== ">") continue;
    const k = s.indexOf(">", j);
    if (k < 0) return [i, n];
    return [i, k + 1];
  }
  return [n, n];
}

/** Scans the start tag at s[i] === "<" (followed by a letter); null when unterminated. */
function scanStartTag(s: string, i: number): HtmlToken | null {
  const n = s.length;
  let j = i + 1;
  const stop = (c: string): boolean => isHTMLSpaceCode(c.charCodeAt(0)) || c === "/" || c === ">";
  while (j < n && !stop(s[j])) j++;
  const t = tok(HtmlTokenKind.StartTag, asciiLower(s.slice(i + 1, j)), i, i);
  const seen = new Set<string>(); // attribute names, for keeping the first of duplicates
  for (;;) {
    while (j < n && (isHTMLSpaceCode(s.charCodeAt(j)) || s[j] === "/")) j++;
    if (j >= n) return null;
    if (s[j] === ">") {
      j++;
      t.end = j;
      t.contentStart = i;
      t.contentEnd = j;
      return t;
    }
    if (s[j] === "=") {
      j++; // an attribute name cannot start with "="
      continue;
    }
    const ns = j;
    while (j < n && !stop(s[j]) && s[j] !== "=") j++;
    const name = asciiLower(s.slice(ns, j));
    let k = j;
    while (k < n && isHTMLSpaceCode(s.charCodeAt(k))) k++;
    let value = "";
    if (k < n && s[k] === "=") {
      k++;
      while (k < n && isHTMLSpaceCode(s.charCodeAt(k))) k++;
      if (k >= n) return null;
      const q = s[k];
      if (q === '"' || q === "'") {
        const e = s.indexOf(q, k + 1);
        if (e < 0) return null;
        value = s.slice(k + 1, e);
        k = e + 1;
      } else {
        const vs = k;
        while (k < n && !isHTMLSpaceCode(s.charCodeAt(k)) && s[k] !== ">") k++;
        value = s.slice(vs, k);
      }
      j = k;
    }
    if (!seen.has(name)) {
      seen.add(name);
      t.attrs.push({ name, value: decodeEntities(value) });
    }
  }
}

// ---------------------------------------------------------------------------
// Text extraction (text.go)

/** The cap of extractText's result, in code points. */
export const MAX_TEXT_CHARS = 20000;

const BLOCK_ELEMENTS = new Set([
  "address", "article", "aside", "blockquote", "body", "br", "button", "caption", "dd", "details",
  "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1",
  "h2", "h3", "h4", "h5", "h6", "head", "header", "hr", "html", "li", "main", "nav",
  "ol", "option", "p", "pre", "section", "select", "summary", "table", "tbody", "td",
  "textarea", "tfoot", "th", "thead", "title", "tr", "ul",
]);

const HIDDEN_ELEMENTS = new Set(["script", "style", "noscript", "template"]);

/**
 * The page's text as an AI crawler without JavaScript sees it: comments and
 * the contents of script, style, noscript and template removed, tags removed
 * (block-level tags and removed elements leave a space), entities decoded,
 * whitespace collapsed, trimmed and cut to MAX_TEXT_CHARS code points.
 */
export function extractText(html: string): string {
  let b = "";
  let hidden = 0;
  for (const t of scanHTML(html)) {
    switch (t.kind) {
      case HtmlTokenKind.Text:
        if (hidden === 0) b += html.slice(t.start, t.end);
        break;
      case HtmlTokenKind.RawText:
        if (hidden === 0 && !HIDDEN_ELEMENTS.has(t.name)) b += html.slice(t.contentStart, t.contentEnd);
        break;
      case HtmlTokenKind.StartTag:
        if (t.name === "noscript" || t.name === "template") hidden++;
        if (BLOCK_ELEMENTS.has(t.name) || HIDDEN_ELEMENTS.has(t.name)) b += " ";
        break;
      case HtmlTokenKind.EndTag:
        if ((t.name === "noscript" || t.name === "template") && hidden > 0) hidden--;
        if (BLOCK_ELEMENTS.has(t.name) || HIDDEN_ELEMENTS.has(t.name)) b += " ";
        break;
    }
  }
  return truncateRunes(collapseSpace(decodeEntities(b)), MAX_TEXT_CHARS);
}

/** Keeps the first max code points and trims trailing spaces. */
export function truncateRunes(s: string, max: number): string {
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    if (count === max) return trimRightChars(s.slice(0, i), " ");
    count++;
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
  }
  return s;
}

/** U+0009-U+000D, U+0020 and U+00A0. */
function isCollapsible(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0xa0;
}

/** Replaces every run of collapsible whitespace with one space and trims. */
export function collapseSpace(s: string): string {
  let out = "";
  let space = false;
  let runStart = 0; // start of the pending run of kept characters
  for (let i = 0; i < s.length; i++) {
    if (isCollapsible(s.charCodeAt(i))) {
      if (!space) out += s.slice(runStart, i);
      space = true;
      continue;
    }
    if (space) {
      if (out.length > 0) out += " ";
      space = false;
      runStart = i;
    }
  }
  if (!space) out += s.slice(runStart);
  return out;
}

// ---------------------------------------------------------------------------
// Placeholder detection (placeholder.go)

// The Go regexps use only ASCII syntax that JavaScript reads alike.
const TEMPLATE_REGEXPS: readonly RegExp[] = [
  /\{\{[^{}]*\}\}/,
  /%[a-z][a-z_]{2,}%/,
  /\[(?:(?:your|insert|enter|add) [^\[\]]*|name|business name|company name|address|phone|phone number|email|city|state|zip|zip code|url|website|date|description|title)\]/,
];

const PLACEHOLDER_PHRASES = [
  "lorem ipsum", "dolor sit amet",
  "your business name", "business name here", "your company name", "company name here", "your name here",
  "insert here", "insert name", "insert text",
  "sample text", "sample name", "sample description", "sample product", "sample business", "sample company", "sample title", "sample address",
  "john doe", "jane doe", "123 main st", "123 main street", "anytown",
  "todo", "tbd", "fixme", "placeholder",
];

const PLACEHOLDER_WHOLE_VALUES = [
  "asdf", "changeme", "description", "example", "insert", "lorem", "n/a", "name", "null",
  "sample", "string", "test", "title", "undefined", "your company",
];

const PLACEHOLDER_PHONES = [
  "123-456-7890", "(123) 456-7890", "123.456.7890", "1234567890",
  "555-555-5555", "555.555.5555", "5555555555", "(555) 555-",
  "000-000-0000", "0000000000",
];

const PLACEHOLDER_HOSTS = [
  "example.com", "example.org", "example.net", "domain.com", "test.com",
  "yourdomain.com", "yoursite.com", "yourwebsite.com", "yourcompany.com",
];

/** The index of the first occurrence of pat in low that stands alone, or -1. */
function findStandalone(low: string, pat: string): number {
  let from = 0;
  for (;;) {
    const i = low.indexOf(pat, from);
    if (i < 0) return -1;
    const j = i + pat.length;
    const okBefore = !isASCIIAlnumCode(pat.charCodeAt(0)) || i === 0 || !isASCIIAlnumCode(low.charCodeAt(i - 1));
    const okAfter =
      !isASCIIAlnumCode(pat.charCodeAt(pat.length - 1)) || j === low.length || !isASCIIAlnumCode(low.charCodeAt(j));
    if (okBefore && okAfter) return i;
    from = i + 1;
  }
}

/** The placeholder text found in s, or undefined (Go FindPlaceholder). */
export function findPlaceholder(s: string): string | undefined {
  const low = asciiLower(s); // same length and positions as s
  for (const re of TEMPLATE_REGEXPS) {
    const m = re.exec(low);
    if (m) return s.slice(m.index, m.index + m[0].length);
  }
  for (const p of PLACEHOLDER_PHRASES) {
    const i = findStandalone(low, p);
    if (i >= 0) return s.slice(i, i + p.length);
  }
  for (let i = 0; i < low.length; ) {
    if (low[i] !== "x") {
      i++;
      continue;
    }
    let j = i;
    while (j < low.length && low[j] === "x") j++;
    if (
      j - i >= 3 &&
      (i === 0 || !isASCIIAlnumCode(low.charCodeAt(i - 1))) &&
      (j === low.length || !isASCIIAlnumCode(low.charCodeAt(j)))
    ) {
      return s.slice(i, j);
    }
    i = j;
  }
  const t = trimASCII(s);
  const lt = asciiLower(t);
  for (const w of PLACEHOLDER_WHOLE_VALUES) if (lt === w) return t;
  for (const group of [PLACEHOLDER_PHONES, PLACEHOLDER_HOSTS]) {
    for (const p of group) {
      const i = findStandalone(low, p);
      if (i >= 0) return s.slice(i, i + p.length);
    }
  }
  return undefined;
}
