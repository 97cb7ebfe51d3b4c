// The reply guard's word lists (lists.go and healthcare.go in Go), read from
// replyguard-lists.json: a byte-for-byte copy of
// pipelines/sitecheck/replyguard/lists.json, the one source that the Go
// package embeds and both kits read (the Go test TestKitListsAreCopies
// fails while the copy differs; go generate ./pipelines/sitecheck/replyguard
// writes it). tsc writes the imported JSON file into dist/src beside this
// module (re-indented, the same data), so the published package carries it.
// Every phrase is written as its tokens joined by single spaces, in lower
// case.
import lists from "./replyguard-lists.json" with { type: "json" };

/** Phrases of one category; note is for readers only. */
interface PhraseGroup {
  category: string;
  note?: string;
  phrases: string[];
}

/** The shape of replyguard-lists.json (Go's listFile). */
export interface ReplyGuardLists {
  about: string[];
  offer_phrases: PhraseGroup[];
  arguing_phrases: PhraseGroup[];
  placeholder_phrases: PhraseGroup[];
  phi_phrases: PhraseGroup[];
  health_keywords: PhraseGroup[];
  health_credentials: string[];
  veterinary_words: PhraseGroup[];
  titles: string[];
  common_words: string[];
  star_words: string[];
  number_words: Record<string, string>;
  english_words: string[];
  foreign_words: string[];
}

/** The lists as the file holds them; the tests compare them with Go's file. */
export const REPLYGUARD_LISTS: ReplyGuardLists = lists;

/** One phrase and its category ("" marks an exception: it matches, uses up its tokens and reports nothing). */
export interface PhraseEntry {
  words: string[];
  cat: string;
}

/**
 * The entries of a phrase list grouped by their first word, in list order
 * within a group: only those can match at a token, which spares trying the
 * whole list at every token as the Go code does.
 */
export type PhraseList = ReadonlyMap<string, readonly PhraseEntry[]>;

/** Builds the entries of a list's groups. */
function phraseList(groups: readonly PhraseGroup[]): PhraseList {
  const out = new Map<string, PhraseEntry[]>();
  for (const g of groups) {
    for (const p of g.phrases) {
      const words = p.split(" ").filter((w) => w !== "");
      const group = out.get(words[0]);
      if (group === undefined) out.set(words[0], [{ words, cat: g.category }]);
      else group.push({ words, cat: g.category });
    }
  }
  return out;
}

// Offer phrases: discounts, refunds, free things and compensation promised
// in public.
export const OFFER_PHRASES = phraseList(lists.offer_phrases);

// Arguing phrases: blaming or contradicting the reviewer.
export const ARGUING_PHRASES = phraseList(lists.arguing_phrases);

// Placeholder phrases (the bracket and upper-case patterns are regexes).
export const PLACEHOLDER_PHRASES = phraseList(lists.placeholder_phrases);

// PHI term phrases, checked for health and care businesses only.
export const PHI_PHRASES = phraseList(lists.phi_phrases);

// titles start a name: "Dr. Patel", "Nurse Amy".
export const TITLES: ReadonlySet<string> = new Set(lists.titles);

// commonWords are capitalised words that are never taken for a name.
export const COMMON_WORDS: ReadonlySet<string> = new Set(lists.common_words);

// starWords follow a rating: "5 stars", "five-star".
export const STAR_WORDS: ReadonlySet<string> = new Set(lists.star_words);

// numberWords are the number words read as numbers. "one" is not among
// them: it is mostly a pronoun ("no one", "the one").
export const NUMBER_WORDS: ReadonlyMap<string, string> = new Map(Object.entries(lists.number_words));

// englishWords and foreignWords drive the English test.
export const ENGLISH_WORDS: ReadonlySet<string> = new Set(lists.english_words);
export const FOREIGN_WORDS: ReadonlySet<string> = new Set(lists.foreign_words);

// healthKeywords mark a health or care business in its name or its type.
export const HEALTH_KEYWORDS = phraseList(lists.health_keywords);

// healthCredentials are matched case-sensitively as whole tokens, after
// full stops are removed ("M.D." reads "MD").
export const HEALTH_CREDENTIALS: ReadonlySet<string> = new Set(lists.health_credentials);

// veterinaryWords veto the health test: animal care is not covered by HIPAA.
export const VETERINARY_WORDS = phraseList(lists.veterinary_words);
