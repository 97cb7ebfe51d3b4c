import { test } from "node:test";

import { RE_OFFER, findOffers } from "../src/offerscan.js";
import type { Span } from "../src/span.js";
import { assertFewRuns, assertSameAsRegex } from "./scanhelp.js";

test("findOffers finds what the regex scan finds", () => {
  assertSameAsRegex(findOffers, RE_OFFER, 13, [..."129.,$ %xo", "off", " off", "percent", "per", "$ ", "1.5", "% off"]);
});

test("findOffers tries a long digit run once", () => {
  // The regex scan tries the percentage branch at each of the 10,000+
  // digits and reads to the end of the run and back each time; findOffers
  // must give the same answer while running the sticky regex a few times.
  const cases: [string, Span[]][] = [
    ["1".repeat(20000), []],
    ["1".repeat(20000) + "% of", []],
    ["1".repeat(10000) + "." + "2".repeat(10000) + " percent", []],
    ["$ " + "1".repeat(20000), []],
    ["9".repeat(20000) + "% off", [{ start: 0, end: 20005 }]],
    ["$" + "5".repeat(20000) + " off", [{ start: 0, end: 20005 }]],
  ];
  assertFewRuns(findOffers, RE_OFFER, 2, cases);
});
