import { test } from "node:test";
import assert from "node:assert/strict";

import { RE_URL, findURLs, type URLSpan } from "../src/urlscan.js";

function execAll(scan: string): URLSpan[] {
  const out: URLSpan[] = [];
  const re = new RegExp(RE_URL.source, "g");
  for (let m = re.exec(scan); m !== null; m = re.exec(scan)) out.push({ start: m.index, end: m.index + m[0].length });
  return out;
}

// A small seeded generator (mulberry32), so a failure repeats.
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test("findURLs finds what the regex scan finds", () => {
  const r = rng(7);
  const alphabet = [..."a.c.o.m/w.h:t-p s1", "www.", "http://", "https://", ".com", ".co", "..", ".io/x"];
  for (let i = 0; i < 20000; i++) {
    let s = "";
    const n = Math.floor(r() * 31);
    for (let j = 0; j < n; j++) s += alphabet[Math.floor(r() * alphabet.length)];
    assert.deepEqual(findURLs(s), execAll(s), JSON.stringify(s));
  }
});

test("findURLs tries a long dotted run once", () => {
  // The regex scan retries the bare-domain branch at each of the 10,000+
  // positions, backtracking over the rest of the run each time; findURLs
  // must give the same answer while running the sticky regex a few times.
  const cases: [string, URLSpan[]][] = [
    ["a.".repeat(10000), []],
    ["ab-".repeat(6000) + ".", []],
    ["1.".repeat(10000), []],
    ["x.".repeat(5000) + "www.a " + "y.".repeat(5000), [{ start: 10000, end: 10005 }]],
    ["x.".repeat(5000) + "com", [{ start: 0, end: 10003 }]],
  ];
  const proto = RegExp.prototype;
  const realExec = proto.exec;
  for (const [s, want] of cases) {
    let urlCalls = 0;
    proto.exec = function (this: RegExp, str: string) {
      if (this.source === RE_URL.source) urlCalls++;
      return realExec.call(this, str);
    };
    let got: URLSpan[];
    try {
      got = findURLs(s);
    } finally {
      proto.exec = realExec;
    }
    assert.deepEqual(got, want, s.slice(0, 20));
    assert.ok(urlCalls <= 4, `${s.slice(0, 20)}…: the URL regex ran ${urlCalls} times`);
  }
});
