// Shared by the linear-scan tests (urlscan, emailscan, offerscan): the
// plain regex scan they are compared with, and seeded random strings.
import assert from "node:assert/strict";

import type { Span } from "../src/span.js";

/** What exec in a loop finds: the plain (backtracking) regex scan. */
export function execAll(re: RegExp, scan: string): Span[] {
  const out: Span[] = [];
  const g = new RegExp(re.source, "g");
  for (let m = g.exec(scan); m !== null; m = g.exec(scan)) out.push({ start: m.index, end: m.index + m[0].length });
  return out;
}

/** A small seeded generator (mulberry32), so a failure repeats. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Checks find against the plain scan of re on 20,000 seeded random strings
 * of up to 30 pieces drawn from alphabet.
 */
export function assertSameAsRegex(find: (s: string) => Span[], re: RegExp, seed: number, alphabet: string[]): void {
  const r = rng(seed);
  for (let i = 0; i < 20000; i++) {
    let s = "";
    const n = Math.floor(r() * 31);
    for (let j = 0; j < n; j++) s += alphabet[Math.floor(r() * alphabet.length)];
    assert.deepEqual(find(s), execAll(re, s), JSON.stringify(s));
  }
}

/**
 * Runs find on each case and checks its spans and that the regex (any
 * RegExp with re's source) ran at most maxRuns times: the linear scans must
 * try a hostile run once, where the plain scan retries it at every position.
 */
export function assertFewRuns(find: (s: string) => Span[], re: RegExp, maxRuns: number, cases: [string, Span[]][]): void {
  const proto = RegExp.prototype;
  const realExec = proto.exec;
  for (const [s, want] of cases) {
    let runs = 0;
    proto.exec = function (this: RegExp, str: string) {
      if (this.source === re.source) runs++;
      return realExec.call(this, str);
    };
    let got: Span[];
    try {
      got = find(s);
    } finally {
      proto.exec = realExec;
    }
    assert.deepEqual(got, want, s.slice(0, 20));
    assert.ok(runs <= maxRuns, `${s.slice(0, 20)}…: the regex ran ${runs} times (at most ${maxRuns})`);
  }
}
