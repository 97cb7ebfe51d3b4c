#!/usr/bin/env python3
"""Writes testdata/sitecheck/robots_access.json (the shared robotsAccess fixture).

Run from anywhere: python3 pipelines/sitecheck/robots/testdata/gen_fixture.py [OUT]
(OUT defaults to the shared fixture's path.)
This table is the source of the fixture; edit it here, not the JSON.

Every (allowed, rule) expectation below is written by hand from RFC 9309 and
the package's recorded decisions; nothing here runs the Go code. The script
only assembles the report envelope (fetch, owner, purpose, all_allowed,
all_blocked), which follows mechanically from the hand-written expectations.
"""
import json
import os
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "testdata", "sitecheck", "robots_access.json")

AI = [
    ("GPTBot", "OpenAI", "training"),
    ("OAI-SearchBot", "OpenAI", "search"),
    ("ChatGPT-User", "OpenAI", "user request"),
    ("ClaudeBot", "Anthropic", "training"),
    ("Claude-User", "Anthropic", "user request"),
    ("Claude-SearchBot", "Anthropic", "search"),
    ("PerplexityBot", "Perplexity", "search"),
    ("Perplexity-User", "Perplexity", "user request"),
    ("Google-Extended", "Google", "training"),
    ("Applebot-Extended", "Apple", "training"),
    ("CCBot", "Common Crawl", "training"),
    ("Bytespider", "ByteDance", "training"),
    ("meta-externalagent", "Meta", "training"),
    ("Amazonbot", "Amazon", "search"),
]
TOKENS = [t for t, _, _ in AI]


def fetch(status):
    if 200 <= status <= 299:
        return "ok"
    if 400 <= status <= 499:
        return "not_found"
    return "unreachable"


def lookup(name):
    for t, o, p in AI:
        if t.lower() == name.lower():
            return o, p
    return "", ""


cases = []
names = set()

A = (True, "")  # allowed, no rule matched


def D(rule):
    return (False, "disallow: " + rule)


def AL(rule):
    return (True, "allow: " + rule)


BLOCK = (False, "")  # blocked without a rule (unreachable)


def add(name, robots, status, crawlers, paths, expect, omit_crawlers=False, omit_paths=False, raw_input=None):
    """expect[i][j] is (allowed, rule) for crawler i, path j."""
    assert name not in names, name
    names.add(name)
    eff_crawlers = TOKENS if omit_crawlers else crawlers
    eff_paths = ["/"] if omit_paths else paths
    assert len(expect) == len(eff_crawlers), name
    out = []
    for c, row in zip(eff_crawlers, expect):
        assert len(row) == len(eff_paths), name
        owner, purpose = lookup(c)
        ps = [{"path": p, "allowed": a, "rule": r} for p, (a, r) in zip(eff_paths, row)]
        out.append({
            "crawler": c, "owner": owner, "purpose": purpose, "paths": ps,
            "all_allowed": all(a for a, _ in row),
            "all_blocked": not any(a for a, _ in row),
        })
    if raw_input is not None:
        inp = raw_input
    else:
        inp = {"robots_txt": robots, "status": status}
        if not omit_crawlers:
            inp["crawlers"] = crawlers
        if not omit_paths:
            inp["paths"] = paths
    cases.append({"name": name, "input": inp, "want": {"fetch": fetch(status), "crawlers": out}})


def one(name, robots, path, exp, crawler="GPTBot", status=200):
    add(name, robots, status, [crawler], [path], [[exp]])


def paths(name, robots, ps, exps, crawler="GPTBot", status=200):
    add(name, robots, status, [crawler], ps, [exps])


# ---------------------------------------------------------------- fetch status
DALL = "User-agent: *\nDisallow: /\n"
AALL = "User-agent: *\nAllow: /\n"
one("status/200-parses-body", DALL, "/page", D("/"))
one("status/200-empty-body-allows-everything", "", "/page", A)
one("status/204-is-2xx-and-parses-empty-body", "", "/page", A, status=204)
one("status/299-is-2xx", DALL, "/page", D("/"), status=299)
one("status/404-ignores-disallow-all-body", DALL, "/page", A, status=404)
one("status/401-allows-everything", DALL, "/page", A, status=401)
one("status/403-allows-everything", DALL, "/page", A, status=403)
one("status/410-allows-everything", DALL, "/page", A, status=410)
one("status/429-is-4xx-allows-everything", DALL, "/page", A, status=429)
one("status/499-is-4xx", DALL, "/page", A, status=499)
one("status/500-disallows-everything-despite-allow-all-body", AALL, "/page", BLOCK, status=500)
one("status/503-disallows-everything", "", "/page", BLOCK, status=503)
one("status/599-is-5xx", "", "/", BLOCK, status=599)
one("status/0-no-answer-disallows-everything", "", "/", BLOCK, status=0)
one("status/301-passed-in-counts-as-unreachable", AALL, "/", BLOCK, status=301)
one("status/100-counts-as-unreachable", "", "/", BLOCK, status=100)
one("status/600-out-of-range-counts-as-unreachable", "", "/", BLOCK, status=600)
one("status/500-robots-txt-itself-still-allowed", "", "/robots.txt", A, status=500)
one("status/404-empty-body", "", "/", A, status=404)

# ---------------------------------------------------------------- defaults
add("defaults/empty-file-every-ai-crawler-allowed-at-root", "", 200, None, None,
    [[A] for _ in TOKENS], omit_crawlers=True, omit_paths=True)
add("defaults/only-gptbot-named-and-blocked", "User-agent: GPTBot\nDisallow: /\n", 200, None, None,
    [[D("/")] if t == "GPTBot" else [A] for t in TOKENS], omit_crawlers=True, omit_paths=True)
add("defaults/star-blocks-all-but-claudebot-group",
    "User-agent: *\nDisallow: /\n\nUser-agent: ClaudeBot\nAllow: /\n", 200, None, None,
    [[AL("/")] if t == "ClaudeBot" else [D("/")] for t in TOKENS], omit_crawlers=True, omit_paths=True)
add("defaults/503-every-ai-crawler-blocked", "", 503, None, None,
    [[BLOCK] for _ in TOKENS], omit_crawlers=True, omit_paths=True)
add("defaults/paths-omitted-means-root", "User-agent: CCBot\nDisallow: /\n", 200, ["CCBot", "Bytespider"], None,
    [[D("/")], [A]], omit_paths=True)
add("defaults/crawlers-omitted-with-paths", "User-agent: *\nDisallow: /private\n", 200, None, ["/", "/private/x"],
    [[A, D("/private")] for _ in TOKENS], omit_crawlers=True)
add("defaults/empty-lists-take-defaults", "User-agent: Amazonbot\nDisallow: /\n", 200, None, None,
    [[D("/")] if t == "Amazonbot" else [A] for t in TOKENS],
    raw_input={"robots_txt": "User-agent: Amazonbot\nDisallow: /\n", "status": 200, "crawlers": [], "paths": []},
    omit_crawlers=True, omit_paths=True)
add("defaults/null-lists-take-defaults", "", 404, None, None, [[A] for _ in TOKENS],
    raw_input={"robots_txt": "", "status": 404, "crawlers": None, "paths": None},
    omit_crawlers=True, omit_paths=True)
add("defaults/robots-txt-field-omitted-is-empty-file", "", 200, ["GPTBot"], ["/"], [[A]],
    raw_input={"status": 200, "crawlers": ["GPTBot"], "paths": ["/"]})

# ---------------------------------------------------------------- report shape
add("report/mixed-paths-neither-all-allowed-nor-all-blocked",
    "User-agent: *\nDisallow: /private\n", 200, ["GPTBot"], ["/", "/private", "/public"],
    [[A, D("/private"), A]])
add("report/all-paths-blocked",
    "User-agent: *\nDisallow: /a\nDisallow: /b\n", 200, ["GPTBot"], ["/a", "/b/c"],
    [[D("/a"), D("/b")]])
add("report/unknown-crawler-has-empty-owner-and-purpose",
    "User-agent: FooBot\nDisallow: /\n", 200, ["FooBot", "GPTBot"], ["/"],
    [[D("/")], [A]])
add("report/crawler-lookup-is-case-insensitive-and-name-echoed",
    "User-agent: GPTBot\nDisallow: /\n", 200, ["gptbot"], ["/"], [[D("/")]])
add("report/duplicate-crawlers-and-paths-kept-in-order",
    "User-agent: GPTBot\nDisallow: /x\n", 200, ["GPTBot", "CCBot", "GPTBot"], ["/x", "/", "/x"],
    [[D("/x"), A, D("/x")], [A, A, A], [D("/x"), A, D("/x")]])
add("report/path-echoed-as-given-not-normalised",
    "User-agent: *\nDisallow: /baz\n", 200, ["GPTBot"], ["/%62az", "/caf\u00e9"],
    [[D("/baz"), A]])
add("report/crawler-with-version-matches-group-but-has-no-owner",
    "User-agent: GPTBot\nDisallow: /\n", 200, ["GPTBot/1.2"], ["/"], [[D("/")]])

# ---------------------------------------------------------------- groups
STAR_AND_NAMED = "User-agent: *\nDisallow: /\n\nUser-agent: GPTBot\nDisallow: /private\n"
one("group/named-group-replaces-star-group", STAR_AND_NAMED, "/public", A)
one("group/named-group-rules-apply", STAR_AND_NAMED, "/private/x", D("/private"))
one("group/star-group-applies-when-no-named-group-matches", STAR_AND_NAMED, "/public", D("/"), crawler="ClaudeBot")
one("group/named-group-excludes-longer-star-rule",
    "User-agent: *\nDisallow: /private/deep\n\nUser-agent: GPTBot\nAllow: /\n", "/private/deep", AL("/"))
paths("group/two-groups-same-agent-combined",
      "User-agent: GPTBot\nDisallow: /a\n\nUser-agent: ClaudeBot\nDisallow: /b\n\nUser-agent: GPTBot\nDisallow: /c\n",
      ["/a", "/b", "/c"], [D("/a"), A, D("/c")])
paths("group/two-star-groups-combined",
      "User-agent: *\nDisallow: /a\n\nUser-agent: ClaudeBot\nDisallow: /\n\nUser-agent: *\nDisallow: /b\n",
      ["/a", "/b", "/c"], [D("/a"), D("/b"), A])
one("group/longest-match-across-combined-groups",
    "User-agent: GPTBot\nDisallow: /shop\n\nUser-agent: GPTBot\nAllow: /shop/items\n", "/shop/items/1", AL("/shop/items"))
one("group/combined-groups-named-with-different-case",
    "User-agent: gptbot\nDisallow: /a\n\nUser-agent: GPTBOT\nDisallow: /b\n", "/b", D("/b"))
one("group/combined-named-groups-still-hide-star",
    "User-agent: GPTBot\nAllow: /x\n\nUser-agent: *\nDisallow: /\n\nUser-agent: GPTBot\nAllow: /y\n", "/z", A)
one("group/several-user-agent-lines-share-rules",
    "User-agent: ClaudeBot\nUser-agent: GPTBot\nDisallow: /x\n", "/x", D("/x"))
one("group/first-of-several-user-agent-lines-shares-rules",
    "User-agent: ClaudeBot\nUser-agent: GPTBot\nDisallow: /x\n", "/x", D("/x"), crawler="ClaudeBot")
one("group/blank-line-between-user-agent-lines-does-not-split",
    "User-agent: GPTBot\n\nUser-agent: *\nDisallow: /\n", "/page", D("/"))
one("group/comment-between-user-agent-lines-does-not-split",
    "User-agent: ClaudeBot\n# the next one too\nUser-agent: GPTBot\nDisallow: /x\n", "/x", D("/x"))
one("group/sitemap-between-user-agent-lines-does-not-split",
    "User-agent: ClaudeBot\nSitemap: https://example.com/sitemap.xml\nUser-agent: GPTBot\nDisallow: /x\n", "/x", D("/x"))
one("group/sitemap-inside-group-does-not-end-group",
    "User-agent: GPTBot\nDisallow: /a\nSitemap: https://example.com/sitemap.xml\nDisallow: /b\n", "/b", D("/b"))
one("group/crawl-delay-inside-group-does-not-end-group",
    "User-agent: GPTBot\nCrawl-delay: 10\nDisallow: /a\nCrawl-delay: 5\nDisallow: /b\n", "/b", D("/b"))
one("group/unknown-key-inside-group-does-not-end-group",
    "User-agent: GPTBot\nDisallow: /a\nNoindex: /a\nDisallow: /b\n", "/b", D("/b"))
paths("group/user-agent-after-rules-starts-new-group",
      "User-agent: GPTBot\nDisallow: /a\nUser-agent: ClaudeBot\nDisallow: /b\n", ["/a", "/b"], [D("/a"), A])
one("group/user-agent-after-rules-starts-new-group-other-side",
    "User-agent: GPTBot\nDisallow: /a\nUser-agent: ClaudeBot\nDisallow: /b\n", "/a", A, crawler="ClaudeBot")
one("group/empty-disallow-ends-user-agent-list",
    "User-agent: GPTBot\nDisallow:\nUser-agent: ClaudeBot\nDisallow: /\n", "/page", A)
one("group/named-group-without-rules-at-end-allows-and-hides-star",
    "User-agent: *\nDisallow: /\n\nUser-agent: GPTBot\n", "/page", A)
paths("group/rules-before-first-user-agent-ignored",
      "Disallow: /\nAllow: /x\n\nUser-agent: *\nDisallow: /private\n", ["/", "/private"], [A, D("/private")])
one("group/file-of-rules-without-user-agent-allows-everything", "Disallow: /\n", "/page", A)
one("group/no-named-and-no-star-group-allows-everything",
    "User-agent: ClaudeBot\nDisallow: /\n", "/page", A)
one("group/star-and-named-in-same-group-named",
    "User-agent: *\nUser-agent: GPTBot\nDisallow: /x\n\nUser-agent: ClaudeBot\nDisallow: /y\n", "/x", D("/x"))
one("group/star-and-named-in-same-group-star-fallback",
    "User-agent: *\nUser-agent: GPTBot\nDisallow: /x\n\nUser-agent: ClaudeBot\nDisallow: /y\n", "/x", D("/x"),
    crawler="CCBot")
one("group/empty-user-agent-value-group-matches-nothing",
    "User-agent:\nDisallow: /\n", "/page", A)
RFC51 = ("User-Agent: *\nDisallow: *.gif$\nDisallow: /example/\nAllow: /publications/\n\n"
         "User-Agent: foobot\nDisallow:/\nAllow:/example/page.html\nAllow:/example/allowed.gif\n\n"
         "User-Agent: barbot\nUser-Agent: bazbot\nDisallow: /example/page.html\n\n"
         "User-Agent: quxbot\n\nEOF\n")
RFC51_PATHS = ["/example/page.html", "/example/allowed.gif", "/other", "/publications/a.gif", "/a.gif", "/a.gifx"]
add("group/rfc9309-section-5.1-example", RFC51, 200, ["otherbot", "foobot", "barbot", "bazbot", "quxbot"], RFC51_PATHS, [
    # "*": /example/ (9) beats nothing else on page.html; allowed.gif: *.gif$ (6) and /example/ (9) -> /example/
    [D("/example/"), D("/example/"), A, AL("/publications/"), D("*.gif$"), A],
    [AL("/example/page.html"), AL("/example/allowed.gif"), D("/"), D("/"), D("/"), D("/")],
    [D("/example/page.html"), A, A, A, A, A],
    [D("/example/page.html"), A, A, A, A, A],
    [A, A, A, A, A, A],
])

# ---------------------------------------------------------------- user-agent matching
GB = "User-agent: {}\nDisallow: /\n"
one("ua/value-lower-case-matches", GB.format("gptbot"), "/", D("/"))
one("ua/value-upper-case-matches", GB.format("GPTBOT"), "/", D("/"))
one("ua/crawler-name-case-ignored", GB.format("GPTBot"), "/", D("/"), crawler="gPtBoT")
one("ua/value-version-suffix-matches", GB.format("GPTBot/1.1"), "/", D("/"))
one("ua/value-trailing-words-match", GB.format("GPTBot extra words"), "/", D("/"))
one("ua/value-trailing-parenthesis-matches", GB.format("GPTBot(compatible)"), "/", D("/"))
one("ua/value-trailing-digits-cut-token-so-it-matches", GB.format("GPTBot2"), "/", D("/"))
one("ua/value-trailing-colon-cuts-token", GB.format("GPTBot:1"), "/", D("/"))
one("ua/value-prefix-of-crawler-does-not-match", GB.format("GPT"), "/", A)
one("ua/value-with-hyphen-suffix-does-not-match", GB.format("GPTBot-Extra"), "/", A)
one("ua/value-with-underscore-suffix-does-not-match", GB.format("GPTBot_beta"), "/", A)
one("ua/value-containing-crawler-does-not-match", GB.format("NotGPTBot"), "/", A)
one("ua/full-browser-string-value-does-not-match",
    GB.format("Mozilla/5.0 (compatible; GPTBot/1.1; +https://openai.com/gptbot)"), "/", A)
one("ua/hyphenated-token-matches-case-insensitively", GB.format("Meta-ExternalAgent"), "/", D("/"),
    crawler="meta-externalagent")
one("ua/hyphenated-crawler-not-matched-by-its-first-word", GB.format("meta"), "/", A, crawler="meta-externalagent")
one("ua/oai-prefix-does-not-match-oai-searchbot", GB.format("OAI"), "/", A, crawler="OAI-SearchBot")
add("ua/claudebot-group-does-not-cover-claude-user-or-searchbot", GB.format("ClaudeBot"), 200,
    ["ClaudeBot", "Claude-User", "Claude-SearchBot"], ["/"], [[D("/")], [A], [A]])
one("ua/googlebot-group-does-not-cover-google-extended", GB.format("Googlebot"), "/", A, crawler="Google-Extended")
add("ua/applebot-group-does-not-cover-applebot-extended", GB.format("Applebot"), 200,
    ["Applebot", "Applebot-Extended"], ["/"], [[D("/")], [A]])
one("ua/applebot-extended-group-matches", GB.format("Applebot-Extended"), "/", D("/"), crawler="Applebot-Extended")
add("ua/perplexitybot-group-does-not-cover-perplexity-user", GB.format("PerplexityBot"), 200,
    ["PerplexityBot", "Perplexity-User"], ["/"], [[D("/")], [A]])
one("ua/star-with-trailing-comment-is-global", "User-agent: * # everyone\nDisallow: /\n", "/", D("/"))
one("ua/star-followed-by-space-and-text-is-global", "User-agent: * all robots\nDisallow: /\n", "/", D("/"))
one("ua/star-glued-to-text-is-not-global", "User-agent: *bot\nDisallow: /\n", "/", A)
one("ua/star-slash-version-is-not-global", "User-agent: */1.0\nDisallow: /\n", "/", A)
one("ua/value-surrounded-by-spaces-and-tabs", "User-agent: \t  GPTBot \t \nDisallow: /\n", "/", D("/"))
one("ua/value-after-tab", "User-agent:\tGPTBot\nDisallow: /\n", "/", D("/"))
one("ua/crawler-name-with-version-reduced-to-token", GB.format("GPTBot"), "/", D("/"), crawler="GPTBot/1.2")
one("ua/crawler-name-without-token-uses-star",
    "User-agent: 123\nDisallow: /\n\nUser-agent: *\nAllow: /\n", "/", AL("/"), crawler="123")

# ---------------------------------------------------------------- longest match and ties
G = "User-agent: GPTBot\n"
one("longest/longer-disallow-beats-allow-root", G + "Allow: /\nDisallow: /private\n", "/private/x", D("/private"))
one("longest/longer-allow-beats-disallow", G + "Disallow: /private\nAllow: /private/public\n", "/private/public/x",
    AL("/private/public"))
one("longest/file-order-does-not-matter", G + "Disallow: /private\nAllow: /\n", "/private/x", D("/private"))
one("longest/rfc9309-section-5.2-example",
    "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n",
    "/example/page/disallowed.gif", D("/example/page/disallowed.gif"), crawler="foobot")
one("longest/pattern-length-not-matched-span", G + "Disallow: /*\nAllow: /ab\n", "/abcdef", AL("/ab"))
one("longest/wildcard-counts-one-octet", G + "Allow: /a\nDisallow: /a*\n", "/ab", D("/a*"))
paths("longest/end-anchor-counts-one-octet", G + "Allow: /a\nDisallow: /a$\n", ["/a", "/ab"], [D("/a$"), AL("/a")])
one("longest/length-measured-after-decoding-unreserved", G + "Allow: /%61%62\nDisallow: /abc\n", "/abcd", D("/abc"))
one("longest/utf8-rule-length-counts-percent-encoded-octets", G + "Disallow: /%C3%BC\nAllow: /\u00fc\n", "/%C3%BC",
    AL("/\u00fc"))
one("longest/literal-dollar-in-rule-counts-three-octets", G + "Disallow: /*bcd\nAllow: /a$b\n", "/a$bcd", AL("/a$b"))
one("longest/no-rule-matches-allowed", G + "Disallow: /private\n", "/public", A)
one("longest/path-matching-is-case-sensitive", G + "Disallow: /Private\n", "/private", A)
one("longest/same-length-same-kind-first-in-file-reported", G + "Disallow: /a*\nDisallow: /ab\n", "/abc", D("/a*"))
one("longest/duplicate-rules-reported-once", G + "Disallow: /x\nDisallow: /x\n", "/x", D("/x"))
one("tie/allow-wins-equal-pattern-disallow-first", G + "Disallow: /page\nAllow: /page\n", "/page", AL("/page"))
one("tie/allow-wins-equal-pattern-allow-first", G + "Allow: /page\nDisallow: /page\n", "/page", AL("/page"))
one("tie/allow-wins-different-patterns-same-length", G + "Disallow: /a*c\nAllow: /ab*\n", "/abc", AL("/ab*"))
one("tie/disallow-star-vs-allow-root-allow-wins", G + "Disallow: *\nAllow: /\n", "/anything", AL("/"))
one("tie/percent-encoded-and-plain-rule-are-equivalent", G + "Disallow: /%62az\nAllow: /baz\n", "/baz", AL("/baz"))
one("tie/allow-wins-across-combined-groups",
    "User-agent: GPTBot\nDisallow: /x\n\nUser-agent: GPTBot\nAllow: /x\n", "/x", AL("/x"))

# ---------------------------------------------------------------- wildcards
paths("wildcard/leading-star-matches-anywhere", G + "Disallow: *private\n", ["/my/private/x", "/public"],
      [D("*private"), A])
paths("wildcard/middle-star", G + "Disallow: /a/*/c\n", ["/a/b/c", "/a/c", "/a/x/y/c", "/a/b/cd"],
      [D("/a/*/c"), A, D("/a/*/c"), D("/a/*/c")])
paths("wildcard/trailing-star-is-prefix-match", G + "Disallow: /fish*\n", ["/fish", "/fishheads", "/Fish"],
      [D("/fish*"), D("/fish*"), A])
one("wildcard/star-matches-empty-run", G + "Disallow: /a*b\n", "/ab", D("/a*b"))
paths("wildcard/two-stars-need-two-separators", G + "Disallow: /*/*/secret\n", ["/x/y/secret", "/x/secret"],
      [D("/*/*/secret"), A])
one("wildcard/consecutive-stars", G + "Disallow: /a**b\n", "/axyb", D("/a**b"))
one("wildcard/star-alone-matches-everything", G + "Disallow: *\n", "/anything", D("*"))
paths("wildcard/star-then-question-mark-blocks-queries", G + "Disallow: /*?\n", ["/page?x=1", "/page"],
      [D("/*?"), A])
one("wildcard/star-inside-query", G + "Disallow: /search?*q=\n", "/search?lang=en&q=x", D("/search?*q="))
one("wildcard/repeated-piece-needs-later-occurrence", G + "Disallow: /*aab*x\n", "/aaab-x", D("/*aab*x"))
paths("wildcard/suffix-pdf-without-anchor", G + "Disallow: *.pdf\n", ["/docs/a.pdf", "/a.pdf.bak", "/a.txt"],
      [D("*.pdf"), D("*.pdf"), A])
one("wildcard/pattern-without-slash-or-star-never-matches", G + "Disallow: private\n", "/private", A)
paths("wildcard/percent-2A-in-rule-is-a-literal-star", G + "Disallow: /file-%2A.html\n",
      ["/file-*.html", "/file-x.html", "/file-%2A.html", "/file-%2a.html"],
      [D("/file-%2A.html"), A, D("/file-%2A.html"), D("/file-%2A.html")])
one("wildcard/lower-case-percent-2a-in-rule", G + "Disallow: /a%2ab\n", "/a*b", D("/a%2ab"))
paths("wildcard/star-matches-slashes-and-non-ascii", G + "Disallow: /x*y\n", ["/x/\u00e9/y", "/x%2F%E9y"],
      [D("/x*y"), D("/x*y")])

# ---------------------------------------------------------------- end anchor
paths("dollar/anchors-end-of-path", G + "Disallow: /a$\n", ["/a", "/ab", "/a?x", "/a/"], [D("/a$"), A, A, A])
paths("dollar/gif-suffix", G + "Disallow: /*.gif$\n", ["/x.gif", "/dir/y.gif", "/x.gif?y", "/x.gifs"],
      [D("/*.gif$"), D("/*.gif$"), A, A])
paths("dollar/dollar-in-middle-is-literal", G + "Disallow: /a$b\n", ["/a$b", "/a$bc", "/ab", "/a", "/a%24b"],
      [D("/a$b"), D("/a$b"), A, A, D("/a$b")])
paths("dollar/percent-24-in-rule-matches-literal-dollar", G + "Disallow: /foo-%24\n", ["/foo-$", "/foo-%24", "/foo-"],
      [D("/foo-%24"), D("/foo-%24"), A])
one("dollar/percent-24-in-rule-is-not-an-anchor", G + "Disallow: /foo%24\n", "/foo$bar", D("/foo%24"))
paths("dollar/double-dollar-literal-then-anchor", G + "Disallow: /a$$\n", ["/a$", "/a$x", "/a"], [D("/a$$"), A, A])
one("dollar/dollar-alone-matches-nothing", G + "Disallow: $\n", "/", A)
one("dollar/star-dollar-matches-everything", G + "Disallow: /*$\n", "/anything", D("/*$"))
paths("dollar/allow-root-only", G + "Allow: /$\nDisallow: /\n", ["/", "/page"], [AL("/$"), D("/")])
paths("dollar/anchor-then-comment", G + "Disallow: /a$ # only /a\n", ["/a", "/ab"], [D("/a$"), A])

# ---------------------------------------------------------------- percent-encoding
one("pct/encoded-unreserved-path-matches-plain-rule", G + "Disallow: /baz\n", "/%62%61%7A", D("/baz"))
one("pct/encoded-unreserved-rule-matches-plain-path", G + "Disallow: /%62%61%7A\n", "/baz", D("/%62%61%7A"))
one("pct/encoded-unreserved-lower-case-hex", G + "Disallow: /%7efoo\n", "/~foo", D("/%7efoo"))
one("pct/encoded-tilde-in-path", G + "Disallow: /~user\n", "/%7Euser/x", D("/~user"))
one("pct/all-unreserved-punctuation-and-digits-decoded", G + "Disallow: /a%2D%2E%5F%7E%30\n", "/a-._~0",
    D("/a%2D%2E%5F%7E%30"))
one("pct/encoded-upper-case-letter-decoded", G + "Disallow: /%41bc\n", "/Abc", D("/%41bc"))
one("pct/decoded-letter-stays-case-sensitive", G + "Disallow: /%41bc\n", "/abc", A)
one("pct/reserved-escape-hex-case-insensitive", G + "Disallow: /a%2fb\n", "/a%2Fb", D("/a%2fb"))
one("pct/encoded-slash-rule-does-not-match-slash", G + "Disallow: /a%2Fb\n", "/a/b", A)
one("pct/encoded-slash-path-does-not-match-slash-rule", G + "Disallow: /a/b\n", "/a%2Fb", A)
one("pct/encoded-question-mark-is-not-a-query", G + "Disallow: /a?b\n", "/a%3Fb", A)
one("pct/encoded-equals-not-equal-to-equals", G + "Disallow: /a%3Db\n", "/a=b", A)
one("pct/non-ascii-rule-matches-encoded-path", G + "Disallow: /\u30c4\n", "/%E3%83%84", D("/\u30c4"))
one("pct/non-ascii-rule-matches-lower-case-encoded-path", G + "Disallow: /\u30c4\n", "/%e3%83%84", D("/\u30c4"))
one("pct/encoded-rule-matches-raw-utf8-path", G + "Disallow: /%E3%83%84\n", "/\u30c4", D("/%E3%83%84"))
one("pct/raw-utf8-rule-and-path", G + "Disallow: /caf\u00e9\n", "/caf\u00e9/menu", D("/caf\u00e9"))
one("pct/rule-ending-inside-utf8-sequence-matches-octet-prefix", G + "Disallow: /caf%C3\n", "/caf\u00e9",
    D("/caf%C3"))
paths("pct/rfc9309-figure-4-examples", G + "Disallow: /foo/bar?baz=https%3A%2F%2Ffoo.bar\nDisallow: /foo/bar/%E3%83%84\nDisallow: /foo/bar/%62%61%7A\n",
      ["/foo/bar?baz=https%3A%2F%2Ffoo.bar", "/foo/bar?baz=https://foo.bar", "/foo/bar/\u30c4", "/foo/bar/baz"],
      [D("/foo/bar?baz=https%3A%2F%2Ffoo.bar"), A, D("/foo/bar/%E3%83%84"), D("/foo/bar/%62%61%7A")])
paths("pct/percent-25-is-not-decoded", G + "Disallow: /100%25\n", ["/100%25", "/100%"], [D("/100%25"), A])
paths("pct/invalid-escape-compared-literally", G + "Disallow: /a%zz\n", ["/a%zz", "/a%ZZ"], [D("/a%zz"), A])
one("pct/truncated-escape-at-end-of-rule", G + "Disallow: /a%4\n", "/a%41", A)
paths("pct/encoded-space", G + "Disallow: /a%20b\n", ["/a%20b", "/a b"], [D("/a%20b"), A])
one("pct/escape-in-query-decoded-when-unreserved", G + "Disallow: /p?id=%41\n", "/p?id=A", D("/p?id=%41"))
one("pct/lower-and-upper-hex-non-ascii-equal", G + "Disallow: /%c3%a9\n", "/%C3%A9", D("/%c3%a9"))
one("pct/percent-2541-is-not-double-decoded", G + "Disallow: /A\n", "/%2541", A)

# ---------------------------------------------------------------- query strings
paths("query/rule-with-query-prefix", G + "Disallow: /search?q=\n", ["/search?q=cats", "/search", "/search?lang=en"],
      [D("/search?q="), A, A])
one("query/path-rule-matches-path-with-query", G + "Disallow: /page\n", "/page?x=1", D("/page"))
one("query/anchor-stops-before-query", G + "Disallow: /page$\n", "/page?x=1", A)
one("query/parameter-order-matters", G + "Disallow: /p?a=1&b=2\n", "/p?b=2&a=1", A)
one("query/longer-allow-with-query", G + "Disallow: /p\nAllow: /p?public\n", "/p?public=1", AL("/p?public"))
one("query/root-with-query", G + "Disallow: /?\n", "/?s=term", D("/?"))

# ---------------------------------------------------------------- empty rules
one("empty/disallow-empty-allows-everything", "User-agent: *\nDisallow:\n", "/page", A)
one("empty/disallow-only-spaces-is-empty", "User-agent: *\nDisallow:   \t\n", "/page", A)
one("empty/disallow-empty-does-not-cancel-other-rules", G + "Disallow:\nDisallow: /x\n", "/x", D("/x"))
one("empty/allow-empty-matches-nothing", G + "Disallow: /\nAllow:\n", "/x", D("/"))
one("empty/disallow-with-only-comment-is-empty", G + "Disallow: # nothing\n", "/page", A)

# ---------------------------------------------------------------- /robots.txt
one("robotstxt/always-allowed-under-disallow-all", DALL, "/robots.txt", A)
one("robotstxt/explicit-disallow-ignored", G + "Disallow: /robots.txt\n", "/robots.txt", A)
one("robotstxt/encoded-dot-still-robots-txt", DALL, "/robots%2Etxt", A)
one("robotstxt/with-query-not-exempt", DALL, "/robots.txt?x=1", D("/"))
one("robotstxt/upper-case-not-exempt", DALL, "/ROBOTS.TXT", D("/"))
one("robotstxt/in-subdirectory-not-exempt", DALL, "/sub/robots.txt", D("/"))

# ---------------------------------------------------------------- path given to check
one("path/empty-path-is-root", G + "Disallow: /$\n", "", D("/$"))
one("path/missing-leading-slash-is-rooted", G + "Disallow: /page\n", "page", D("/page"))
one("path/query-only-is-root-query", G + "Disallow: /?\n", "?q=1", D("/?"))
one("path/fragment-compared-as-octets", G + "Disallow: /page$\n", "/page#top", A)

# ---------------------------------------------------------------- parsing
one("parse/keys-upper-case", "USER-AGENT: GPTBot\nDISALLOW: /x\n", "/x", D("/x"))
one("parse/keys-mixed-case", "uSeR-aGeNt: GPTBot\ndIsAlLoW: /x\n", "/x", D("/x"))
one("parse/allow-key-reported-lower-case", "User-agent: GPTBot\nDisallow: /\nALLOW: /x\n", "/x", AL("/x"))
one("parse/no-space-after-colon", "User-agent:GPTBot\nDisallow:/x\n", "/x", D("/x"))
one("parse/whitespace-before-key", "   User-agent: GPTBot\n\tDisallow: /x\n", "/x", D("/x"))
one("parse/whitespace-before-colon", "User-agent  : GPTBot\nDisallow\t: /x\n", "/x", D("/x"))
one("parse/trailing-whitespace-trimmed-from-pattern", "User-agent: GPTBot\nDisallow: /x  \t\n", "/xy", D("/x"))
one("parse/inline-comment-stripped", "User-agent: GPTBot\nDisallow: /x # secret\n", "/xy", D("/x"))
one("parse/comment-glued-to-pattern-stripped", "User-agent: GPTBot\nDisallow: /x#frag\n", "/xy", D("/x"))
one("parse/full-line-comments-ignored", "# User-agent: GPTBot\n# Disallow: /\nUser-agent: GPTBot\nDisallow: /x\n", "/",
    A)
paths("parse/commented-user-agent-does-not-start-group",
      "User-agent: *\nDisallow: /a\n# User-agent: GPTBot\nDisallow: /b\n", ["/a", "/b"], [D("/a"), D("/b")])
one("parse/comment-after-user-agent-value", "User-agent: GPTBot # OpenAI\nDisallow: /\n", "/", D("/"))
one("parse/bom-at-start-ignored", "\ufeffUser-agent: GPTBot\nDisallow: /\n", "/", D("/"))
one("parse/bom-not-at-start-is-part-of-key", "User-agent: GPTBot\n\ufeffDisallow: /x\n", "/x", A)
paths("parse/crlf-line-endings", "User-agent: GPTBot\r\nDisallow: /x\r\nAllow: /x/y\r\n", ["/x", "/x/y"],
      [D("/x"), AL("/x/y")])
paths("parse/cr-only-line-endings", "User-agent: GPTBot\rDisallow: /x\rAllow: /x/y\r", ["/x", "/x/y/z"],
      [D("/x"), AL("/x/y")])
paths("parse/mixed-line-endings", "User-agent: ClaudeBot\r\nDisallow: /c\rUser-agent: GPTBot\nDisallow: /g\r\n",
      ["/c", "/g"], [A, D("/g")])
one("parse/cr-only-user-agent-lines-share-group", "User-agent: ClaudeBot\r\rUser-agent: GPTBot\rDisallow: /x", "/x",
    D("/x"))
one("parse/no-final-newline", "User-agent: GPTBot\nDisallow: /x", "/x", D("/x"))
# A line without ":" that is exactly two words is read as "key: value" (Google's
# leniency, google/robotstxt ID_LineSyntax_Line); any other such line is skipped.
paths("parse/line-without-colon-two-words-read-as-key-value", "User-agent: GPTBot\nDisallow /\nDisallow: /x\n",
      ["/", "/x"], [D("/"), D("/x")])
one("parse/user-agent-without-colon-starts-group", "User-agent GPTBot\nDisallow /private\n", "/private/a",
    D("/private"))
one("parse/star-without-colon-is-global", "User-agent *\nDisallow /\n", "/page", D("/"))
paths("parse/allow-without-colon-reported-as-allow", "User-agent: GPTBot\nDisallow: /\nALLOW /public\n",
      ["/public/a", "/x"], [AL("/public"), D("/")])
one("parse/line-without-colon-tabs-separate", "User-agent:\tGPTBot\nDisallow\t \t/x \t\n", "/x/y", D("/x"))
one("parse/line-without-colon-comment-dropped-first", "User-agent: GPTBot\nDisallow /x # keep out\n", "/x", D("/x"))
paths("parse/line-without-colon-three-words-skipped", "User-agent: GPTBot\nDisallow /a b\nDisallow: /x\n",
      ["/a", "/a b", "/x"], [A, A, D("/x")])
one("parse/line-without-colon-one-word-skipped", "User-agent: GPTBot\nDisallow\nDisallow: /x\n", "/", A)
one("parse/user-space-agent-without-colon-is-three-words-skipped", "User agent GPTBot\nDisallow: /\n", "/", A)
one("parse/line-without-colon-nbsp-is-not-a-separator", "User-agent: GPTBot\nDisallow\u00a0/\n", "/", A)
one("parse/line-without-colon-does-not-end-group",
    "User-agent: ClaudeBot\nthis line is garbage\nUser-agent: GPTBot\nDisallow: /x\n", "/x", D("/x"))
one("parse/unknown-key-ignored", "User-agent: GPTBot\nNoindex: /\nDisallow: /x\n", "/", A)
one("parse/host-line-ignored", "Host: example.com\nUser-agent: GPTBot\nHost: example.com\nDisallow: /x\n", "/x",
    D("/x"))
one("parse/misspelling-useragent-accepted", "Useragent: GPTBot\nDisallow: /\n", "/", D("/"))
one("parse/misspelling-user-space-agent-accepted", "User agent: GPTBot\nDisallow: /\n", "/", D("/"))
one("parse/misspelling-dissallow-accepted-reported-as-disallow", "User-agent: GPTBot\nDissallow: /x\n", "/x", D("/x"))
one("parse/misspelling-disalow-accepted", "User-agent: GPTBot\nDisalow: /x\n", "/x", D("/x"))
one("parse/misspelling-dissalow-accepted", "User-agent: GPTBot\nDissalow: /x\n", "/x", D("/x"))
one("parse/unaccepted-misspelling-user-underscore-agent-ignored", "User_agent: GPTBot\nDisallow: /\n", "/", A)
one("parse/unaccepted-misspelling-disallows-ignored", "User-agent: GPTBot\nDisallows: /\n", "/", A)
one("parse/unaccepted-misspelling-allows-ignored", "User-agent: GPTBot\nDisallow: /\nAllows: /x\n", "/x", D("/"))
one("parse/value-split-at-first-colon", "User-agent: GPTBot\nDisallow: /a:b\n", "/a:b/c", D("/a:b"))
one("parse/sitemap-url-with-colon-ignored",
    "User-agent: GPTBot\nSitemap: https://example.com/sitemap.xml\nDisallow: /x\n", "/", A)
one("parse/blank-lines-everywhere", "\n\n\nUser-agent: GPTBot\n\n\nDisallow: /x\n\n\n", "/x", D("/x"))
one("parse/only-comments-allows-everything", "# nothing here\n# at all\n", "/", A)
one("parse/only-whitespace-allows-everything", "  \n\t\n \r\n", "/", A)
paths("parse/space-inside-pattern-kept", "User-agent: GPTBot\nDisallow: /a b\n", ["/a b", "/a", "/a%20b"],
      [D("/a b"), A, A])
one("parse/colon-only-line-skipped", "User-agent: GPTBot\n:\nDisallow: /x\n", "/x", D("/x"))
one("parse/key-with-inner-space-not-accepted", "User-agent: GPTBot\nDis allow: /\n", "/", A)
one("parse/non-breaking-space-not-trimmed-from-key", "User-agent: GPTBot\n\u00a0Disallow: /\n", "/", A)

# ---------------------------------------------------------------- 500 KiB limit
LIMIT = 512000


def pad_to(prefix, target):
    """prefix plus comment lines so the result is exactly target bytes (UTF-8)."""
    out = prefix
    need = target - len(out.encode())
    assert need >= 2
    while need > 0:
        n = min(need, 1000)
        if need - n == 1:  # never leave 1 byte: a line needs at least "#\n"
            n -= 1
        out += "#" + "x" * (n - 2) + "\n" if n >= 2 else ""
        need = target - len(out.encode())
    assert len(out.encode()) == target
    return out


# The limit cuts "Disallow: /cut\n" after "Disallow: /c": that line is dropped,
# and so is everything after the limit.
head = "User-agent: GPTBot\nDisallow: /before\n"
body = pad_to(head, LIMIT - len("Disallow: /c")) + "Disallow: /cut\nDisallow: /after\n"
assert body.encode()[:LIMIT].endswith(b"Disallow: /c")
paths("limit/rule-before-limit-applies-cut-line-and-later-lines-ignored", body, ["/before", "/cut", "/after"],
      [D("/before"), A, A])
# "Disallow: /edge\n" ends exactly on the last byte inside the limit: kept.
body = pad_to(head, LIMIT - len("Disallow: /edge\n")) + "Disallow: /edge\nDisallow: /after\n"
assert body.encode()[:LIMIT].endswith(b"Disallow: /edge\n")
paths("limit/line-ending-on-last-byte-inside-limit-kept", body, ["/before", "/edge", "/after"],
      [D("/before"), D("/edge"), A])

with open(OUT, "w", encoding="ascii") as f:
    json.dump(cases, f, indent=1, ensure_ascii=True)
    f.write("\n")
print(len(cases), "cases written to", os.path.normpath(OUT), file=sys.stderr)
