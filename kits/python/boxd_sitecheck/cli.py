"""Runs one kit function over a fixture file and prints the outputs as a
JSON array (one entry per case, {"error": message} where it raised), so the
Go test can compare the three implementations case by case.

    python3 -m boxd_sitecheck.cli ../../testdata/sitecheck/robots_access.json robotsAccess
    python3 -m boxd_sitecheck.cli ../../testdata/sitecheck/kit_errors.json -
"""

import json
import sys

from . import KIT_FUNCTIONS


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: python3 -m boxd_sitecheck.cli FIXTURE.json FUNCTION\n")
        return 2
    path, name = argv
    if name != "-" and name not in KIT_FUNCTIONS:
        sys.stderr.write("unknown kit function %s\n" % name)
        return 2
    with open(path, encoding="utf-8") as f:
        cases = json.load(f)
    out = []
    for case in cases:
        # FUNCTION "-" takes each case's "fn".
        fn = KIT_FUNCTIONS.get(case.get("fn", "") if name == "-" else name)
        if fn is None:
            sys.stderr.write("unknown kit function %s\n" % case.get("fn"))
            return 2
        try:
            out.append(fn(case["input"]))
        except Exception as e:  # the error is the result being compared
            out.append({"error": str(e)})
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
