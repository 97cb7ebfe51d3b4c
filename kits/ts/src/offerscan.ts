// The offer scan of the reply guard ("$20 off", "10% off"), in its own
// module so the tests can compare it with the plain regex scan without
// making it kit API.

import type { Span } from "./span.js";

// The regex is the Go guard's (same rules as the others in replyguard.ts:
// no flags beyond g, no \b, \s, \d, \w, look-around or anchors).
export const RE_OFFER = /(?:\$ ?[0-9]+(?:[.,][0-9]+)*|[0-9]+(?:\.[0-9]+)? ?(?:%|percent)) ?off/g;

// The sticky twin of RE_OFFER, which matches only at lastIndex, the
// characters a match can start with, and digit runs.
const RE_OFFER_AT = new RegExp(RE_OFFER.source, "y");
const RE_OFFER_START = /[$0-9]/g;
const RE_DIGIT_RUN = /[0-9]+/y;

/**
 * The matches of RE_OFFER in scan (what exec in a loop finds), in linear
 * time. A backtracking engine tries the percentage branch at every digit of
 * a long digit run ("1111…"), reading to the end of the run and back each
 * time: quadratic, where Go's RE2 is linear. The matches are the same
 * because the same regex decides at every position tried; only positions
 * that cannot start a match are skipped: characters other than "$" and
 * digits, and, once no match starts at a digit p, the rest of p's digit
 * run. At a digit only the second branch can match, and its [0-9]+ may end
 * anywhere in the run; from p it can end wherever it can from any later
 * start p' in the run, and what follows that end is the same text, so a
 * match at p' would mean a match at p (the regex at p tries every end).
 * An attempt at "$" reads the number after it (which holds no "$"), one at
 * a digit its run and at most the digits after a full stop that ends it,
 * so no text is read more than a few times.
 */
export function findOffers(scan: string): Span[] {
  const out: Span[] = [];
  let q = 0;
  for (;;) {
    RE_OFFER_START.lastIndex = q;
    const m = RE_OFFER_START.exec(scan);
    if (m === null) break;
    const p = m.index;
    RE_OFFER_AT.lastIndex = p;
    const hit = RE_OFFER_AT.exec(scan);
    if (hit !== null) {
      out.push({ start: p, end: p + hit[0].length });
      q = p + hit[0].length;
    } else if (m[0] === "$") {
      q = p + 1;
    } else {
      RE_DIGIT_RUN.lastIndex = p;
      q = p + (RE_DIGIT_RUN.exec(scan) as RegExpExecArray)[0].length;
    }
  }
  return out;
}
