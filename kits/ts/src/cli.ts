// Runs one kit function over a fixture file and prints the outputs as a
// JSON array (one entry per case, {"error": message} where it threw), so
// the Go test can compare the three implementations case by case.
//
//   node dist/src/cli.js ../../testdata/sitecheck/robots_access.json robotsAccess
//   node dist/src/cli.js ../../testdata/sitecheck/kit_errors.json -
import { readFileSync } from "node:fs";
import { kitFunctions } from "./index.js";

const [file, name] = process.argv.slice(2);
if (!file || !name) {
  process.stderr.write("usage: cli.js FIXTURE.json FUNCTION\n");
  process.exit(2);
}
// FUNCTION "-" takes each case's "fn".
const lookup = (n: string) => {
  const fn = kitFunctions[n];
  if (!fn) {
    process.stderr.write(`unknown kit function ${n}\n`);
    process.exit(2);
  }
  return fn;
};
if (name !== "-") lookup(name);
const cases = JSON.parse(readFileSync(file, "utf8")) as { name: string; fn?: string; input: unknown }[];
const out = cases.map((c) => {
  const fn = lookup(name === "-" ? (c.fn ?? "") : name);
  try {
    return fn(c.input);
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
});
process.stdout.write(JSON.stringify(out) + "\n");
