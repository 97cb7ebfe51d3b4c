import { test } from "node:test";

import { RE_EMAIL, findEmails } from "../src/emailscan.js";
import type { Span } from "../src/span.js";
import { assertFewRuns, assertSameAsRegex } from "./scanhelp.js";

test("findEmails finds what the regex scan finds", () => {
  assertSameAsRegex(findEmails, RE_EMAIL, 11, [..."ab1.-_+%@@ !", "@a.co", ".com", "x@y", "..", "a.b", "@b.c1d"]);
});

test("findEmails tries a long run once", () => {
  // The regex scan tries the regex at each of the 10,000+ positions and
  // reads to the end of the run (and past its "@") each time; findEmails
  // must give the same answer while running the sticky regex a few times.
  const cases: [string, Span[]][] = [
    ["a".repeat(20000), []],
    ["a".repeat(20000) + "@", []],
    ["1a".repeat(10000) + "@", []],
    ["a@" + "a.".repeat(10000) + "!", []],
    ["x".repeat(10000) + "@a.com " + "y".repeat(10000) + "@", [{ start: 0, end: 10006 }]],
    ["a@b.cc" + "1.".repeat(10000) + "@d.ee", [{ start: 0, end: 6 }, { start: 6, end: 20011 }]],
  ];
  assertFewRuns(findEmails, RE_EMAIL, 2, cases);
});
