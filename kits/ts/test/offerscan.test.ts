import { test } from "node:test";
import assert from "node:assert/strict";

import { RE_OFFER, findOffers, type OfferSpan } from "../src/offerscan.js";

function execAll(scan: string): OfferSpan[] {
  const out: OfferSpan[] = [];
  const re = new RegExp(RE_OFFER.source, "g");
  for (let m = re.exec(scan); m !== null; m = re.exec(scan)) out.push({ start: m.index, end: m.index + m[0].length });
  return out;
}

// A small seeded generator (mulberry32, as in urlscan.test.ts), so a failure repeats.
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

test("findOffers finds what the regex scan finds", () => {
  const r = rng(13);
  const alphabet = [..."129.,$ %xo", "off", " off", "percent", "per", "$ ", "1.5", "% off"];
  for (let i = 0; i < 20000; i++) {
    let s = "";
    const n = Math.floor(r() * 31);
    for (let j = 0; j < n; j++) s += alphabet[Math.floor(r() * alphabet.length)];
    assert.deepEqual(findOffers(s), execAll(s), JSON.stringify(s));
  }
});

test("findOffers tries a long digit run once", () => {
  // The regex scan tries the percentage branch at each of the 10,000+
  // digits and reads to the end of the run and back each time; findOffers
  // must give the same answer while running the sticky regex a few times.
  const cases: [string, OfferSpan[]][] = [
    ["1".repeat(20000), []],
    ["1".repeat(20000) + "% of", []],
    ["1".repeat(10000) + "." + "2".repeat(10000) + " percent", []],
    ["$ " + "1".repeat(20000), []],
    ["9".repeat(20000) + "% off", [{ start: 0, end: 20005 }]],
    ["$" + "5".repeat(20000) + " off", [{ start: 0, end: 20005 }]],
  ];
  const proto = RegExp.prototype;
  const realExec = proto.exec;
  for (const [s, want] of cases) {
    let offerCalls = 0;
    proto.exec = function (this: RegExp, str: string) {
      if (this.source === RE_OFFER.source) offerCalls++;
      return realExec.call(this, str);
    };
    let got: OfferSpan[];
    try {
      got = findOffers(s);
    } finally {
      proto.exec = realExec;
    }
    assert.deepEqual(got, want, s.slice(0, 20));
    assert.ok(offerCalls <= 2, `${s.slice(0, 20)}…: the offer regex ran ${offerCalls} times`);
  }
});
