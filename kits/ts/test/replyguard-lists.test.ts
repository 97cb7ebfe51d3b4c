import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import {
  ARGUING_PHRASES,
  COMMON_WORDS,
  ENGLISH_WORDS,
  FOREIGN_WORDS,
  HEALTH_CREDENTIALS,
  HEALTH_KEYWORDS,
  NUMBER_WORDS,
  OFFER_PHRASES,
  PHI_PHRASES,
  PLACEHOLDER_PHRASES,
  REPLYGUARD_LISTS,
  STAR_WORDS,
  TITLES,
  VETERINARY_WORDS,
  type PhraseList,
} from "../src/replyguard-lists.js";

// Compiled tests live in kits/ts/dist/test/. The Go package's lists.json is
// the one source; the kit reads its copy, src/replyguard-lists.json.
const GO_LISTS = new URL("../../../../pipelines/sitecheck/replyguard/lists.json", import.meta.url);

test("the kit reads the word lists the Go package embeds", () => {
  const goLists: unknown = JSON.parse(readFileSync(GO_LISTS, "utf8"));
  assert.deepEqual(
    REPLYGUARD_LISTS,
    goLists,
    "src/replyguard-lists.json differs from pipelines/sitecheck/replyguard/lists.json: run go generate ./pipelines/sitecheck/replyguard",
  );
});

test("the look-up tables hold every listed phrase and word", () => {
  const L = REPLYGUARD_LISTS;
  const entries = (l: PhraseList): string[] =>
    [...l.values()].flat().map((e) => `${e.cat}|${e.words.join(" ")}`).sort();
  const listed = (groups: { category: string; phrases: string[] }[]): string[] =>
    groups.flatMap((g) => g.phrases.map((p) => `${g.category}|${p}`)).sort();
  const phraseLists: [string, PhraseList, { category: string; phrases: string[] }[]][] = [
    ["offer_phrases", OFFER_PHRASES, L.offer_phrases],
    ["arguing_phrases", ARGUING_PHRASES, L.arguing_phrases],
    ["placeholder_phrases", PLACEHOLDER_PHRASES, L.placeholder_phrases],
    ["phi_phrases", PHI_PHRASES, L.phi_phrases],
    ["health_keywords", HEALTH_KEYWORDS, L.health_keywords],
    ["veterinary_words", VETERINARY_WORDS, L.veterinary_words],
  ];
  for (const [name, table, groups] of phraseLists) {
    assert.ok(groups.length > 0, name);
    assert.deepEqual(entries(table), listed(groups), name);
  }
  const wordLists: [string, ReadonlySet<string>, string[]][] = [
    ["health_credentials", HEALTH_CREDENTIALS, L.health_credentials],
    ["titles", TITLES, L.titles],
    ["common_words", COMMON_WORDS, L.common_words],
    ["star_words", STAR_WORDS, L.star_words],
    ["english_words", ENGLISH_WORDS, L.english_words],
    ["foreign_words", FOREIGN_WORDS, L.foreign_words],
  ];
  for (const [name, set, words] of wordLists) {
    assert.ok(words.length > 0, name);
    assert.deepEqual([...set].sort(), [...new Set(words)].sort(), name);
  }
  assert.deepEqual(Object.fromEntries(NUMBER_WORDS), L.number_words);
});
