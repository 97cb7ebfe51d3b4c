// Go string behaviour the kits share, so that error messages match the Go
// kit byte for byte.

/** Replaces lone surrogates by U+FFFD, as Go's JSON decoder does. */
export function wellFormed(s: string): string {
  return s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}

const QUOTE_ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\x07": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v",
};

/** Go's %q (strconv.Quote) of a string (lone surrogates read as U+FFFD). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of wellFormed(s)) {
    const cp = ch.codePointAt(0) ?? 0;
    const esc = QUOTE_ESCAPES[ch];
    if (esc !== undefined) {
      out += esc;
    } else if (cp === 0x20 || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch)) {
      out += ch;
    } else if (cp < 0x80) {
      out += "\\x" + cp.toString(16).padStart(2, "0");
    } else if (cp <= 0xffff) {
      out += "\\u" + cp.toString(16).padStart(4, "0");
    } else {
      out += "\\U" + cp.toString(16).padStart(8, "0");
    }
  }
  return out + '"';
}
