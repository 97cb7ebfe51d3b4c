// robots.txt parsing (RFC 9309) and the robotsAccess report: which AI
// crawlers a site lets in, path by path.
//
// This is a port of the Go package pipelines/sitecheck/robots; its package
// comment (robots.go) is the specification, and the shared fixture
// testdata/sitecheck/robots_access.json pins every decision. Everything is
// computed on the UTF-8 bytes of the input, as the Go code does: lengths,
// the 512000-byte limit, normalisation and percent-encoding count octets,
// lower-casing is ASCII-only and trimming removes spaces and tabs only.

/** How much of a robots.txt body is parsed, in bytes (RFC 9309 section 2.5 asks for at least 500 KiB). */
import { goQuote, wellFormed } from "./gostrings.js";
export const MAX_ROBOTS_BYTES = 512000;

/** What a crawler fetches for. */
export type CrawlerPurpose = "training" | "search" | "user request";

/** A known AI crawler: its robots.txt product token, who runs it, and what it fetches for. */
export interface Crawler {
  token: string;
  owner: string;
  purpose: CrawlerPurpose;
}

/** The crawlers robotsAccess reports on by default, in report order. */
export const AI_CRAWLERS: readonly Readonly<Crawler>[] = Object.freeze(
  (
    [
      ["GPTBot", "OpenAI", "training"],
      ["OAI-SearchBot", "OpenAI", "search"],
      ["ChatGPT-User", "OpenAI", "user request"],
      ["ClaudeBot", "Anthropic", "training"],
      ["Claude-User", "Anthropic", "user request"],
      ["Claude-SearchBot", "Anthropic", "search"],
      ["PerplexityBot", "Perplexity", "search"],
      ["Perplexity-User", "Perplexity", "user request"],
      ["Google-Extended", "Google", "training"],
      ["Applebot-Extended", "Apple", "training"],
      ["CCBot", "Common Crawl", "training"],
      ["Bytespider", "ByteDance", "training"],
      ["meta-externalagent", "Meta", "training"],
      ["Amazonbot", "Amazon", "search"],
    ] as const
  ).map(([token, owner, purpose]) => Object.freeze({ token, owner, purpose })),
);

/** The outcome of fetching robots.txt, as reported by robotsAccess. */
export type FetchResult = "ok" | "not_found" | "unreachable";

/** The answer for one crawler and one path. */
export interface RobotsDecision {
  allowed: boolean;
  /**
   * The winning rule as "allow: <pattern>" or "disallow: <pattern>", with the
   * pattern as written (trimmed, not normalised), or "" when no rule matched.
   */
  rule: string;
}

/** The robotsAccess input (after validation). */
export interface RobotsAccessInput {
  robots_txt?: string;
  /** The HTTP status of the robots.txt fetch, 0 when no answer came. */
  status: number;
  /** Defaults to every AI_CRAWLERS token in order when absent, null or empty. */
  crawlers?: string[] | null;
  /** Defaults to ["/"] when absent, null or empty. */
  paths?: string[] | null;
}

/** The decision for one path. */
export interface PathAccess {
  /** As given. */
  path: string;
  allowed: boolean;
  rule: string;
}

/** One crawler's access, path by path, in input order. */
export interface CrawlerAccess {
  /** As given. */
  crawler: string;
  /** "" for a crawler not in AI_CRAWLERS. */
  owner: string;
  /** "" for a crawler not in AI_CRAWLERS. */
  purpose: CrawlerPurpose | "";
  paths: PathAccess[];
  all_allowed: boolean;
  all_blocked: boolean;
}

/** The robotsAccess output. */
export interface RobotsAccessReport {
  fetch: FetchResult;
  crawlers: CrawlerAccess[];
}

/** One compiled allow or disallow rule. */
export interface RobotsRule {
  readonly allow: boolean;
  /** "allow: <pattern>" or "disallow: <pattern>" as reported. */
  readonly text: string;
  /** Normalised literal pieces between wildcards (ASCII only). */
  readonly pieces: readonly string[];
  /** The pattern ends with "$". */
  readonly anchored: boolean;
  /** Normalised length in octets. */
  readonly length: number;
}

/** One group of a robots.txt file. */
export interface RobotsGroup {
  /** A "*" user-agent line. */
  global: boolean;
  /** Lower-case product tokens, never empty. */
  readonly tokens: string[];
  readonly rules: RobotsRule[];
}

/**
 * A parsed robots.txt file, or the outcome of a fetch that gave no file (see
 * robotsFromStatus). checkRobots treats null and undefined as a file that
 * allows everything.
 */
export interface Robots {
  readonly mode: "parsed" | "allow_all" | "disallow_all";
  readonly groups: readonly RobotsGroup[];
}

// ---------------------------------------------------------------------------
// Bytes

const CR = 0x0d;
const LF = 0x0a;
const SPACE = 0x20;
const TAB = 0x09;
const HASH = 0x23;
const COLON = 0x3a;
const STAR = 0x2a;
const DOLLAR = 0x24;
const PERCENT = 0x25;
const SLASH = 0x2f;

const encoder = new TextEncoder();

/** UTF-8 of s; lone surrogates become U+FFFD, as in a JSON-decoded Go string. */
function utf8(s: string): Uint8Array {
  return encoder.encode(s);
}

const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Decodes bytes into a string the way Go's JSON encoder reports them: valid
 * UTF-8 as is (a BOM included), each byte of an invalid sequence as U+FFFD.
 */
function decodeUTF8(b: Uint8Array): string {
  try {
    return strictDecoder.decode(b);
  } catch {
    // Fall through to the byte-by-byte decode (Go's utf8.DecodeRune).
  }
  let out = "";
  for (let i = 0; i < b.length; ) {
    const c = b[i];
    if (c < 0x80) {
      out += String.fromCharCode(c);
      i++;
      continue;
    }
    let need = 0;
    let lo = 0x80;
    let hi = 0xbf;
    let cp = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      cp = c & 0x0f;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      cp = c & 0x07;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    }
    let ok = need > 0 && i + need < b.length;
    if (ok) {
      for (let k = 1; k <= need; k++) {
        const x = b[i + k];
        const min = k === 1 ? lo : 0x80;
        const max = k === 1 ? hi : 0xbf;
        if (x < min || x > max) {
          ok = false;
          break;
        }
        cp = (cp << 6) | (x & 0x3f);
      }
    }
    if (!ok) {
      out += "\uFFFD";
      i++;
      continue;
    }
    out += String.fromCodePoint(cp);
    i += need + 1;
  }
  return out;
}

/** The bytes as a string of one character per byte (for ASCII comparisons). */
function latin1(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i++) s += String.fromCharCode(b[i]);
  return s;
}

function isWS(c: number): boolean {
  return c === SPACE || c === TAB;
}

/** trimWS trims spaces and tabs (RFC 9309 WS), nothing else. */
function trimWS(b: Uint8Array): Uint8Array {
  let start = 0;
  let end = b.length;
  while (start < end && isWS(b[start])) start++;
  while (end > start && isWS(b[end - 1])) end--;
  return b.subarray(start, end);
}

/** ASCII-only lower case of a string (other characters are kept). */
function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

// ---------------------------------------------------------------------------
// Parsing

const USER_AGENT_KEYS = new Set(["user-agent", "useragent", "user agent"]);
const RULE_KEYS = new Set(["allow", "disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"]);

/** Reads a robots.txt body fetched with a 2xx status (a string is taken as its UTF-8 bytes). */
export function parseRobots(body: string | Uint8Array): Robots {
  let b = limit(typeof body === "string" ? utf8(body) : body);
  if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) {
    b = b.subarray(3);
  }
  const groups: RobotsGroup[] = [];
  let cur: RobotsGroup | undefined;
  let hasRules = false;
  let pos = 0;
  while (pos < b.length) {
    // nextLine: LF, CR and CRLF end a line.
    let end = pos;
    while (end < b.length && b[end] !== LF && b[end] !== CR) end++;
    const line = b.subarray(pos, end);
    if (end >= b.length) pos = b.length;
    else if (b[end] === CR && end + 1 < b.length && b[end + 1] === LF) pos = end + 2;
    else pos = end + 1;

    const kv = splitLine(line);
    if (kv === undefined) continue;
    const [key, value] = kv;
    if (USER_AGENT_KEYS.has(key)) {
      if (cur === undefined || hasRules) {
        cur = { global: false, tokens: [], rules: [] };
        groups.push(cur);
        hasRules = false;
      }
      if (isGlobalAgent(value)) {
        cur.global = true;
      } else {
        const t = productToken(value);
        if (t !== "") cur.tokens.push(t);
      }
    } else if (RULE_KEYS.has(key)) {
      if (cur === undefined) continue; // RFC 9309 2.2.2: rules outside any group are ignored
      hasRules = true;
      if (value.length === 0) continue; // an empty pattern matches nothing
      cur.rules.push(compileRule(key === "allow", value));
    }
  }
  return { mode: "parsed", groups };
}

/**
 * limit keeps the first MAX_ROBOTS_BYTES bytes, cut back to the last line
 * break inside them when the body is longer.
 */
function limit(b: Uint8Array): Uint8Array {
  if (b.length <= MAX_ROBOTS_BYTES) return b;
  for (let i = MAX_ROBOTS_BYTES - 1; i >= 0; i--) {
    if (b[i] === LF || b[i] === CR) return b.subarray(0, i + 1);
  }
  return b.subarray(0, 0);
}

/**
 * splitLine drops the comment and splits "key: value"; the key comes back in
 * ASCII lower case (one character per byte), the value as trimmed bytes. A
 * line without ":" that is exactly two words separated by spaces or tabs
 * ("disallow /") is read as "key: value"; any other line without ":" is
 * malformed (undefined).
 */
function splitLine(line: Uint8Array): [string, Uint8Array] | undefined {
  const hash = line.indexOf(HASH);
  if (hash >= 0) line = line.subarray(0, hash);
  const colon = line.indexOf(COLON);
  if (colon >= 0) {
    return [asciiLower(latin1(trimWS(line.subarray(0, colon)))), trimWS(line.subarray(colon + 1))];
  }
  const s = trimWS(line);
  const sep = s.findIndex(isWS);
  if (sep < 0) return undefined;
  const value = trimWS(s.subarray(sep));
  if (value.some(isWS)) return undefined;
  return [asciiLower(latin1(s.subarray(0, sep))), value];
}

/** A user-agent value that names every crawler: "*" alone or followed by a space or tab. */
function isGlobalAgent(v: Uint8Array): boolean {
  return (v.length === 1 && v[0] === STAR) || (v.length > 1 && v[0] === STAR && isWS(v[1]));
}

/**
 * The lower-case leading run of [A-Za-z_-] of a crawler name or user-agent
 * value (RFC 9309 2.2.1 allows only those characters), after trimming spaces
 * and tabs.
 */
function productToken(value: Uint8Array): string {
  const s = trimWS(value);
  let token = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c >= 0x61 && c <= 0x7a) token += String.fromCharCode(c);
    else if (c >= 0x41 && c <= 0x5a) token += String.fromCharCode(c + 0x20);
    else if (c === 0x5f || c === 0x2d) token += String.fromCharCode(c);
    else break;
  }
  return token;
}

function compileRule(allow: boolean, pattern: Uint8Array): RobotsRule {
  const text = (allow ? "allow: " : "disallow: ") + decodeUTF8(pattern);
  let body = pattern;
  let anchored = false;
  let length = 0;
  if (body.length > 0 && body[body.length - 1] === DOLLAR) {
    anchored = true;
    body = body.subarray(0, body.length - 1);
    length++;
  }
  const pieces: string[] = [];
  let start = 0;
  for (let i = 0; i <= body.length; i++) {
    if (i === body.length || body[i] === STAR) {
      pieces.push(normalizeBytes(body.subarray(start, i)));
      start = i + 1;
    }
  }
  length += pieces.length - 1;
  for (const p of pieces) length += p.length;
  return { allow, text, pieces, anchored, length };
}

// ---------------------------------------------------------------------------
// Matching

const UPPER_HEX = "0123456789ABCDEF";

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

function unhex(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return c - 0x41 + 10;
}

/** RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~". */
function isUnreserved(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2d ||
    c === 0x2e ||
    c === 0x5f ||
    c === 0x7e
  );
}

function pctEncode(v: number): string {
  return "%" + UPPER_HEX[v >> 4] + UPPER_HEX[v & 15];
}

/**
 * Puts a path, or a literal piece of a pattern, in the form both are
 * compared in. The result is ASCII only, so its string length is its length
 * in octets.
 */
function normalizeBytes(b: Uint8Array): string {
  let out = "";
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c === PERCENT && i + 2 < b.length && isHex(b[i + 1]) && isHex(b[i + 2])) {
      const v = (unhex(b[i + 1]) << 4) | unhex(b[i + 2]);
      out += isUnreserved(v) ? String.fromCharCode(v) : pctEncode(v);
      i += 2;
    } else if (c >= 0x80 || c === STAR || c === DOLLAR) {
      out += pctEncode(c);
    } else {
      out += String.fromCharCode(c);
    }
  }
  return out;
}

/**
 * The normalised form of a path or of a literal piece of a pattern (see the
 * Go package comment): unreserved %XY escapes decoded, other escapes in
 * upper-case hex, octets 0x80 and above and literal "*" and "$" %-encoded,
 * everything else kept. A string is taken as its UTF-8 bytes.
 */
export function normalizeRobotsPath(s: string | Uint8Array): string {
  return normalizeBytes(typeof s === "string" ? utf8(s) : s);
}

/** Whether the normalised path p matches the rule (leftmost placement of each middle piece, no backtracking needed). */
function ruleMatches(ru: RobotsRule, p: string): boolean {
  const first = ru.pieces[0];
  if (ru.pieces.length === 1) {
    return ru.anchored ? p === first : p.startsWith(first);
  }
  if (!p.startsWith(first)) return false;
  let pos = first.length;
  const last = ru.pieces.length - 1;
  for (let k = 1; k < last; k++) {
    const piece = ru.pieces[k];
    const i = p.indexOf(piece, pos);
    if (i < 0) return false;
    pos = i + piece.length;
  }
  const tail = ru.pieces[last];
  if (ru.anchored) return p.length - pos >= tail.length && p.endsWith(tail);
  return p.indexOf(tail, pos) >= 0;
}

/**
 * Whether the crawler named agent may fetch path (path plus query, as sent).
 * Strings are taken as their UTF-8 bytes.
 */
export function checkRobots(robots: Robots | null | undefined, agent: string, path: string): RobotsDecision {
  let pb = utf8(path);
  if (pb.length === 0 || pb[0] !== SLASH) {
    const rooted = new Uint8Array(pb.length + 1);
    rooted[0] = SLASH;
    rooted.set(pb, 1);
    pb = rooted;
  }
  const p = normalizeBytes(pb);
  if (p === "/robots.txt") return { allowed: true, rule: "" };
  if (robots == null) return { allowed: true, rule: "" };
  if (robots.mode === "allow_all") return { allowed: true, rule: "" };
  if (robots.mode === "disallow_all") return { allowed: false, rule: "" };

  let best: RobotsRule | undefined;
  const consider = (g: RobotsGroup): void => {
    for (const ru of g.rules) {
      if (
        best !== undefined &&
        (ru.length < best.length || (ru.length === best.length && (best.allow || !ru.allow)))
      ) {
        continue;
      }
      if (ruleMatches(ru, p)) best = ru;
    }
  };
  let named = false;
  const t = productToken(utf8(agent));
  if (t !== "") {
    for (const g of robots.groups) {
      if (g.tokens.includes(t)) {
        named = true;
        consider(g);
      }
    }
  }
  if (!named) {
    for (const g of robots.groups) {
      if (g.global) consider(g);
    }
  }
  if (best === undefined) return { allowed: true, rule: "" };
  return { allowed: best.allow, rule: best.text };
}

// ---------------------------------------------------------------------------
// Fetch status

/** Names the outcome of fetching robots.txt with an HTTP status (0 when no answer came). */
export function robotsFetchResult(status: number): FetchResult {
  if (status >= 200 && status <= 299) return "ok";
  if (status >= 400 && status <= 499) return "not_found";
  return "unreachable";
}

/**
 * RFC 9309 section 2.3.1: 2xx parses the body; 4xx means no usable file, so
 * everything is allowed; anything else (5xx, 0 for no answer, 1xx, 3xx or
 * out-of-range codes) means unreachable, so everything is disallowed.
 */
export function robotsFromStatus(status: number, body: string | Uint8Array): Robots {
  switch (robotsFetchResult(status)) {
    case "ok":
      return parseRobots(body);
    case "not_found":
      return { mode: "allow_all", groups: [] };
    default:
      return { mode: "disallow_all", groups: [] };
  }
}

// ---------------------------------------------------------------------------
// robotsAccess

/**
 * Finds a crawler of AI_CRAWLERS by its token, compared ASCII
 * case-insensitively as a whole string ("gptbot" finds GPTBot, "GPTBot/1.1"
 * finds nothing).
 */
export function lookupCrawler(token: string): Crawler | undefined {
  const lt = asciiLower(token);
  const c = AI_CRAWLERS.find((x) => asciiLower(x.token) === lt);
  return c === undefined ? undefined : { token: c.token, owner: c.owner, purpose: c.purpose };
}

/** The report for an already validated input (Go's RobotsAccess). */
function buildReport(input: RobotsAccessInput): RobotsAccessReport {
  const crawlers =
    input.crawlers != null && input.crawlers.length > 0 ? input.crawlers : AI_CRAWLERS.map((c) => c.token);
  const paths = input.paths != null && input.paths.length > 0 ? input.paths : ["/"];
  const robots = robotsFromStatus(input.status, input.robots_txt ?? "");
  const report: RobotsAccessReport = { fetch: robotsFetchResult(input.status), crawlers: [] };
  for (const name of crawlers) {
    const known = lookupCrawler(name);
    const ca: CrawlerAccess = {
      crawler: name,
      owner: known?.owner ?? "",
      purpose: known?.purpose ?? "",
      paths: [],
      all_allowed: true,
      all_blocked: true,
    };
    for (const p of paths) {
      const d = checkRobots(robots, name, p);
      ca.paths.push({ path: p, allowed: d.allowed, rule: d.rule });
      if (d.allowed) ca.all_blocked = false;
      else ca.all_allowed = false;
    }
    report.crawlers.push(ca);
  }
  return report;
}

// Input validation, after Go's strict decoding of the kit input
// (KitFunctions()["robotsAccess"]): unknown fields, a missing status and
// values of the wrong type are errors, with the same messages.

const BAD_INPUT = "robotsAccess: bad input: ";
const STATUS_REQUIRED =
  'robotsAccess: bad input: "status" is required (the HTTP status of the robots.txt fetch, 0 when no answer came)';
const KIT_FIELDS = "robots_txt, status, crawlers, paths";
const WANT: Record<string, string> = {
  robots_txt: "a string",
  status: "an integer",
  crawlers: "a list of strings",
  paths: "a list of strings",
};

type Field = "robots_txt" | "status" | "crawlers" | "paths";
const FIELDS: readonly Field[] = ["robots_txt", "status", "crawlers", "paths"];


/**
 * Go's encoding/json matches object keys to fields case-insensitively with
 * Unicode simple folding; for these field names that is ASCII case plus
 * U+017F (long s) for "s" and U+212A (Kelvin sign) for "k".
 */
function foldKey(key: string): string {
  return asciiLower(key).replace(/\u017F/g, "s").replace(/\u212A/g, "k");
}


/** The JSON kind of a value, as Go's decoder names it in errors. */
function jsonKind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  switch (typeof v) {
    case "string":
      return "string";
    case "number":
    case "bigint":
      return "number";
    case "boolean":
      return "bool";
    case "object":
      return "object";
    default:
      return typeof v;
  }
}

function badInput(detail: string): Error {
  return new Error(BAD_INPUT + detail);
}

/** "a JSON string", "a JSON boolean", … as the Go kit words a value's kind. */
function kindPhrase(v: unknown): string {
  const k = jsonKind(v);
  return k === "bool" ? "a JSON boolean" : "a JSON " + k;
}

function typeError(v: unknown, field: Field): Error {
  return badInput(`"${field}" must be ${WANT[field]}, not ${kindPhrase(v)}`);
}

const INT64_MIN = -(2 ** 63);
const INT64_LIMIT = 2 ** 63;

/** A Go int (int64) from a decoded JSON number. */
function toStatus(v: number | bigint): number | undefined {
  if (typeof v === "bigint") {
    if (v < -(2n ** 63n) || v >= 2n ** 63n) return undefined;
    return Number(v);
  }
  if (!Number.isInteger(v) || v < INT64_MIN || v >= INT64_LIMIT) return undefined;
  return v === 0 ? 0 : v; // -0 is 0
}

function toStringList(v: unknown, field: Field): string[] | null {
  if (v === null) return null;
  if (!Array.isArray(v)) throw typeError(v, field);
  const out: string[] = [];
  for (let i = 0; i < v.length; i++) {
    const e: unknown = v[i];
    if (e === null || e === undefined) out.push(""); // null leaves a Go string empty
    else if (typeof e === "string") out.push(wellFormed(e));
    else throw typeError(e, field);
  }
  return out;
}

/** Validates a decoded robotsAccess input the way the Go kit adapter decodes it. */
function validateInput(input: unknown): RobotsAccessInput {
  if (input === undefined) throw badInput("the input is not valid JSON: EOF");
  let robotsTxt: string | null = null;
  let status: number | null = null;
  let crawlers: string[] | null = null;
  let paths: string[] | null = null;
  if (input !== null) {
    if (typeof input !== "object" || Array.isArray(input)) {
      throw badInput(`the input must be a JSON object with the fields ${KIT_FIELDS}`);
    }
    const obj = input as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      const v = obj[key];
      if (v === undefined) continue; // not representable in JSON: taken as absent
      const folded = foldKey(key);
      const field = FIELDS.find((f) => f === folded);
      switch (field) {
        case undefined:
          throw badInput(`unknown field ${goQuote(key)}; the allowed fields are ${KIT_FIELDS}`);
        case "robots_txt":
          if (v === null) robotsTxt = null;
          else if (typeof v === "string") robotsTxt = wellFormed(v);
          else throw typeError(v, field);
          break;
        case "status":
          if (v === null) {
            status = null;
          } else if (typeof v === "number" || typeof v === "bigint") {
            const n = toStatus(v);
            if (n === undefined) {
              throw badInput('"status" must be an integer, not a number with a fraction or exponent');
            }
            status = n;
          } else {
            throw typeError(v, field);
          }
          break;
        case "crawlers":
          crawlers = toStringList(v, field);
          break;
        case "paths":
          paths = toStringList(v, field);
          break;
      }
    }
  }
  if (status === null) throw new Error(STATUS_REQUIRED);
  return { robots_txt: robotsTxt ?? "", status, crawlers, paths };
}

/**
 * The robotsAccess kit function: which crawlers the fetched robots.txt lets
 * fetch which paths. The input is a decoded JSON value
 * {"robots_txt": string, "status": int, "crawlers": [string], "paths": [string]};
 * it is checked as strictly as the Go kit adapter checks it (unknown fields,
 * a missing status and wrong types throw an Error with the Go message).
 * Crawlers and paths keep the given order, duplicates included.
 */
export function robotsAccess(input: unknown): RobotsAccessReport {
  return buildReport(validateInput(input));
}
