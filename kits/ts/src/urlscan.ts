// The web-address scan of the reply guard, in its own module so the tests
// can compare it with the plain regex scan without making it kit API.

import type { Span } from "./span.js";

const URL_PATH = String.raw`(?:/[a-z0-9._~/?#=&%+-]*[a-z0-9_~/#=&%+-])?`;
export const RE_URL = new RegExp(
  String.raw`(?:https?://|www\.)[a-z0-9-]+(?:\.[a-z0-9-]+)*` +
    URL_PATH +
    String.raw`|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|edu|gov|info|biz|io|co|us|uk|ca|au|health|dental|care|clinic|dentist|doctor|app|site|online)` +
    URL_PATH,
  "g",
);

// The regex is the Go guard's (same rules as the others in replyguard.ts:
// no flags beyond g, no \b, \s, \d, \w, look-around or anchors).

// Sticky twins of RE_URL and the helpers of findURLs: each matches only at
// lastIndex.
const RE_URL_AT = new RegExp(RE_URL.source, "y");
const RE_DOMAIN_START = /[a-z0-9-]/g;
const RE_DOMAIN_RUN = /[a-z0-9-]+(?:\.[a-z0-9-]+)*/y;
const RE_URL_SCHEME = /https?:\/\/|www\./g;

/**
 * The matches of RE_URL in scan (what exec in a loop finds), in linear
 * time. A backtracking engine retries the bare-domain branch at every
 * position of a long dotted run with no known top-level domain ("a.a.a.…"): quadratic, where Go's RE2 is linear. The
 * matches are the same because the same regex decides at every position
 * tried; only positions that cannot start a match are skipped: characters
 * no branch starts with, and, once no match starts at the beginning q of a
 * dotted run, the rest of that run, since any bare domain starting later in
 * it is also reachable from q (the regex at q tries every split of the run
 * into labels). A scheme or "www." inside the run is still tried.
 */
export function findURLs(scan: string): Span[] {
  const out: Span[] = [];
  const n = scan.length;
  let q = 0;
  let deadEnd = 0; // no bare domain starts before this (inside a failed run)
  let scheme = -1; // start of the next scheme or "www." at or after q (n: none)
  while (q < n) {
    if (q < deadEnd) {
      if (scheme < q) {
        RE_URL_SCHEME.lastIndex = q;
        const m = RE_URL_SCHEME.exec(scan);
        scheme = m === null ? n : m.index;
      }
      if (scheme >= deadEnd) {
        q = deadEnd;
        continue;
      }
      q = scheme;
    } else {
      RE_DOMAIN_START.lastIndex = q;
      const m = RE_DOMAIN_START.exec(scan);
      if (m === null) break;
      q = m.index;
    }
    RE_URL_AT.lastIndex = q;
    const hit = RE_URL_AT.exec(scan);
    if (hit !== null) {
      out.push({ start: q, end: q + hit[0].length });
      q += hit[0].length;
      continue;
    }
    if (q >= deadEnd) {
      RE_DOMAIN_RUN.lastIndex = q;
      const run = RE_DOMAIN_RUN.exec(scan);
      deadEnd = q + (run === null ? 1 : run[0].length);
    }
    q++;
  }
  return out;
}
