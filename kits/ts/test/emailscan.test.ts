import { test } from "node:test";
import assert from "node:assert/strict";

import { RE_EMAIL, findEmails, type EmailSpan } from "../src/emailscan.js";

function execAll(scan: string): EmailSpan[] {
  const out: EmailSpan[] = [];
  const re = new RegExp(RE_EMAIL.source, "g");
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

test("findEmails finds what the regex scan finds", () => {
  const r = rng(11);
  const alphabet = [..."ab1.-_+%@@ !", "@a.co", ".com", "x@y", "..", "a.b", "@b.c1d"];
  for (let i = 0; i < 20000; i++) {
    let s = "";
    const n = Math.floor(r() * 31);
    for (let j = 0; j < n; j++) s += alphabet[Math.floor(r() * alphabet.length)];
    assert.deepEqual(findEmails(s), execAll(s), JSON.stringify(s));
  }
});

test("findEmails tries a long run once", () => {
  // The regex scan tries the regex at each of the 10,000+ positions and
  // reads to the end of the run (and past its "@") each time; findEmails
  // must give the same answer while running the sticky regex a few times.
  const cases: [string, EmailSpan[]][] = [
    ["a".repeat(20000), []],
    ["a".repeat(20000) + "@", []],
    ["1a".repeat(10000) + "@", []],
    ["a@" + "a.".repeat(10000) + "!", []],
    ["x".repeat(10000) + "@a.com " + "y".repeat(10000) + "@", [{ start: 0, end: 10006 }]],
    ["a@b.cc" + "1.".repeat(10000) + "@d.ee", [{ start: 0, end: 6 }, { start: 6, end: 20011 }]],
  ];
  const proto = RegExp.prototype;
  const realExec = proto.exec;
  for (const [s, want] of cases) {
    let emailCalls = 0;
    proto.exec = function (this: RegExp, str: string) {
      if (this.source === RE_EMAIL.source) emailCalls++;
      return realExec.call(this, str);
    };
    let got: EmailSpan[];
    try {
      got = findEmails(s);
    } finally {
      proto.exec = realExec;
    }
    assert.deepEqual(got, want, s.slice(0, 20));
    assert.ok(emailCalls <= 2, `${s.slice(0, 20)}…: the email regex ran ${emailCalls} times`);
  }
});
