import { test } from "node:test";

import { RE_URL, findURLs } from "../src/urlscan.js";
import type { Span } from "../src/span.js";
import { assertFewRuns, assertSameAsRegex } from "./scanhelp.js";

test("findURLs finds what the regex scan finds", () => {
  assertSameAsRegex(findURLs, RE_URL, 7, [..."a.c.o.m/w.h:t-p s1", "www.", "http://", "https://", ".com", ".co", "..", ".io/x"]);
});

test("findURLs tries a long dotted run once", () => {
  // The regex scan retries the bare-domain branch at each of the 10,000+
  // positions, backtracking over the rest of the run each time; findURLs
  // must give the same answer while running the sticky regex a few times.
  const cases: [string, Span[]][] = [
    ["a.".repeat(10000), []],
    ["ab-".repeat(6000) + ".", []],
    ["1.".repeat(10000), []],
    ["x.".repeat(5000) + "www.a " + "y.".repeat(5000), [{ start: 10000, end: 10005 }]],
    ["x.".repeat(5000) + "com", [{ start: 0, end: 10003 }]],
  ];
  assertFewRuns(findURLs, RE_URL, 4, cases);
});
