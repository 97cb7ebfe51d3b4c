// The review-reply guard: a deterministic check of a drafted public reply
// to a customer review (empty, too long, not English, offers, contact
// details, numbers the review does not hold, placeholders, arguing, and for
// health and care businesses anything that confirms a patient).
//
// This is a port of the Go package pipelines/sitecheck/replyguard, line for
// line where the Go code says it is written to be ported (text.go). The
// shared fixtures testdata/sitecheck/check_reply.json and
// is_healthcare_business.json pin every decision. All offsets are code point
// offsets (not UTF-16 units); lower-casing is ASCII-only (A-Z), as in Go; the
// regexes run on ASCII scan strings, one character per code point, so
// JavaScript's backtracking and Go's RE2 find the same leftmost-first
// matches.
//
// Two look-ups are faster than Go's linear scans without changing any
// result: phrase lists are indexed by first word, and overlap tests on the
// (always disjoint) span lists are binary searches.
//
// The kit functions take a decoded JSON value, which cannot show three
// things Go's adapters see in the raw text: a key given twice (JSON.parse
// keeps the last), the order of integer-like keys (JavaScript lists them
// first, which matters only for which of two input errors is reported) and
// the spelling of a bad rating in its error message (JSON.stringify's form:
// 6.0 reads "6", 1e30 reads "1e+30").

/** The longest reply, in code points, that passes without a too_long warning. */
import { goQuote, wellFormed } from "./gostrings.js";
import { findEmails } from "./emailscan.js";
import { findOffers } from "./offerscan.js";
import { findURLs } from "./urlscan.js";
import type { Span } from "./span.js";
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
  STAR_WORDS,
  TITLES,
  VETERINARY_WORDS,
  type PhraseList,
} from "./replyguard-lists.js";
export const MAX_REPLY_LENGTH = 1000;

/** One reply to check (the Go Input). */
export interface ReplyGuardInput {
  review: string;
  /** The review's star rating; a number equal to it followed by "star(s)" is not reported. */
  rating: number;
  business_name: string;
  business_type?: string;
  reply: string;
}

/**
 * One finding. start and end are code point offsets into the reply (end
 * exclusive); phrase is the reply's text between them. Problems about the
 * whole text (empty, too_long, non_english) have 0, 0 and "".
 */
export interface ReplyProblem {
  code: string;
  severity: "block" | "warn";
  message: string;
  phrase: string;
  start: number;
  end: number;
}

/**
 * The guard's answer. ok is true when no problem has severity block; blocked
 * lists the phrases of block problems in order, once each.
 */
export interface ReplyGuardResult {
  ok: boolean;
  healthcare: boolean;
  problems: ReplyProblem[];
  blocked: string[];
}

// Problem codes.
const CODE_EMPTY = "empty";
const CODE_TOO_LONG = "too_long";
const CODE_NON_ENGLISH = "non_english";
const CODE_OFFER = "offer";
const CODE_CONTACT_DETAIL = "contact_detail";
const CODE_NUMBER_NOT_GIVEN = "number_not_given";
const CODE_PLACEHOLDER = "placeholder";
const CODE_ARGUING = "arguing";
const CODE_PHI_CONFIRMATION = "phi_confirmation";

// Severities. A reply with any block problem must not be posted.
const SEVERITY_BLOCK = "block";
const SEVERITY_WARN = "warn";

// Messages, verbatim from the Go code.
const MSG_EMPTY = "the reply is empty; write a reply before posting it";
const MSG_TOO_LONG = "the reply is longer than 1000 characters; shorten it";
const MSG_NON_ENGLISH_REVIEW = "the review is not in English; the reply guard checks English only";
const MSG_NON_ENGLISH_REPLY = "the reply is not in English; the reply guard checks English only";
const MSG_NON_ENGLISH_BOTH = "the review and the reply are not in English; the reply guard checks English only";
const MSG_OFFER = "offers a discount, refund, free service or other compensation in public; make any offer privately";
const MSG_NUMBER_NOT_GIVEN = "mentions a number the review does not contain";
const MSG_PLACEHOLDER = "contains a placeholder that must be filled in or removed";
const MSG_ARGUING = "argues with or blames the reviewer; acknowledge the feedback instead";
const CONTACT_KIND_EMAIL = "email";
const CONTACT_KIND_URL = "url";
const CONTACT_KIND_PHONE = "phone";
const CONTACT_KIND_ADDRESS = "address";
const PHONE_SEPARATOR_CHARS = " .-";
const NAME_JOIN_CHARS = " -'";
const TITLE_GAP_CHARS = ". ";
const SENTENCE_END_CHARS = ".!?\n";

const CONTACT_MESSAGES: Record<string, string> = {
  [CONTACT_KIND_EMAIL]: "gives an email address the review does not contain",
  [CONTACT_KIND_URL]: "gives a web address the review does not contain",
  [CONTACT_KIND_PHONE]: "gives a phone number the review does not contain",
  [CONTACT_KIND_ADDRESS]: "gives a street address the review does not contain",
};

// The regexes run on the ASCII scan strings. They use no flags, no \b, \s,
// \d or \w, no look-around and no anchors, so RE2 and JavaScript find the
// same leftmost-first matches. None of them matches the empty string.
// RE_EMAIL, RE_URL and RE_OFFER and their linear-time scans are in
// emailscan.ts, urlscan.ts and offerscan.ts.
const RE_PHONE = /(?:\+[0-9]+[ .-]?)?(?:\([0-9]+\)[ .-]?)?[0-9]+(?:[ .-][0-9]+)*/g;
const RE_ADDRESS =
  /[0-9]{1,6} (?:[A-Z][A-Za-z0-9.'-]* ){1,4}(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Drive|Dr|Lane|Ln|Way|Court|Ct|Place|Pl|Parkway|Pkwy|Highway|Hwy|Terrace|Circle|Square|Sq)[^A-Za-z0-9]/g;
const RE_NUMBER = /[0-9]+(?:[.,:/][0-9]+)*/g;
const RE_BRACKET = /\{\{[^{}\n]{0,60}\}\}|\{[^{}\n]{1,60}\}|\[[^\[\]\n]{1,60}\]|<[^<>\n]{1,60}>/g;
const RE_CAPS = /XXX+|TODO|TBD|FIXME|TKTK/g;

// ---------------------------------------------------------------------------
// Text model (text.go)


/** Maps one code point to one code point; the length of a text never changes. */
function normRune(r: number): number {
  if (r === 0x0d) return 0x0a;
  if (r === 0x0a) return 0x0a;
  if (r < 0x20 || r === 0x7f) return 0x20;
  if (r < 0x80) return r;
  if (r === 0x85 || r === 0x2028 || r === 0x2029) return 0x0a;
  if (r === 0xa0 || r === 0x1680 || (r >= 0x2000 && r <= 0x200a) || r === 0x202f || r === 0x205f || r === 0x3000) {
    return 0x20;
  }
  if (r === 0x200b || r === 0x200c || r === 0x200d || r === 0x2060 || r === 0xfeff) return 0x20;
  if (r === 0x2018 || r === 0x2019 || r === 0x201a || r === 0x201b || r === 0x2032 || r === 0x02bc) return 0x27;
  if (r === 0x201c || r === 0x201d || r === 0x201e || r === 0x201f || r === 0x2033 || r === 0xab || r === 0xbb) {
    return 0x22;
  }
  if ((r >= 0x2010 && r <= 0x2015) || r === 0x2212) return 0x2d;
  if (r === 0x2026) return 0x2e;
  if (r === 0xa3 || r === 0xa5 || r === 0x20ac) return 0x24;
  if (r >= 0xff01 && r <= 0xff5e) return r - 0xfee0;
  return r;
}

/** The non-ASCII code points counted as letters. */
const FOREIGN_LETTER_RANGES: readonly (readonly [number, number])[] = [
  [0x00c0, 0x00d6], [0x00d8, 0x00f6], [0x00f8, 0x024f],
  [0x0370, 0x03ff], [0x0400, 0x052f], [0x0530, 0x058f],
  [0x0590, 0x05ff], [0x0600, 0x06ff], [0x0900, 0x0dff],
  [0x0e00, 0x0e7f], [0x1e00, 0x1eff], [0x3040, 0x30ff],
  [0x3400, 0x4dbf], [0x4e00, 0x9fff], [0xac00, 0xd7af],
];

function isForeignLetter(r: number): boolean {
  for (const [lo, hi] of FOREIGN_LETTER_RANGES) {
    if (r >= lo && r <= hi) return true;
  }
  return false;
}

function isASCIILetter(r: number): boolean {
  return (r >= 0x61 && r <= 0x7a) || (r >= 0x41 && r <= 0x5a);
}
function isDigit(r: number): boolean {
  return r >= 0x30 && r <= 0x39;
}
function isLetter(r: number): boolean {
  return isASCIILetter(r) || isForeignLetter(r);
}
function isUpper(r: number): boolean {
  return r >= 0x41 && r <= 0x5a;
}
function isLower(r: number): boolean {
  return r >= 0x61 && r <= 0x7a;
}

/** Lowers A-Z only; every other code point is kept. */
function lowerASCII(r: number): number {
  return isUpper(r) ? r + 0x20 : r;
}

function lowerString(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

function fromCodePoints(rs: readonly number[], start = 0, end = rs.length): string {
  let s = "";
  for (let i = start; i < end; i++) s += String.fromCodePoint(rs[i]);
  return s;
}

function codePoints(s: string): number[] {
  const out: number[] = [];
  for (const ch of s) out.push(ch.codePointAt(0) ?? 0);
  return out;
}

/** A maximal run of letters (a word) or of ASCII digits (a number). Offsets are code points. */
interface Token {
  start: number;
  end: number;
  /** Normalised code points. */
  text: string;
  /** text with A-Z lowered. */
  lower: string;
  /** Letters, not digits. */
  word: boolean;
}

function tokenize(norm: readonly number[]): Token[] {
  const toks: Token[] = [];
  let i = 0;
  while (i < norm.length) {
    const r = norm[i];
    if (!isLetter(r) && !isDigit(r)) {
      i++;
      continue;
    }
    const word = isLetter(r);
    let j = i + 1;
    while (j < norm.length) {
      if (word && !isLetter(norm[j])) break;
      if (!word && !isDigit(norm[j])) break;
      j++;
    }
    const s = fromCodePoints(norm, i, j);
    toks.push({ start: i, end: j, text: s, lower: lowerString(s), word });
    i = j;
  }
  return toks;
}

/** One analysed input string. */
interface Text {
  /** The original code points, one string each. */
  orig: string[];
  norm: number[];
  /** One ASCII character per code point, case kept. */
  scanCase: string;
  /** scanCase with A-Z lowered. */
  scanLower: string;
  toks: Token[];
}

function analyse(s: string): Text {
  const orig = Array.from(wellFormed(s));
  const norm: number[] = new Array(orig.length);
  let sc = "";
  let sl = "";
  for (let i = 0; i < orig.length; i++) {
    const n = normRune(orig[i].codePointAt(0) ?? 0);
    norm[i] = n;
    let b: number;
    if (n < 0x80) b = n;
    else if (isForeignLetter(n)) b = 0x61;
    else b = 0x20;
    sc += String.fromCharCode(b);
    sl += String.fromCharCode(lowerASCII(b));
  }
  return { orig, norm, scanCase: sc, scanLower: sl, toks: tokenize(norm) };
}

/** The original code points in [start, end). */
function phraseOf(t: Text, start: number, end: number): string {
  return t.orig.slice(start, end).join("");
}

/** The normalised, A-Z lowered text of [start, end). */
function lowerSlice(t: Text, start: number, end: number): string {
  let s = "";
  for (let i = start; i < end; i++) s += String.fromCodePoint(lowerASCII(t.norm[i]));
  return s;
}

/** Whether the normalised text holds only spaces and newlines. */
function blank(t: Text): boolean {
  return t.norm.every((r) => r === 0x20 || r === 0x0a);
}


/**
 * A list of spans. Every list the checks test for overlaps holds pairwise
 * disjoint, non-empty spans (a span is added only when it overlaps none
 * already there), so they are also kept sorted by start, with increasing
 * ends, and an overlap test is a binary search where the Go code scans the
 * list. items keeps the order of adding.
 */
class Spans {
  readonly items: Span[] = [];
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  /** The number of sorted spans that start before x. */
  private countBefore(x: number): number {
    let lo = 0;
    let hi = this.starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.starts[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Whether s overlaps a span of the list (Go's overlapsAny). */
  overlaps(s: Span): boolean {
    const i = this.countBefore(s.end);
    return i > 0 && this.ends[i - 1] > s.start;
  }

  /** Adds s, which must be non-empty and overlap no span of the list. */
  add(s: Span): void {
    const i = this.countBefore(s.start);
    this.starts.splice(i, 0, s.start);
    this.ends.splice(i, 0, s.end);
    this.items.push(s);
  }

  /** Adds s unless it overlaps a span already accepted (Go's acceptSpan). */
  accept(s: Span): void {
    if (!this.overlaps(s)) this.add(s);
  }
}

/** The non-overlapping leftmost-first matches of re (global) in an ASCII scan string. */
function findAll(re: RegExp, scan: string): Span[] {
  const out: Span[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(scan); m !== null; m = re.exec(scan)) {
    out.push({ start: m.index, end: m.index + m[0].length });
    if (m[0].length === 0) re.lastIndex++; // never happens with these patterns
  }
  re.lastIndex = 0;
  return out;
}

function isAlnumCode(b: number): boolean {
  return (b >= 0x61 && b <= 0x7a) || (b >= 0x41 && b <= 0x5a) || (b >= 0x30 && b <= 0x39);
}

function alnumBefore(scan: string, s: Span): boolean {
  return s.start > 0 && isAlnumCode(scan.charCodeAt(s.start - 1));
}

function alnumAfter(scan: string, s: Span): boolean {
  return s.end < scan.length && isAlnumCode(scan.charCodeAt(s.end));
}

/** Whether every code point of s is one of chars and s has minLen..maxLen of them. */
function onlyChars(s: string, chars: string, minLen: number, maxLen: number): boolean {
  const rs = Array.from(s);
  if (rs.length < minLen || rs.length > maxLen) return false;
  return rs.every((r) => chars.includes(r));
}

function containsAny(s: string, chars: string): boolean {
  for (const r of s) if (chars.includes(r)) return true;
  return false;
}

// ---------------------------------------------------------------------------
// Check (check.go)

interface Contact {
  s: Span;
  kind: string;
  canon: string;
}

interface NumberFound {
  s: Span;
  canon: string;
}

interface Candidate {
  s: Span;
  cat: string;
}

/** The Go Check: runs the reply guard. It is deterministic and calls no model. */
export function guardReply(input: ReplyGuardInput): ReplyGuardResult {
  const hc = isHealthcare(input.business_name, input.business_type ?? "");
  const rp = analyse(input.reply);
  const probs: ReplyProblem[] = [];
  const add = (code: string, sev: "block" | "warn", msg: string, s: Span): void => {
    probs.push({ code, severity: sev, message: msg, phrase: phraseOf(rp, s.start, s.end), start: s.start, end: s.end });
  };
  const none: Span = { start: 0, end: 0 };
  if (blank(rp)) {
    add(CODE_EMPTY, SEVERITY_BLOCK, MSG_EMPTY, none);
    return finish(hc, probs);
  }
  const rv = analyse(input.review);
  const bz = analyse(input.business_name);
  const bizWords = new Set<string>();
  for (const tk of bz.toks) bizWords.add(tk.lower);

  // Whole-text checks.
  if (rp.orig.length > MAX_REPLY_LENGTH) add(CODE_TOO_LONG, SEVERITY_WARN, MSG_TOO_LONG, none);
  const revNon = nonEnglish(rv, bizWords);
  const repNon = nonEnglish(rp, bizWords);
  if (revNon && repNon) add(CODE_NON_ENGLISH, SEVERITY_BLOCK, MSG_NON_ENGLISH_BOTH, none);
  else if (revNon) add(CODE_NON_ENGLISH, SEVERITY_BLOCK, MSG_NON_ENGLISH_REVIEW, none);
  else if (repNon) add(CODE_NON_ENGLISH, SEVERITY_BLOCK, MSG_NON_ENGLISH_REPLY, none);

  // Contact details.
  const givenContacts = new Set<string>();
  for (const c of findContacts(rv)) givenContacts.add(c.kind + " " + c.canon);
  const bizContacts = new Set<string>();
  for (const c of findContacts(bz)) bizContacts.add(c.kind + " " + c.canon);
  const contactSpans = new Spans();
  const phiRepeatContacts: Candidate[] = [];
  for (const c of findContacts(rp)) {
    contactSpans.add(c.s);
    const key = c.kind + " " + c.canon;
    if (bizContacts.has(key)) {
      // the business's own contact detail
    } else if (givenContacts.has(key)) {
      if (hc) phiRepeatContacts.push({ s: c.s, cat: CAT_REPEAT_CONTACT });
    } else {
      add(CODE_CONTACT_DETAIL, SEVERITY_BLOCK, CONTACT_MESSAGES[c.kind], c.s);
    }
  }

  // Tokens inside a mention of the business name or inside a contact
  // detail take no part in phrase, name or number-word matching.
  const masked: boolean[] = new Array(rp.toks.length).fill(false);
  const m = bz.toks.length;
  if (m > 0) {
    for (let i = 0; i + m <= rp.toks.length; ) {
      let ok = true;
      for (let k = 0; k < m; k++) {
        if (rp.toks[i + k].lower !== bz.toks[k].lower) {
          ok = false;
          break;
        }
      }
      if (!ok) {
        i++;
        continue;
      }
      for (let k = 0; k < m; k++) masked[i + k] = true;
      i += m;
    }
  }
  rp.toks.forEach((tk, i) => {
    if (contactSpans.overlaps({ start: tk.start, end: tk.end })) masked[i] = true;
  });
  const phraseSpan = (pm: PhraseMatch): Span => ({ start: rp.toks[pm.first].start, end: rp.toks[pm.last].end });

  // Placeholders.
  const ph = new Spans();
  for (const s of findAll(RE_BRACKET, rp.scanCase)) ph.accept(s);
  for (const s of findAll(RE_CAPS, rp.scanCase)) {
    if (!alnumBefore(rp.scanCase, s) && !alnumAfter(rp.scanCase, s)) ph.accept(s);
  }
  for (const pm of scanPhrases(rp.toks, masked, PLACEHOLDER_PHRASES)) ph.accept(phraseSpan(pm));
  for (const s of ph.items) add(CODE_PLACEHOLDER, SEVERITY_BLOCK, MSG_PLACEHOLDER, s);

  // Offers.
  const offers = new Spans();
  for (const s of findOffers(rp.scanLower)) {
    if (!alnumAfter(rp.scanLower, s)) offers.accept(s);
  }
  for (const pm of scanPhrases(rp.toks, masked, OFFER_PHRASES)) offers.accept(phraseSpan(pm));
  for (const s of offers.items) add(CODE_OFFER, SEVERITY_BLOCK, MSG_OFFER, s);

  // Arguing.
  for (const pm of scanPhrases(rp.toks, masked, ARGUING_PHRASES)) {
    add(CODE_ARGUING, SEVERITY_WARN, MSG_ARGUING, phraseSpan(pm));
  }

  // Numbers.
  const givenNumbers = new Set<string>();
  for (const n of findNumbers(rv, null)) givenNumbers.add(n.canon);
  const bizNumbers = new Set<string>();
  for (const n of findNumbers(bz, null)) bizNumbers.add(n.canon);
  const rating = goItoa(input.rating);
  const numberSeverity = hc ? SEVERITY_BLOCK : SEVERITY_WARN;
  const phiRepeatNumbers: Candidate[] = [];
  for (const n of findNumbers(rp, masked)) {
    if (contactSpans.overlaps(n.s) || ph.overlaps(n.s) || offers.overlaps(n.s)) continue;
    if (bizNumbers.has(n.canon)) {
      // a number of the business's name
    } else if (n.canon === rating && nextIsStar(rp.toks, n.s.end)) {
      // the rating itself: "5 stars"
    } else if (givenNumbers.has(n.canon)) {
      if (hc) phiRepeatNumbers.push({ s: n.s, cat: CAT_REPEAT_NUMBER });
    } else {
      add(CODE_NUMBER_NOT_GIVEN, numberSeverity, MSG_NUMBER_NOT_GIVEN, n.s);
    }
  }

  // Health and care: nothing that confirms a patient.
  if (hc) {
    const cands: Candidate[] = [];
    for (const pm of scanPhrases(rp.toks, masked, PHI_PHRASES)) cands.push({ s: phraseSpan(pm), cat: pm.cat });
    cands.push(...findNames(rp, rv, masked, bizWords));
    cands.push(...phiRepeatNumbers);
    cands.push(...phiRepeatContacts);
    const accepted = new Spans();
    for (const c of cands) {
      if (accepted.overlaps(c.s)) continue;
      accepted.add(c.s);
      add(CODE_PHI_CONFIRMATION, SEVERITY_BLOCK, PHI_MESSAGES[c.cat], c.s);
    }
  }
  return finish(hc, probs);
}

/** Go's strconv.Itoa of an int (the rating of a direct call may be any integer). */
function goItoa(n: number): string {
  return Number.isInteger(n) ? (Object.is(n, -0) ? "0" : BigInt(n).toString()) : String(n);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders the problems (stably) and fills ok and blocked. */
function finish(hc: boolean, probs: ReplyProblem[]): ReplyGuardResult {
  const sorted = probs.slice().sort((a, b) => {
    if (a.start !== b.start) return a.start - b.start;
    if (a.code !== b.code) return compareStrings(a.code, b.code);
    if (a.end !== b.end) return a.end - b.end;
    return compareStrings(a.message, b.message);
  });
  const res: ReplyGuardResult = { ok: true, healthcare: hc, problems: [], blocked: [] };
  const seen = new Set<string>();
  for (const p of sorted) {
    res.problems.push(p);
    if (p.severity !== SEVERITY_BLOCK) continue;
    res.ok = false;
    if (p.phrase !== "" && !seen.has(p.phrase)) {
      seen.add(p.phrase);
      res.blocked.push(p.phrase);
    }
  }
  return res;
}

/** A phrase found over tokens first..last. */
interface PhraseMatch {
  first: number;
  last: number;
  cat: string;
}

/** Whether words match the tokens from i on, none masked. */
function matchAt(toks: readonly Token[], i: number, words: readonly string[], masked: readonly boolean[] | null): boolean {
  if (i + words.length > toks.length) return false;
  for (let k = 0; k < words.length; k++) {
    if (masked !== null && masked[i + k]) return false;
    if (toks[i + k].lower !== words[k]) return false;
  }
  return true;
}

/**
 * Walks the tokens left to right. At each token it takes the longest phrase
 * of the list that matches there (the first listed among equals); a match
 * uses up its tokens, no match moves one token on.
 */
function scanPhrases(toks: readonly Token[], masked: readonly boolean[] | null, phrases: PhraseList): PhraseMatch[] {
  const out: PhraseMatch[] = [];
  for (let i = 0; i < toks.length; ) {
    const list = phrases.get(toks[i].lower) ?? [];
    let best = -1;
    for (let k = 0; k < list.length; k++) {
      const e = list[k];
      if ((best < 0 || e.words.length > list[best].words.length) && matchAt(toks, i, e.words, masked)) best = k;
    }
    if (best < 0) {
      i++;
      continue;
    }
    const e = list[best];
    if (e.cat !== "") out.push({ first: i, last: i + e.words.length - 1, cat: e.cat });
    i += e.words.length;
  }
  return out;
}

/**
 * The English test. Tokens that also occur in the business name are left
 * out. A text is not English when more than a third of its letters are
 * non-ASCII letters, or when it holds at least two words of the foreign list
 * and more of them than words of the English list.
 */
function nonEnglish(t: Text, bizWords: ReadonlySet<string>): boolean {
  let ascii = 0;
  let foreign = 0;
  let en = 0;
  let fo = 0;
  for (const tk of t.toks) {
    if (!tk.word || bizWords.has(tk.lower)) continue;
    for (const ch of tk.text) {
      if (isASCIILetter(ch.codePointAt(0) ?? 0)) ascii++;
      else foreign++;
    }
    if (ENGLISH_WORDS.has(tk.lower)) en++;
    if (FOREIGN_WORDS.has(tk.lower)) fo++;
  }
  return (ascii + foreign > 0 && foreign * 3 > ascii + foreign) || (fo >= 2 && fo > en);
}

/**
 * Finds emails, then web addresses, then phone numbers, then street
 * addresses; a later match that overlaps an earlier one is dropped.
 */
function findContacts(t: Text): Contact[] {
  const out: Contact[] = [];
  const spans = new Spans();
  const attempt = (kind: string, s: Span): void => {
    if (spans.overlaps(s)) return;
    spans.add(s);
    out.push({ s, kind, canon: canonContact(t, kind, s) });
  };
  // An email needs an "@", a web address a "." or "://"; texts without
  // them skip those scans.
  if (t.scanLower.includes("@")) {
    for (const s of findEmails(t.scanLower)) attempt(CONTACT_KIND_EMAIL, s);
  }
  if (t.scanLower.includes(".") || t.scanLower.includes("://")) {
    for (const s of findURLs(t.scanLower)) {
      if (!alnumAfter(t.scanLower, s)) attempt(CONTACT_KIND_URL, s);
    }
  }
  for (const s of findAll(RE_PHONE, t.scanLower)) {
    if (!alnumBefore(t.scanLower, s) && !alnumAfter(t.scanLower, s) && phoneShape(t.scanLower.slice(s.start, s.end))) {
      attempt(CONTACT_KIND_PHONE, s);
    }
  }
  for (const mm of findAll(RE_ADDRESS, t.scanCase + " ")) {
    const s = { start: mm.start, end: mm.end - 1 };
    if (!alnumBefore(t.scanCase, s)) attempt(CONTACT_KIND_ADDRESS, s);
  }
  return out;
}

/** Accepts 10 to 15 digits, or 7 digits written ddd-dddd (separator a space, full stop or hyphen). */
function phoneShape(m: string): boolean {
  let digits = 0;
  for (let i = 0; i < m.length; i++) if (isDigit(m.charCodeAt(i))) digits++;
  if (digits >= 10 && digits <= 15) return true;
  if (digits !== 7 || m.length !== 8 || !PHONE_SEPARATOR_CHARS.includes(m[3])) return false;
  for (let i = 0; i < 8; i++) {
    if (i !== 3 && !isDigit(m.charCodeAt(i))) return false;
  }
  return true;
}

/**
 * s without its trailing "/"s (Go's strings.TrimRight(s, "/")), read once
 * from the end: the regex /\/+$/ would retry at every "/" of a long run that
 * does not end the string, which a web address can hold ("a.com////…x").
 */
function trimTrailingSlashes(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 0x2f /* / */) end--;
  return s.slice(0, end);
}

/** The form compared between reply and review. */
function canonContact(t: Text, kind: string, s: Span): string {
  let low = lowerSlice(t, s.start, s.end);
  switch (kind) {
    case CONTACT_KIND_URL:
      for (const p of ["https://", "http://", "www."]) if (low.startsWith(p)) low = low.slice(p.length);
      return trimTrailingSlashes(low);
    case CONTACT_KIND_PHONE: {
      let b = "";
      for (const ch of low) if (isDigit(ch.codePointAt(0) ?? 0)) b += ch;
      return b;
    }
    case CONTACT_KIND_ADDRESS: {
      let b = "";
      let gap = false;
      for (const ch of low) {
        const r = ch.codePointAt(0) ?? 0;
        if (isLower(r) || isDigit(r)) {
          if (gap && b.length > 0) b += " ";
          gap = false;
          b += ch;
        } else {
          gap = true;
        }
      }
      return b;
    }
  }
  return low;
}

/**
 * Finds digit numbers ("3", "3,000", "10:30", "3/14") and number words
 * ("three"), by start. Commas are dropped from the canonical form; number
 * words map to their digits.
 */
function findNumbers(t: Text, masked: readonly boolean[] | null): NumberFound[] {
  const out: NumberFound[] = [];
  for (const s of findAll(RE_NUMBER, t.scanLower)) {
    out.push({ s, canon: t.scanLower.slice(s.start, s.end).replace(/,/g, "") });
  }
  t.toks.forEach((tk, i) => {
    if (!tk.word || (masked !== null && masked[i])) return;
    const v = NUMBER_WORDS.get(tk.lower);
    if (v !== undefined) out.push({ s: { start: tk.start, end: tk.end }, canon: v });
  });
  return out.sort((a, b) => a.s.start - b.s.start); // stable, as sort.SliceStable
}

/** Whether the first token at or after end is "star" or "stars". */
function nextIsStar(toks: readonly Token[], end: number): boolean {
  for (const tk of toks) {
    if (tk.start >= end) return STAR_WORDS.has(tk.lower);
  }
  return false;
}

/**
 * Finds names for the health check: a title followed by a capitalised word
 * ("Dr. Patel", "Nurse Amy Lee"), and capitalised words that are not common
 * words, not business-name words and either stand mid-sentence or also
 * appear, spelt the same, in the review.
 */
function findNames(rp: Text, rv: Text, masked: readonly boolean[], bizWords: ReadonlySet<string>): Candidate[] {
  const toks = rp.toks;
  const gap = (i: number): string => fromCodePoints(rp.norm, toks[i - 1].end, toks[i].start);
  const first = (tk: Token): number => tk.text.codePointAt(0) ?? 0;
  const capital = (tk: Token): boolean => tk.word && isUpper(first(tk));
  const nameWord = (i: number): boolean => {
    const tk = toks[i];
    const rs = codePoints(tk.text);
    return (
      !masked[i] &&
      tk.word &&
      rs.length >= 2 &&
      isUpper(rs[0]) &&
      isLower(rs[1]) &&
      !COMMON_WORDS.has(tk.lower) &&
      !bizWords.has(tk.lower)
    );
  };
  const initial = (i: number): boolean => i === 0 || containsAny(gap(i), SENTENCE_END_CHARS);
  const reviewWords = new Set<string>();
  for (const tk of rv.toks) if (tk.word) reviewWords.add(tk.text);
  const extend = (j: number): number => {
    while (j + 1 < toks.length && onlyChars(gap(j + 1), NAME_JOIN_CHARS, 1, 1) && nameWord(j + 1)) j++;
    return j;
  };
  const used: boolean[] = new Array(toks.length).fill(false);
  const out: Candidate[] = [];
  for (let i = 0; i + 1 < toks.length; i++) {
    if (masked[i] || masked[i + 1] || !toks[i].word || !TITLES.has(toks[i].lower)) continue;
    if (!capital(toks[i + 1]) || bizWords.has(toks[i + 1].lower) || !onlyChars(gap(i + 1), TITLE_GAP_CHARS, 1, 2)) {
      continue;
    }
    const last = extend(i + 1);
    for (let k = i; k <= last; k++) used[k] = true;
    out.push({ s: { start: toks[i].start, end: toks[last].end }, cat: CAT_NAME });
    i = last;
  }
  for (let i = 0; i < toks.length; i++) {
    if (used[i] || !nameWord(i) || (initial(i) && !reviewWords.has(toks[i].text))) continue;
    const last = extend(i);
    for (let k = i; k <= last && !used[k]; k++) used[k] = true;
    out.push({ s: { start: toks[i].start, end: toks[last].end }, cat: CAT_NAME });
    i = last;
  }
  return out.sort((a, b) => a.s.start - b.s.start); // stable, as sort.SliceStable
}

// ---------------------------------------------------------------------------
// Health and care businesses (healthcare.go)

/**
 * Prepares a business name or type for the health test: full stops are
 * removed, the text is normalised and tokenised, and word tokens are split
 * where a lower-case ASCII letter is followed by an upper-case one.
 */
function healthTokens(s: string): Token[] {
  const t = analyse(s.replace(/\./g, ""));
  const out: Token[] = [];
  for (const tk of t.toks) {
    const rs = codePoints(tk.text);
    let from = 0;
    for (let k = 1; k <= rs.length; k++) {
      if (k === rs.length || (isLower(rs[k - 1]) && isUpper(rs[k]))) {
        const part = fromCodePoints(rs, from, k);
        out.push({ start: tk.start + from, end: tk.start + k, text: part, lower: lowerString(part), word: tk.word });
        from = k;
      }
    }
  }
  return out;
}

/** Whether any entry matches consecutive tokens. */
function containsPhrase(toks: readonly Token[], phrases: PhraseList): boolean {
  for (let i = 0; i < toks.length; i++) {
    for (const e of phrases.get(toks[i].lower) ?? []) if (matchAt(toks, i, e.words, null)) return true;
  }
  return false;
}

function healthMatch(toks: readonly Token[]): boolean {
  if (toks.some((tk) => HEALTH_CREDENTIALS.has(tk.text))) return true;
  return containsPhrase(toks, HEALTH_KEYWORDS);
}

/**
 * Whether a business is a health or care business whose public replies must
 * not confirm anything about a patient. The name and the type are tested
 * separately: either may match a keyword or a credential, and a veterinary
 * word in either makes the answer false.
 */
export function isHealthcare(businessName: string, businessType = ""): boolean {
  const n = healthTokens(businessName);
  const t = healthTokens(businessType);
  if (containsPhrase(n, VETERINARY_WORDS) || containsPhrase(t, VETERINARY_WORDS)) return false;
  return healthMatch(n) || healthMatch(t);
}

// ---------------------------------------------------------------------------
// Safe replies and the kit functions (kit.go)

const SAFE_REPLY_GENERAL =
  "Thank you for your feedback. We take every comment seriously and would welcome the chance to talk; please contact us directly.";
const SAFE_REPLY_HEALTHCARE =
  "Thank you for your feedback. We take every comment seriously. To protect everyone's privacy, we never discuss details in public; please contact our office directly so we can talk.";

/**
 * The fixed reply to post when no draft passes. businessName is accepted for
 * convenience but deliberately not used: text taken from the business could
 * carry a placeholder or a name.
 */
export function safeReply(businessName: string, healthcare: boolean): string {
  void businessName;
  return healthcare ? SAFE_REPLY_HEALTHCARE : SAFE_REPLY_GENERAL;
}

const CHECK_REPLY_FIELDS = ["review", "rating", "business_name", "business_type", "reply"] as const;
const IS_HEALTHCARE_FIELDS = ["business_name", "business_type"] as const;

/** The JSON kind of a value, as Go's decoder names it in errors. */
function jsonKind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  switch (typeof v) {
    case "number":
    case "bigint":
      return "number";
    case "boolean":
      return "bool";
    default:
      return typeof v;
  }
}

/**
 * Go's encoding/json matches object keys to fields case-insensitively with
 * Unicode simple folding; for these field names that is ASCII case plus
 * U+017F (long s) for "s" and U+212A (Kelvin sign) for "k".
 */
function foldKey(key: string): string {
  return lowerString(key).replace(/\u017F/g, "s").replace(/\u212A/g, "k");
}


/**
 * Decodes a kit input object the way the Go adapter's decodeStrict does:
 * the first unknown field or wrongly typed string field, in key order, is
 * the error. Returns the fields found (null where absent or null); "rating"
 * is kept as given.
 */
function decodeStrict(
  fn: string,
  input: unknown,
  fields: readonly string[],
  rawField: string | null,
): Map<string, unknown> {
  const allowed = fields.join(", ");
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    throw new Error(`${fn}: the input must be a JSON object with the fields ${allowed}`);
  }
  const got = new Map<string, unknown>();
  for (const [key, v] of Object.entries(input as Record<string, unknown>)) {
    if (v === undefined) continue; // not representable in JSON: taken as absent
    const folded = foldKey(key);
    const field = fields.find((f) => f === folded);
    if (field === undefined) {
      throw new Error(`${fn}: unknown field ${goQuote(key)}; the allowed fields are ${allowed}`);
    }
    if (field === rawField) {
      got.set(field, v);
      continue;
    }
    if (v === null) {
      got.set(field, null);
    } else if (typeof v === "string") {
      got.set(field, wellFormed(v));
    } else {
      throw new Error(`${fn}: ${goQuote(field)} must be a string, not a JSON ${jsonKind(v)}`);
    }
  }
  return got;
}

/** The JSON text of a decoded value, as Go's error message quotes the raw input. */
function rawJSON(v: unknown): string {
  if (typeof v === "number") {
    if (!Number.isFinite(v)) return String(v);
    if (Object.is(v, -0)) return "-0";
  }
  if (typeof v === "bigint") return v.toString();
  return JSON.stringify(v) ?? String(v);
}

/** Accepts a JSON number whose value is a whole number from 1 to 5 (5 and 5.0 alike). */
function parseRating(fn: string, v: unknown): number {
  if (v === undefined || v === null) {
    throw new Error(`${fn}: "rating" is required: the review's star rating, a whole number from 1 to 5`);
  }
  const f = typeof v === "bigint" ? Number(v) : v;
  if (typeof f !== "number" || !Number.isFinite(f) || !Number.isInteger(f) || f < 1 || f > 5) {
    throw new Error(`${fn}: "rating" must be a whole number from 1 to 5, not ${rawJSON(v)}`);
  }
  return f;
}

/** Go's strings.TrimSpace(s) === "": whether s holds only Unicode White_Space. */
function goBlank(s: string): boolean {
  return /^[\t\n\v\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]*$/.test(s);
}

/**
 * The checkReply kit function. The input is a decoded JSON value
 * {"review": string, "rating": 1..5, "business_name": string,
 * "business_type": string, "reply": string}, checked as strictly as the Go
 * kit adapter checks it; bad input throws an Error with the Go message.
 */
export function checkReply(input: unknown): ReplyGuardResult {
  const fn = "checkReply";
  const a = decodeStrict(fn, input, CHECK_REPLY_FIELDS, "rating");
  const review = a.get("review");
  if (typeof review !== "string") {
    throw new Error(`${fn}: "review" is required: the review text as a string ("" for a rating-only review)`);
  }
  const rating = parseRating(fn, a.get("rating"));
  const name = a.get("business_name");
  if (typeof name !== "string" || goBlank(name)) {
    throw new Error(`${fn}: "business_name" is required: the business's name as a non-empty string`);
  }
  const reply = a.get("reply");
  if (typeof reply !== "string") {
    throw new Error(`${fn}: "reply" is required: the reply text as a string`);
  }
  const bt = a.get("business_type");
  return guardReply({
    review,
    rating,
    business_name: name,
    business_type: typeof bt === "string" ? bt : "",
    reply,
  });
}

/**
 * The isHealthcareBusiness kit function: {"business_name": string,
 * "business_type": string} to a boolean, with the Go adapter's validation.
 */
export function isHealthcareBusiness(input: unknown): boolean {
  const fn = "isHealthcareBusiness";
  const a = decodeStrict(fn, input, IS_HEALTHCARE_FIELDS, null);
  const name = a.get("business_name");
  if (typeof name !== "string") {
    throw new Error(`${fn}: "business_name" is required: the business's name as a string`);
  }
  const bt = a.get("business_type");
  return isHealthcare(name, typeof bt === "string" ? bt : "");
}

/** The kit functions by name, as the Go KitFunctions. */
export const replyguardKitFunctions: Record<string, (input: unknown) => unknown> = {
  checkReply,
  isHealthcareBusiness,
};

// ---------------------------------------------------------------------------
// PHI categories and their messages (lists.go). The word lists themselves
// are in replyguard-lists.ts, read from the JSON file Go embeds.

const CAT_PATIENT = "patient";
const CAT_VISIT = "visit";
const CAT_TREATMENT = "treatment";
const CAT_WAIT = "wait";
const CAT_BILL = "bill";
const CAT_FAMILY = "family";
const CAT_DATE = "date";
const CAT_NAME = "name";
const CAT_REPEAT_NUMBER = "repeat_number";
const CAT_REPEAT_CONTACT = "repeat_contact";

const PHI_MESSAGES: Record<string, string> = {
  [CAT_PATIENT]: "confirms that the reviewer is a patient or client, or describes their care",
  [CAT_VISIT]: "confirms a visit or appointment",
  [CAT_TREATMENT]: "confirms a treatment, procedure or diagnosis",
  [CAT_WAIT]: "confirms a wait or waiting time",
  [CAT_BILL]: "confirms a bill, charge, payment or insurance matter",
  [CAT_FAMILY]: "mentions a family member",
  [CAT_DATE]: "mentions a day or date that could tie the reviewer to a visit",
  [CAT_NAME]: "names a person (the reviewer or staff)",
  [CAT_REPEAT_NUMBER]: "repeats a number the reviewer gave",
  [CAT_REPEAT_CONTACT]: "repeats contact details the reviewer gave",
};
