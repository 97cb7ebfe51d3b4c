import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import {
  AI_CRAWLERS,
  MAX_ROBOTS_BYTES,
  checkRobots,
  lookupCrawler,
  normalizeRobotsPath,
  parseRobots,
  robotsAccess,
  robotsFetchResult,
  robotsFromStatus,
} from "../src/robots.js";

// Compiled tests live in kits/ts/dist/test/.
const FIXTURE = new URL("../../../../testdata/sitecheck/robots_access.json", import.meta.url);

interface FixtureCase {
  name: string;
  input: unknown;
  want: unknown;
}

test("shared fixture robots_access.json", async (t) => {
  const cases = JSON.parse(readFileSync(FIXTURE, "utf8")) as FixtureCase[];
  assert.ok(cases.length >= 170, `fixture has ${cases.length} cases, want at least 170`);
  const seen = new Set<string>();
  for (const c of cases) {
    assert.ok(c.name !== "" && !seen.has(c.name), `fixture case name ${JSON.stringify(c.name)} is empty or repeated`);
    seen.add(c.name);
    await t.test(c.name, () => {
      const got: unknown = robotsAccess(c.input);
      // Compare what JSON would carry, as the Go test does.
      assert.deepEqual(JSON.parse(JSON.stringify(got)), c.want, `fixture case ${c.name}`);
      assert.deepEqual(got, c.want, `fixture case ${c.name} (no undefined fields)`);
    });
  }
});

test("report keys come in the Go JSON order", () => {
  const rep = robotsAccess({ robots_txt: "User-agent: *\nDisallow: /x\n", status: 200, crawlers: ["GPTBot"], paths: ["/x"] });
  assert.deepEqual(Object.keys(rep), ["fetch", "crawlers"]);
  assert.deepEqual(Object.keys(rep.crawlers[0]), ["crawler", "owner", "purpose", "paths", "all_allowed", "all_blocked"]);
  assert.deepEqual(Object.keys(rep.crawlers[0].paths[0]), ["path", "allowed", "rule"]);
});

test("normalisation works octet by octet on UTF-8", () => {
  const table: [string, string][] = [
    ["", ""],
    ["/", "/"],
    ["/%62%61%7A", "/baz"],
    ["/%7e%7E%2d%2E", "/~~-."],
    ["/%5f%30%39", "/_09"],
    ["/%2f%2F", "/%2F%2F"],
    ["/%3a%3F%3d", "/%3A%3F%3D"],
    ["/%e3%83%84", "/%E3%83%84"],
    ["/\u30c4", "/%E3%83%84"],
    ["/\u00e9", "/%C3%A9"],
    ["/\u{1F600}", "/%F0%9F%98%80"],
    ["/a*b$c", "/a%2Ab%24c"],
    ["/%2a%24", "/%2A%24"],
    ["/100%", "/100%"],
    ["/100%2", "/100%2"],
    ["/%zz%g1", "/%zz%g1"],
    ["/%2541", "/%2541"],
    ['/a b"<>{}|\\^', '/a b"<>{}|\\^'],
    ["/%20", "/%20"],
    ["/?q=%41&r=%2B", "/?q=A&r=%2B"],
    ["/\ud800", "/%EF%BF%BD"], // a lone surrogate is U+FFFD, as in a JSON-decoded Go string
  ];
  for (const [input, want] of table) {
    assert.equal(normalizeRobotsPath(input), want, `normalize(${JSON.stringify(input)})`);
  }
  assert.equal(normalizeRobotsPath(Uint8Array.of(0xff, 0x80)), "%FF%80");
});

test("rule lengths count normalised octets", () => {
  // A longer pattern beats a shorter one; equal lengths go to allow. Each
  // pattern below is pitted against "Allow:" rules of length n-1 and n.
  const cases: [string, number, string][] = [
    ["/\u00fc", 7, "/%C3%BC"], // "/%C3%BC"
    ["/%61%62", 3, "/ab"],
    ["/%2f", 4, "/%2F"],
    ["/a$b", 6, "/a$b"],
    ["/a**b", 5, "/axb"],
    ["/%E3%83%84", 10, "/\u30c4"],
  ];
  for (const [pattern, n, path] of cases) {
    const shorter = "/" + "*".repeat(n - 2); // length n-1, matches every path
    const equal = "/" + "*".repeat(n - 1); // length n
    const a = checkRobots(parseRobots(`User-agent: *\nDisallow: ${pattern}\nAllow: ${shorter}\n`), "x", path);
    assert.deepEqual(a, { allowed: false, rule: "disallow: " + pattern }, `${pattern} vs length ${n - 1}`);
    const b = checkRobots(parseRobots(`User-agent: *\nDisallow: ${pattern}\nAllow: ${equal}\n`), "x", path);
    assert.deepEqual(b, { allowed: true, rule: "allow: " + equal }, `${pattern} vs length ${n}`);
  }
});

test("rule text keeps the pattern as written", () => {
  const r = parseRobots("User-agent: *\n\tDISSALLOW :   /a%7e b$  \t# c\n");
  assert.deepEqual(checkRobots(r, "x", "/a~ b"), { allowed: false, rule: "disallow: /a%7e b$" });
  // Non-ASCII and a BOM inside a pattern are reported as written.
  const u = parseRobots("User-agent: *\nDisallow: /\ufeffcaf\u00e9\n");
  assert.deepEqual(checkRobots(u, "x", "/\ufeffcaf\u00e9/x"), { allowed: false, rule: "disallow: /\ufeffcaf\u00e9" });
  // Invalid UTF-8 in a byte body is reported one U+FFFD per bad byte, as Go's JSON encoder does.
  const body = new Uint8Array([...new TextEncoder().encode("User-agent: *\nDisallow: /a"), 0xe3, 0x83, 0x41, 0x0a]);
  assert.deepEqual(checkRobots(parseRobots(body), "x", "/a\u30c4"), { allowed: true, rule: "" });
  const d = checkRobots(parseRobots(body), "x", "/a%E3%83A");
  assert.deepEqual(d, { allowed: false, rule: "disallow: /a\ufffd\ufffdA" });
});

test("trimming is spaces and tabs only, lower-casing ASCII only", () => {
  // A non-breaking space before the key makes it an unknown key.
  assert.equal(checkRobots(parseRobots("User-agent: *\n\u00a0Disallow: /\n"), "x", "/").allowed, true);
  // The Kelvin sign is not an ASCII "k" in a user-agent token or crawler name.
  const r = parseRobots("User-agent: \u212Abot\nDisallow: /\n\nUser-agent: kbot\nDisallow: /k\n");
  assert.deepEqual(checkRobots(r, "KBOT", "/"), { allowed: true, rule: "" });
  assert.deepEqual(checkRobots(r, "\u212Abot", "/"), { allowed: true, rule: "" });
  assert.equal(lookupCrawler("GPTBOT")?.token, "GPTBot");
  assert.equal(lookupCrawler("GPTBot/1.1"), undefined);
});

test("fetch status", () => {
  const body = "User-agent: *\nDisallow: /private\n";
  for (const [status, fetch] of [
    [200, "ok"],
    [299, "ok"],
    [404, "not_found"],
    [499, "not_found"],
    [500, "unreachable"],
    [0, "unreachable"],
    [-1, "unreachable"],
    [301, "unreachable"],
    [600, "unreachable"],
  ] as const) {
    assert.equal(robotsFetchResult(status), fetch, String(status));
    const r = robotsFromStatus(status, body);
    assert.equal(checkRobots(r, "GPTBot", "/robots.txt").allowed, true);
    assert.equal(checkRobots(r, "GPTBot", "/public").allowed, fetch !== "unreachable");
    assert.equal(checkRobots(r, "GPTBot", "/private").allowed, fetch === "not_found");
  }
  assert.deepEqual(checkRobots(null, "GPTBot", "/x"), { allowed: true, rule: "" });
});

/** prefix followed by comment lines, exactly n bytes long (prefix is ASCII). */
function padTo(prefix: string, n: number): string {
  const parts = [prefix];
  let len = prefix.length;
  while (len < n) {
    const left = n - len;
    let k = Math.min(left, 4096);
    if (left - k === 1) k--;
    assert.ok(k >= 2, "padTo: cannot fill");
    parts.push("#" + "p".repeat(k - 2) + "\n");
    len += k;
  }
  const s = parts.join("");
  assert.equal(s.length, n);
  return s;
}

test("the 512000-byte limit", async (t) => {
  assert.equal(MAX_ROBOTS_BYTES, 512000);
  const head = "User-agent: *\nDisallow: /before\n";
  const blocked = (body: string | Uint8Array, path: string): boolean =>
    !checkRobots(parseRobots(body), "GPTBot", path).allowed;

  await t.test("exactly the limit with an unterminated last line is all parsed", () => {
    const body = padTo(head, MAX_ROBOTS_BYTES - "Disallow: /last".length) + "Disallow: /last";
    assert.equal(body.length, MAX_ROBOTS_BYTES);
    assert.ok(blocked(body, "/last") && blocked(body, "/before"));
  });
  await t.test("a line cut by the limit is dropped", () => {
    const body = padTo(head, MAX_ROBOTS_BYTES - "Disallow: /la".length) + "Disallow: /last\n";
    assert.ok(!blocked(body, "/la") && !blocked(body, "/last") && blocked(body, "/before"));
  });
  await t.test("a line whose break lies past the limit counts as cut", () => {
    const body = padTo(head, MAX_ROBOTS_BYTES - "Disallow: /edge".length) + "Disallow: /edge\n";
    assert.equal(body.length, MAX_ROBOTS_BYTES + 1);
    assert.ok(!blocked(body, "/edge"));
  });
  await t.test("a line break on the last byte keeps the line", () => {
    const body = padTo(head, MAX_ROBOTS_BYTES - "Disallow: /edge\n".length) + "Disallow: /edge\nDisallow: /after\n";
    assert.ok(blocked(body, "/edge") && !blocked(body, "/after"));
  });
  await t.test("CR on the last byte and LF past it keeps the line", () => {
    const body =
      padTo(head, MAX_ROBOTS_BYTES - "Disallow: /crlf\r".length) + "Disallow: /crlf\r\nDisallow: /after\r\n";
    assert.ok(blocked(body, "/crlf") && !blocked(body, "/after"));
  });
  await t.test("the BOM counts toward the limit", () => {
    const bom = "\ufeff"; // three bytes in UTF-8
    const fits = bom + padTo(head, MAX_ROBOTS_BYTES - 3 - "Disallow: /b\n".length) + "Disallow: /b\nDisallow: /after\n";
    assert.ok(blocked(fits, "/b") && !blocked(fits, "/after") && blocked(fits, "/before"));
    const over = bom + padTo(head, MAX_ROBOTS_BYTES - "Disallow: /b\n".length) + "Disallow: /b\n";
    assert.ok(!blocked(over, "/b"));
  });
  await t.test("the limit counts UTF-8 bytes, not UTF-16 code units", () => {
    // 2-byte characters: the string is shorter than the limit, its UTF-8 is not.
    const filler = "#" + "\u00e9".repeat(1000) + "\n"; // 2002 bytes, 1002 code units
    let body = head;
    while (new TextEncoder().encode(body).length + 2002 <= MAX_ROBOTS_BYTES - 20) body += filler;
    body += "#".repeat(MAX_ROBOTS_BYTES - 20 - new TextEncoder().encode(body).length) + "\n";
    body += "Disallow: /past-the-limit\n"; // starts 19 bytes before the limit, ends past it
    assert.ok(body.length < MAX_ROBOTS_BYTES);
    assert.ok(blocked(body, "/before") && !blocked(body, "/past-the-limit"));
  });
  await t.test("rules far past the limit are ignored", () => {
    const parts = [head];
    let len = head.length;
    while (len < 3 * MAX_ROBOTS_BYTES) {
      parts.push("Disallow: /late\n");
      len += 16;
    }
    parts.push("Disallow: /very-late\n");
    const body = parts.join("");
    assert.ok(blocked(body, "/before") && blocked(body, "/late") && !blocked(body, "/very-late"));
  });
  await t.test("no line break inside the limit parses nothing", () => {
    const body = "User-agent: * Disallow: /" + "x".repeat(MAX_ROBOTS_BYTES) + "\nUser-agent: *\nDisallow: /\n";
    assert.ok(!blocked(body, "/"));
  });
});

test("input errors carry the Go kit adapter's messages", () => {
  const want = "robotsAccess: bad input: ";
  const required =
    'robotsAccess: bad input: "status" is required (the HTTP status of the robots.txt fetch, 0 when no answer came)';
  const cases: [unknown, string][] = [
    [undefined, want + "the input is not valid JSON: EOF"],
    [null, required],
    [{}, required],
    [{ status: null }, required],
    [{ robots_txt: "" }, required],
    [{ status: 200, Status: null }, required],
    [["x"], want + "the input must be a JSON object with the fields robots_txt, status, crawlers, paths"],
    ["x", want + "the input must be a JSON object with the fields robots_txt, status, crawlers, paths"],
    [{ robots_txt: "", status: 200, agents: ["x"] }, want + 'unknown field "agents"; the allowed fields are robots_txt, status, crawlers, paths'],
    [{ "a\u00a0b\u0001\"": 1 }, want + 'unknown field "a\\u00a0b\\x01\\""; the allowed fields are robots_txt, status, crawlers, paths'],
    [{ status: "200" }, want + '"status" must be an integer, not a JSON string'],
    [{ STATUS: true }, want + '"status" must be an integer, not a JSON boolean'],
    [{ status: 200.5 }, want + '"status" must be an integer, not a number with a fraction or exponent'],
    [{ status: {} }, want + '"status" must be an integer, not a JSON object'],
    [{ robots_txt: 5, status: 200 }, want + '"robots_txt" must be a string, not a JSON number'],
    [{ status: 200, crawlers: "x" }, want + '"crawlers" must be a list of strings, not a JSON string'],
    [{ status: 200, crawlers: [1] }, want + '"crawlers" must be a list of strings, not a JSON number'],
    [{ status: 200, paths: [true, "/"] }, want + '"paths" must be a list of strings, not a JSON boolean'],
    // The first error in key order is reported.
    [{ status: "x", zz: 1 }, want + '"status" must be an integer, not a JSON string'],
    [{ zz: 1, status: "x" }, want + 'unknown field "zz"; the allowed fields are robots_txt, status, crawlers, paths'],
  ];
  for (const [input, message] of cases) {
    assert.throws(() => robotsAccess(input), { message }, JSON.stringify(input) ?? "undefined");
  }
});

test("input decoding follows Go's encoding/json", () => {
  // Keys match case-insensitively; null list elements are empty strings.
  const rep = robotsAccess({ STATUS: 200, Crawlers: [null], paths: [null] });
  assert.deepEqual(rep, {
    fetch: "ok",
    crawlers: [
      {
        crawler: "",
        owner: "",
        purpose: "",
        paths: [{ path: "", allowed: true, rule: "" }],
        all_allowed: true,
        all_blocked: false,
      },
    ],
  });
  // A lone surrogate is echoed as U+FFFD, as Go decodes it.
  const s = robotsAccess({ status: 404, crawlers: ["GPTBot"], paths: ["/\ud800"] });
  assert.equal(s.crawlers[0].paths[0].path, "/\ufffd");
  // Absent, null and empty lists take the defaults; slices are never null.
  for (const input of [{ status: 0 }, { status: 0, crawlers: null, paths: [] }]) {
    const r = robotsAccess(input);
    assert.deepEqual(
      r.crawlers.map((c) => c.crawler),
      AI_CRAWLERS.map((c) => c.token),
    );
    for (const c of r.crawlers) assert.deepEqual(c.paths, [{ path: "/", allowed: false, rule: "" }]);
  }
});
