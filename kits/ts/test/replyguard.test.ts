import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import {
  MAX_REPLY_LENGTH,
  checkReply,
  guardReply,
  isHealthcare,
  isHealthcareBusiness,
  replyguardKitFunctions,
  safeReply,
} from "../src/replyguard.js";

// Compiled tests live in kits/ts/dist/test/.
const FIXTURES = new URL("../../../../testdata/sitecheck/", import.meta.url);

interface FixtureCase {
  name: string;
  input: unknown;
  want: unknown;
}

function loadFixtures(file: string): FixtureCase[] {
  return JSON.parse(readFileSync(new URL(file, FIXTURES), "utf8")) as FixtureCase[];
}

async function runFixtures(t: test.TestContext, file: string, fn: string, min: number): Promise<void> {
  const cases = loadFixtures(file);
  assert.ok(cases.length >= min, `${file} has ${cases.length} cases, want at least ${min}`);
  const seen = new Set<string>();
  for (const c of cases) {
    assert.ok(c.name !== "" && !seen.has(c.name), `fixture case name ${JSON.stringify(c.name)} is empty or repeated`);
    seen.add(c.name);
    await t.test(c.name, () => {
      const got: unknown = replyguardKitFunctions[fn](c.input);
      // Compare what JSON would carry, as the Go test does.
      assert.deepEqual(JSON.parse(JSON.stringify(got)), c.want, `fixture case ${c.name}`);
      assert.deepEqual(got, c.want, `fixture case ${c.name} (no undefined fields)`);
    });
  }
}

test("shared fixture check_reply.json", async (t) => {
  await runFixtures(t, "check_reply.json", "checkReply", 80);
});

test("shared fixture is_healthcare_business.json", async (t) => {
  await runFixtures(t, "is_healthcare_business.json", "isHealthcareBusiness", 30);
});

test("kit functions are keyed as in Go", () => {
  assert.deepEqual(Object.keys(replyguardKitFunctions).sort(), ["checkReply", "isHealthcareBusiness"]);
  assert.equal(replyguardKitFunctions.checkReply, checkReply);
  assert.equal(replyguardKitFunctions.isHealthcareBusiness, isHealthcareBusiness);
});

test("result keys come in the Go JSON order", () => {
  const r = checkReply({ review: "x", rating: 1, business_name: "Shop", reply: "Call XXX now." });
  assert.deepEqual(Object.keys(r), ["ok", "healthcare", "problems", "blocked"]);
  assert.deepEqual(Object.keys(r.problems[0]), ["code", "severity", "message", "phrase", "start", "end"]);
});

test("offsets are code points", () => {
  const reply = "😀😀 “Thanks” — call 555-123-4567 é";
  const r = guardReply({ review: "ok", rating: 3, business_name: "Shop", reply });
  assert.equal(r.problems.length, 1, JSON.stringify(r.problems));
  const p = r.problems[0];
  assert.deepEqual([p.start, p.end, p.phrase], [19, 31, "555-123-4567"]);
  assert.equal(Array.from(reply).slice(p.start, p.end).join(""), p.phrase);
});

test("normalisation keeps the length: full-width, curly quotes, dashes", () => {
  // "＄５ off" is "$5 off" after normalisation; the span is in code points.
  const r = guardReply({ review: "x", rating: 2, business_name: "Shop", reply: "😀 Enjoy ＄５ off." });
  assert.deepEqual(
    r.problems.map((p) => [p.code, p.start, p.end, p.phrase]),
    [["offer", 8, 14, "＄５ off"]],
  );
});

test("curly quotes match phrases", () => {
  for (const reply of ["That's not true.", "That\u2019s not true.", "That\u02bcs not true.", "THAT'S NOT TRUE."]) {
    const r = guardReply({ review: "bad", rating: 1, business_name: "Shop", reply });
    assert.equal(r.problems.length, 1, reply);
    assert.equal(r.problems[0].code, "arguing");
    assert.equal(r.problems[0].end, 15);
  }
});

test("problems sorted and blocked deduplicated", () => {
  const r = guardReply({ review: "x", rating: 1, business_name: "Shop", reply: "Call XXX or XXX, free, free." });
  assert.deepEqual(r.blocked, ["XXX", "free"]);
  assert.equal(r.ok, false);
  for (let i = 1; i < r.problems.length; i++) assert.ok(r.problems[i - 1].start <= r.problems[i].start);
});

test("warnings keep ok", () => {
  const r = guardReply({ review: "cold", rating: 2, business_name: "Shop", reply: "You are wrong, we have been open 30 years." });
  assert.equal(r.ok, true);
  assert.equal(r.problems.length, 2);
  assert.deepEqual(r.blocked, []);
});

test("lower-casing is ASCII only, as in Go", () => {
  // "İ" (U+0130) is not lowered: the Turkish capital does not make "ipsum".
  const r = guardReply({ review: "x", rating: 3, business_name: "Shop", reply: "Lorem \u0130psum and lorem ipsum." });
  assert.deepEqual(
    r.problems.map((p) => p.phrase),
    ["lorem ipsum"],
  );
  assert.equal(isHealthcare("DENTAL"), true);
  assert.equal(isHealthcare("D\u0130NTAL"), false);
});

test("too long counts code points", () => {
  const reply = "Thanks! " + "😀".repeat(MAX_REPLY_LENGTH - 8);
  assert.equal(guardReply({ review: "x", rating: 5, business_name: "Shop", reply }).problems.length, 0);
  const r = guardReply({ review: "x", rating: 5, business_name: "Shop", reply: reply + "😀" });
  assert.deepEqual(
    r.problems.map((p) => p.code),
    ["too_long"],
  );
});

test("lone surrogates read as U+FFFD, as in a JSON-decoded Go string", () => {
  const r = guardReply({ review: "x", rating: 5, business_name: "Shop", reply: "\ud800 Call XXX" });
  assert.deepEqual(r.blocked, ["XXX"]);
  assert.equal(r.problems[0].start, 7);
});

test("isHealthcare", () => {
  assert.equal(isHealthcare("Bright Smile Dental", ""), true);
  assert.equal(isHealthcare("Joe's Pizza", "MedicalClinic"), true);
  assert.equal(isHealthcare("Jane Roe, M.D.", ""), true);
  assert.equal(isHealthcare("Happy Paws Veterinary Clinic", ""), false);
  assert.equal(isHealthcare("Tony's Pizza", "Restaurant"), false);
  assert.equal(isHealthcare("", ""), false);
});

// The fallback reply passes for every business of the fixtures, with each
// fixture's review, except for the English-only refusal when the review
// itself is not English.
test("safeReply passes guardReply", () => {
  for (const c of loadFixtures("check_reply.json")) {
    const inp = c.input as { review: string; rating: number; business_name: string; business_type?: string | null };
    const bt = inp.business_type ?? "";
    for (const hc of [isHealthcare(inp.business_name, bt), true, false]) {
      const reply = safeReply(inp.business_name, hc);
      const r = guardReply({ review: inp.review, rating: inp.rating, business_name: inp.business_name, business_type: bt, reply });
      const probs = r.problems;
      if (
        probs.length === 1 &&
        probs[0].code === "non_english" &&
        probs[0].message === "the review is not in English; the reply guard checks English only"
      ) {
        continue;
      }
      assert.deepEqual(probs, [], `${c.name} (healthcare ${hc})`);
    }
  }
  assert.notEqual(safeReply("X", true), safeReply("X", false));
});

// The error table of the Go TestKitErrors, as decoded JSON, with the full
// messages the Go adapters give. Inputs the Go test gives as invalid JSON
// text or with data after the object cannot reach a function that takes a
// decoded value.
test("kit errors carry the Go messages", () => {
  const CR = "checkReply";
  const HC = "isHealthcareBusiness";
  const crFields = "review, rating, business_name, business_type, reply";
  const cases: [string, unknown, string][] = [
    [CR, { review: "a", rating: 5, business_name: "B", reply: "r", extra: 1 }, `checkReply: unknown field "extra"; the allowed fields are ${crFields}`],
    [CR, { rating: 5, business_name: "B", reply: "r" }, `checkReply: "review" is required: the review text as a string ("" for a rating-only review)`],
    [CR, { review: null, rating: 5, business_name: "B", reply: "r" }, `checkReply: "review" is required: the review text as a string ("" for a rating-only review)`],
    [CR, { review: "a", business_name: "B", reply: "r" }, `checkReply: "rating" is required: the review's star rating, a whole number from 1 to 5`],
    [CR, { review: "a", rating: null, business_name: "B", reply: "r" }, `checkReply: "rating" is required: the review's star rating, a whole number from 1 to 5`],
    [CR, { review: "a", rating: 6, business_name: "B", reply: "r" }, `checkReply: "rating" must be a whole number from 1 to 5, not 6`],
    [CR, { review: "a", rating: 0, business_name: "B", reply: "r" }, `checkReply: "rating" must be a whole number from 1 to 5, not 0`],
    [CR, { review: "a", rating: -0, business_name: "B", reply: "r" }, `checkReply: "rating" must be a whole number from 1 to 5, not -0`],
    [CR, { review: "a", rating: 4.5, business_name: "B", reply: "r" }, `checkReply: "rating" must be a whole number from 1 to 5, not 4.5`],
    [CR, { review: "a", rating: "5", business_name: "B", reply: "r" }, `checkReply: "rating" must be a whole number from 1 to 5, not "5"`],
    [CR, { review: "a", rating: true, business_name: "B", reply: "r" }, `checkReply: "rating" must be a whole number from 1 to 5, not true`],
    [CR, { review: "a", rating: { a: 1 }, business_name: "B", reply: "r" }, `checkReply: "rating" must be a whole number from 1 to 5, not {"a":1}`],
    [CR, { review: "a", rating: 5, business_name: " ", reply: "r" }, `checkReply: "business_name" is required: the business's name as a non-empty string`],
    [CR, { review: "a", rating: 5, business_name: "\u3000\u00a0\u0085\t", reply: "r" }, `checkReply: "business_name" is required: the business's name as a non-empty string`],
    [CR, { review: "a", rating: 5, business_name: null, reply: "r" }, `checkReply: "business_name" is required: the business's name as a non-empty string`],
    [CR, { review: "a", rating: 5, business_name: "B" }, `checkReply: "reply" is required: the reply text as a string`],
    [CR, { review: "a", rating: 5, business_name: "B", reply: null }, `checkReply: "reply" is required: the reply text as a string`],
    [CR, { review: 1, rating: 5, business_name: "B", reply: "r" }, `checkReply: "review" must be a string, not a JSON number`],
    [CR, { REVIEW: true }, `checkReply: "review" must be a string, not a JSON bool`],
    [CR, { review: [1] }, `checkReply: "review" must be a string, not a JSON array`],
    [CR, { review: "a", business_name: {} }, `checkReply: "business_name" must be a string, not a JSON object`],
    [CR, { review: "a", rating: 5, business_name: "B", reply: "r", business_type: false }, `checkReply: "business_type" must be a string, not a JSON bool`],
    [CR, { review: 1, extra: 1 }, `checkReply: "review" must be a string, not a JSON number`],
    [CR, { extra: 1, review: 1 }, `checkReply: unknown field "extra"; the allowed fields are ${crFields}`],
    [CR, { rating: 9, review: 1 }, `checkReply: "review" must be a string, not a JSON number`],
    [CR, { review: "a", "\u00e9x\n\u0001": 1 }, `checkReply: unknown field "\u00e9x\\n\\x01"; the allowed fields are ${crFields}`],
    [CR, [1], `checkReply: the input must be a JSON object with the fields ${crFields}`],
    [CR, null, `checkReply: the input must be a JSON object with the fields ${crFields}`],
    [CR, "x", `checkReply: the input must be a JSON object with the fields ${crFields}`],
    [CR, undefined, `checkReply: the input must be a JSON object with the fields ${crFields}`],
    [HC, { business_type: "Dentist" }, `isHealthcareBusiness: "business_name" is required: the business's name as a string`],
    [HC, { business_name: null }, `isHealthcareBusiness: "business_name" is required: the business's name as a string`],
    [HC, { business_name: "A", type: "x" }, `isHealthcareBusiness: unknown field "type"; the allowed fields are business_name, business_type`],
    [HC, { business_name: "A", business_type: 7 }, `isHealthcareBusiness: "business_type" must be a string, not a JSON number`],
    [HC, { business_name: 7 }, `isHealthcareBusiness: "business_name" must be a string, not a JSON number`],
    [HC, [], `isHealthcareBusiness: the input must be a JSON object with the fields business_name, business_type`],
  ];
  for (const [fn, input, want] of cases) {
    assert.throws(
      () => replyguardKitFunctions[fn](input),
      (e: unknown) => e instanceof Error && e.message === want,
      `${fn} ${JSON.stringify(input)}: want ${want}`,
    );
  }
});

test("kit inputs the Go adapters accept", () => {
  const ok: unknown[] = [
    { review: "", rating: 5.0, business_name: "B", business_type: null, reply: "Thanks!" },
    { review: "a", rating: 1, business_name: "B", business_type: "Dentist", reply: "" },
    // Keys match case-insensitively, with Unicode simple folding (U+017F is "s").
    { Review: "a", RATING: 3, "bu\u017Finess_name": "B", Reply: "r" },
    // U+FEFF and U+200B are not white space to Go's strings.TrimSpace; U+001C is not either.
    { review: "a", rating: 3, business_name: "\ufeff", reply: "r" },
    { review: "a", rating: 3, business_name: "\u200b", reply: "r" },
    { review: "a", rating: 3, business_name: "\u001c", reply: "r" },
  ];
  for (const input of ok) {
    assert.doesNotThrow(() => checkReply(input), JSON.stringify(input));
  }
  assert.equal(isHealthcareBusiness({ business_name: "", business_type: null }), false);
  assert.equal(isHealthcareBusiness({ business_name: "Smile", business_type: "Dentist" }), true);
});
