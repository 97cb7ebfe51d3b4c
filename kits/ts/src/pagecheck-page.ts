// Meta tags, image alt texts and llms.txt of the pagecheck port (Go meta.go,
// alt.go and llmstxt.go).

import { RE_URL_PARTS, isAbsoluteURL } from "./pagecheck-schema.js";
import {
  HtmlTokenKind,
  asciiLower,
  collapseSpace,
  decodeEntities,
  findPlaceholder,
  isHTMLSpaceCode,
  runeCount,
  scanHTML,
  tokenAttr,
  trimASCII,
  trimChars,
  trimLeftChars,
} from "./pagecheck-text.js";

// ---------------------------------------------------------------------------
// Meta data (meta.go)

/** Limits of checkMeta, in code points after whitespace collapsing. */
export const TITLE_MIN = 10;
export const TITLE_MAX = 60;
export const DESCRIPTION_MIN = 50;
export const DESCRIPTION_MAX = 160;

/** One problem of a page's meta data or of an llms.txt file. */
export interface PageProblem {
  code: string;
  message: string;
  fix: string;
}

/** A page's og:title, og:description, og:image and og:type. */
export interface OpenGraph {
  title: string;
  description: string;
  image: string;
  type: string;
}

/** The result of checkMeta. */
export interface MetaReport {
  title: string;
  description: string;
  canonical: string;
  lang: string;
  robots: string;
  noindex: boolean;
  nosnippet: boolean;
  og: OpenGraph;
  problems: PageProblem[];
}

/** Splits s at runs of HTML whitespace, dropping empty fields. */
function splitHTMLSpace(s: string): string[] {
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i <= s.length; i++) {
    const sp = i === s.length || isHTMLSpaceCode(s.charCodeAt(i));
    if (sp) {
      if (start >= 0) out.push(s.slice(start, i));
      start = -1;
    } else if (start < 0) {
      start = i;
    }
  }
  return out;
}

/**
 * Reads a page's title, meta description, canonical link, html lang, robots
 * directives and Open Graph tags, and lists their problems. pageURL, when it
 * is an absolute http(s) URL, is compared with the canonical URL.
 */
export function checkMeta(html: string, pageURL = ""): MetaReport {
  const r: MetaReport = {
    title: "",
    description: "",
    canonical: "",
    lang: "",
    robots: "",
    noindex: false,
    nosnippet: false,
    og: { title: "", description: "", image: "", type: "" },
    problems: [],
  };
  let haveTitle = false;
  let haveDesc = false;
  let haveLang = false;
  const canonicals: string[] = [];
  const robots: string[] = [];
  const og = new Map<string, string>();
  let svg = 0;
  const toks = scanHTML(html);
  toks.forEach((t, k) => {
    if (t.kind === HtmlTokenKind.StartTag) {
      switch (t.name) {
        case "svg":
          svg++;
          break;
        case "html":
          if (!haveLang) {
            haveLang = true;
            r.lang = trimASCII(tokenAttr(t, "lang") ?? "");
          }
          break;
        case "title":
          if (!haveTitle && svg === 0 && k + 1 < toks.length && toks[k + 1].kind === HtmlTokenKind.RawText) {
            haveTitle = true;
            const raw = toks[k + 1];
            r.title = collapseSpace(decodeEntities(html.slice(raw.contentStart, raw.contentEnd)));
          }
          break;
        case "link": {
          // A canonical link without an href (or with an empty one) is ignored.
          const rel = tokenAttr(t, "rel") ?? "";
          const href = trimASCII(tokenAttr(t, "href") ?? "");
          if (href !== "" && splitHTMLSpace(asciiLower(rel)).includes("canonical")) canonicals.push(href);
          break;
        }
        case "meta": {
          const name = asciiLower(trimASCII(tokenAttr(t, "name") ?? ""));
          const content = collapseSpace(tokenAttr(t, "content") ?? "");
          switch (name) {
            case "description":
              if (!haveDesc) {
                haveDesc = true;
                r.description = content;
              }
              break;
            case "robots":
            case "googlebot":
              if (content !== "") robots.push(content);
              break;
          }
          let prop = tokenAttr(t, "property");
          if (prop === undefined) prop = name;
          prop = asciiLower(trimASCII(prop));
          if (prop.startsWith("og:") && !og.has(prop)) og.set(prop, content);
          break;
        }
      }
    } else if (t.kind === HtmlTokenKind.EndTag) {
      if (t.name === "svg" && svg > 0) svg--;
    }
  });
  r.og = {
    title: og.get("og:title") ?? "",
    description: og.get("og:description") ?? "",
    image: trimASCII(og.get("og:image") ?? ""),
    type: og.get("og:type") ?? "",
  };
  r.robots = robots.join(", ");
  for (const d of asciiLower(r.robots).split(",")) {
    switch (d.replace(/ /g, "")) {
      case "noindex":
      case "none":
        r.noindex = true;
        break;
      case "nosnippet":
      case "max-snippet:0":
        r.nosnippet = true;
        break;
    }
  }
  if (canonicals.length > 0) r.canonical = canonicals[0];
  r.problems = metaProblems(r, canonicals, pageURL);
  return r;
}

function metaProblems(r: MetaReport, canonicals: string[], pageURL: string): PageProblem[] {
  const ps: PageProblem[] = [];
  const add = (code: string, message: string, fix: string): void => {
    ps.push({ code, message, fix });
  };
  const tl = runeCount(r.title);
  if (tl === 0) {
    add("missing_title", "The page has no <title>.",
      "Add a <title> of 10 to 60 characters that names the page topic and the business.");
  } else if (tl < TITLE_MIN) {
    add("title_too_short", `The title is ${tl} characters; use at least 10.`,
      "Write a descriptive title of 10 to 60 characters.");
  } else if (tl > TITLE_MAX) {
    add("title_too_long", `The title is ${tl} characters; titles are cut after about 60.`,
      "Shorten the title to at most 60 characters, most important words first.");
  }
  const dl = runeCount(r.description);
  if (dl === 0) {
    add("missing_description", "The page has no meta description.",
      'Add <meta name="description" content="..."> with a 50 to 160 character summary of the page.');
  } else if (dl < DESCRIPTION_MIN) {
    add("description_too_short", `The meta description is ${dl} characters; use at least 50.`,
      "Write a 50 to 160 character summary that answers what the page offers.");
  } else if (dl > DESCRIPTION_MAX) {
    add("description_too_long", `The meta description is ${dl} characters; descriptions are cut after about 160.`,
      "Shorten the meta description to at most 160 characters.");
  }
  if (r.canonical === "") {
    add("missing_canonical", "The page has no canonical link.",
      `Add <link rel="canonical" href="https://..."> with the page's preferred absolute URL.`);
  } else if (!isAbsoluteURL(r.canonical)) {
    add("relative_canonical", `The canonical URL "${r.canonical}" is not an absolute http(s) URL.`,
      "Use an absolute canonical URL with https:// and the host.");
  } else if (isAbsoluteURL(pageURL) && normalizeURL(r.canonical) !== normalizeURL(pageURL)) {
    add("canonical_mismatch", `The canonical URL "${r.canonical}" points to another URL than the page ("${pageURL}").`,
      "Point the canonical link at this page's own URL unless the page is a deliberate duplicate.");
  }
  const distinct = new Set(canonicals);
  if (distinct.size > 1) {
    add("multiple_canonical", `The page declares ${distinct.size} different canonical URLs.`,
      'Keep exactly one <link rel="canonical">.');
  }
  if (r.noindex) {
    add("noindex", "The robots meta directives include noindex, so search engines and AI answers drop the page.",
      'Remove noindex (and none) from <meta name="robots"> and <meta name="googlebot"> if the page should be found.');
  }
  if (r.nosnippet) {
    add("nosnippet",
      "The robots meta directives include nosnippet or max-snippet:0, so no text of the page can be quoted in answers.",
      "Remove nosnippet and max-snippet:0 unless quoting must be prevented.");
  }
  if (r.lang === "") {
    add("missing_lang", "The <html> element has no lang attribute.", 'Declare the page language, for example <html lang="en">.');
  }
  const missing: string[] = [];
  for (const [k, v] of [["og:title", r.og.title], ["og:description", r.og.description], ["og:image", r.og.image]]) {
    if (v === "") missing.push(k);
  }
  if (missing.length > 0) {
    add("missing_og", "Open Graph tags are missing: " + missing.join(", ") + ".",
      'Add <meta property="og:title">, <meta property="og:description"> and <meta property="og:image"> tags.');
  }
  if (r.og.image !== "" && !isAbsoluteURL(r.og.image)) {
    add("relative_og_image", `og:image "${r.og.image}" is not an absolute http(s) URL.`,
      "Use an absolute image URL with https:// and the host.");
  }
  return ps;
}

/**
 * Lowers the scheme and host, drops the default port and the fragment, and
 * makes an empty path "/".
 */
function normalizeURL(u: string): string {
  const m = RE_URL_PARTS.exec(u);
  if (!m) return u;
  const scheme = asciiLower(m[1]);
  let host = asciiLower(m[2]);
  if ((scheme === "http" && host.endsWith(":80")) || (scheme === "https" && host.endsWith(":443"))) {
    host = host.slice(0, host.lastIndexOf(":"));
  }
  const path = m[3] || "/";
  return scheme + "://" + host + path + (m[4] ?? "");
}

// ---------------------------------------------------------------------------
// Alt texts (alt.go)

const GENERIC_ALT_WORDS = [
  "alt", "alt image", "alt tag", "alt text", "avatar", "background", "banner", "bg",
  "blank", "click here", "default", "description", "dummy", "featured image", "figure",
  "graphic", "header image", "hero", "hero image", "icon", "image", "image alt",
  "image description", "images", "img", "insert alt text", "logo", "my image", "n a",
  "none", "null", "photo", "photograph", "photos", "pic", "picture", "pictures",
  "placeholder", "sample", "screenshot", "spacer", "stock photo", "tbd", "test",
  "thumb", "thumbnail", "todo", "undefined", "untitled",
];

const DROPPED_ALT_TOKENS = [
  "a", "an", "the", "of",
  "jpg", "jpeg", "png", "gif", "webp", "svg", "avif", "bmp", "tif", "tiff", "heic",
];

const RE_CAMERA_TOKEN = /^(?:img|dsc|dscn|dscf|pxl|mvimg|gopr|dji|pict|wp|wa|screenshot)[0-9]+$/;
const RE_CAMERA_PREFIX = /^(?:img|dsc|dscn|dscf|pxl|mvimg|gopr|dji|pict|wp|wa|screenshot)$/;
const RE_DIGITS_TOKEN = /^[0-9]+$/;
const RE_FILE_NAME = /^[^ /]+\.(?:jpe?g|png|gif|webp|svg|avif|bmp|tiff?|heic|ico)$/;
/** A Unicode letter (Go unicode.IsLetter: categories Lu, Ll, Lt, Lm, Lo). */
const RE_LETTER = /\p{L}/u;

/** Lowers ASCII letters, turns all but a-z and 0-9 into spaces, collapses and trims. */
function normAlnum(s: string): string {
  return asciiLower(s)
    .replace(/[^a-z0-9]/g, " ")
    .split(" ")
    .filter((f) => f !== "")
    .join(" ");
}

/**
 * Whether an image's alt text describes it. alt null means the attribute is
 * missing; src (may be "") is the image URL. See Go MeaningfulAlt for the
 * rules, applied in the same order.
 */
export function meaningfulAlt(alt: string | null, src = ""): boolean {
  if (alt === null) return false;
  const t = collapseSpace(alt);
  if (t === "" || runeCount(t) < 2) return false;
  if (!RE_LETTER.test(t)) return false;
  const lt = asciiLower(t);
  for (const p of ["http://", "https://", "www.", "data:"]) if (lt.startsWith(p)) return false;
  if (RE_FILE_NAME.test(lt)) return false;
  const n = normAlnum(t);
  if (src !== "") {
    let file = src;
    const q = file.search(/[?#]/);
    if (q >= 0) file = file.slice(0, q);
    file = file.slice(file.lastIndexOf("/") + 1);
    let stem = file;
    const dot = stem.lastIndexOf(".");
    if (dot >= 0) stem = stem.slice(0, dot);
    if (lt === asciiLower(file) || (n !== "" && n === normAlnum(stem))) return false;
  }
  if (n !== "") {
    // A camera token is a camera prefix followed by digits ("dsc01234"), or a
    // camera prefix alone when the next token is digit-only ("dsc 0042").
    const toks = n.split(" ");
    const kept = toks.filter((tok, i) => {
      const camera =
        RE_CAMERA_TOKEN.test(tok) || (RE_CAMERA_PREFIX.test(tok) && i + 1 < toks.length && RE_DIGITS_TOKEN.test(toks[i + 1]));
      return !(camera || RE_DIGITS_TOKEN.test(tok) || DROPPED_ALT_TOKENS.includes(tok));
    });
    if (kept.length === 0 || GENERIC_ALT_WORDS.includes(kept.join(" "))) return false;
  }
  if (findPlaceholder(t) !== undefined) return false;
  return true;
}

// ---------------------------------------------------------------------------
// llms.txt (llmstxt.go)

/** The result of checkLLMsTxt. */
export interface LLMsTxtReport {
  found: boolean;
  ok: boolean;
  is_html: boolean;
  title: string;
  summary: string;
  links: number;
  sections: number;
  problems: PageProblem[];
}

const RE_LLMS_TITLE = /^#[ \t]+[^ \t]/;
const RE_LLMS_SECTION = /^##[ \t]+[^ \t]/;
const RE_LLMS_LINK = /^[ \t]*[-*+][ \t]+\[[^\]]+\]\([^ \t)]+\)/;

const FIX_ADD_LLMS_TXT =
  'Publish a Markdown file at /llms.txt: a first line "# Site name", then a "> one or two sentence summary" line, then "## " sections listing links as "- [Page title](https://...): what it covers", served as text/plain or text/markdown.';

/**
 * Checks a fetched /llms.txt against the llms.txt proposal (llmstxt.org): an
 * H1 title line first, a blockquote summary right after it, then optional
 * text and "## " sections of Markdown link lists.
 */
export function checkLLMsTxt(status: number, contentType = "", body = ""): LLMsTxtReport {
  const r: LLMsTxtReport = {
    found: false,
    ok: false,
    is_html: false,
    title: "",
    summary: "",
    links: 0,
    sections: 0,
    problems: [],
  };
  const add = (code: string, message: string, fix: string): void => {
    r.problems.push({ code, message, fix });
  };
  if (status === 404 || status === 410) {
    add("not_found", `There is no /llms.txt (HTTP ${status}).`, FIX_ADD_LLMS_TXT);
    return r;
  }
  if (status < 200 || status > 299) {
    add("bad_status", `Fetching /llms.txt gave HTTP status ${status}.`, "Make /llms.txt answer 200 with the Markdown file.");
    return r;
  }
  r.found = true;
  let ct = contentType;
  const semi = ct.indexOf(";");
  if (semi >= 0) ct = ct.slice(0, semi);
  ct = asciiLower(trimASCII(ct));
  if (body.startsWith("\ufeff")) body = body.slice(1);
  const lead = asciiLower(trimLeftChars(body, " \t\n\f\r"));
  if (ct === "text/html" || ct === "application/xhtml+xml" || lead.startsWith("<!doctype") || lead.startsWith("<html")) {
    r.is_html = true;
    add("served_html", "An HTML page is served in place of /llms.txt (often a soft 404 or a single-page-app fallback).",
      "Serve a real Markdown file at /llms.txt with Content-Type text/plain or text/markdown.");
    return r;
  }
  body = body.replace(/\r\n/g, "\n").replace(/\r/g, "\n");
  if (trimASCII(body) === "") {
    add("empty", "The llms.txt file is empty.", FIX_ADD_LLMS_TXT);
    return r;
  }
  if (ct !== "" && ct !== "text/plain" && ct !== "text/markdown" && ct !== "text/x-markdown") {
    add("unexpected_content_type", `llms.txt is served as "${ct}"; expected text/plain or text/markdown.`,
      "Serve /llms.txt with Content-Type text/plain; charset=utf-8 or text/markdown.");
  }
  const lines = body.split("\n");
  const blank = (s: string): boolean => trimChars(s, " \t") === "";
  let i = 0;
  while (i < lines.length && blank(lines[i])) i++;
  if (i < lines.length && RE_LLMS_TITLE.test(lines[i])) {
    r.title = trimChars(lines[i].slice(1), " \t");
    i++;
    while (i < lines.length && blank(lines[i])) i++;
  }
  const quote: string[] = [];
  for (; i < lines.length && lines[i].startsWith(">"); i++) {
    let l = lines[i].slice(1);
    if (l.startsWith(" ")) l = l.slice(1);
    quote.push(l);
  }
  r.summary = collapseSpace(quote.join(" "));
  for (const l of lines) {
    if (RE_LLMS_SECTION.test(l)) r.sections++;
    if (RE_LLMS_LINK.test(l)) r.links++;
  }
  if (r.title === "") {
    add("missing_title", 'The first line is not a "# Title" heading.', 'Start the file with "# " and the site or project name.');
  }
  if (r.summary === "") {
    add("missing_summary", 'No "> summary" blockquote follows the title.',
      'Add a line starting with "> " right after the title that sums up the site in one or two sentences.');
  }
  if (r.links === 0) {
    add("no_links", "The file lists no links.",
      'Add "## " sections with list items such as "- [Services](https://www.example.com/services.md): what they cover".');
  }
  r.ok = r.problems.length === 0;
  return r;
}
