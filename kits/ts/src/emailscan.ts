// The email scan of the reply guard, in its own module so the tests can
// compare it with the plain regex scan without making it kit API.

import type { Span } from "./span.js";

// The regex is the Go guard's (same rules as the others in replyguard.ts:
// no flags beyond g, no \b, \s, \d, \w, look-around or anchors).
export const RE_EMAIL = /[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}/g;

// The sticky twin of RE_EMAIL, which matches only at lastIndex, and the
// maximal runs of the characters a local part is made of.
const RE_EMAIL_AT = new RegExp(RE_EMAIL.source, "y");
const RE_LOCAL_RUN = /[a-z0-9._%+-]+/g;

/**
 * The matches of RE_EMAIL in scan (what exec in a loop finds), in linear
 * time. A backtracking engine tries the regex at every position of a long
 * run of local-part characters and runs to the end of the run each time
 * ("aaaa…" with or without an "@" after it, "a@a.a.a.…!"): quadratic,
 * where Go's RE2 is linear. The matches are the same because the same regex
 * decides at every position tried; only positions that cannot start a
 * match are skipped. A match starts with a local-part character, and "@"
 * is none, so the local part from any start p in a maximal run of them
 * ends where the run ends, at r, and needs an "@" there; what follows the
 * "@" is matched the same way whatever p was. So either every start in
 * [p, r) gives a match or none does: each run is tried once, from its first
 * position not before the end of the last match, and not at all when no
 * "@" follows it. Each attempt reads the run and the domain characters
 * after its "@" (no "@" among them), so no text is read more than a few
 * times.
 */
export function findEmails(scan: string): Span[] {
  const out: Span[] = [];
  let q = 0;
  for (;;) {
    RE_LOCAL_RUN.lastIndex = q;
    const run = RE_LOCAL_RUN.exec(scan);
    if (run === null) break;
    const p = run.index;
    const r = p + run[0].length;
    if (scan.charCodeAt(r) === 0x40 /* @ */) {
      RE_EMAIL_AT.lastIndex = p;
      const hit = RE_EMAIL_AT.exec(scan);
      if (hit !== null) {
        out.push({ start: p, end: p + hit[0].length });
        q = p + hit[0].length;
        continue;
      }
    }
    q = r;
  }
  return out;
}
