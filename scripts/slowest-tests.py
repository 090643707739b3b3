#!/usr/bin/env python3
"""Prints the slowest tests of a `swift test` log with their durations, so that the suite's time
stays in view (`make test` calls it at the end, pass or fail).

    scripts/slowest-tests.py LOG [COUNT]

Reads Swift Testing's closing line of each test ("✔ Test name() passed after 1.234 seconds.",
"✘ Test "display name" with 3 test cases failed after ..."), and XCTest's ("Test Case '-[M.C t]'
passed (1.234 seconds)."). Suites are not tests and are left out. A log with no such line says so
and exits 0: the test run's own status is what counts. The runner's own closing lines ("Test run
with N tests ... passed after ...", XCTest's "Executed N tests") are printed again after the list,
so that the output still ends as the runner's does.
"""

import re
import sys

SWIFT_TESTING = re.compile(
    r"^\S*\s*Test (?P<name>.+?)(?: with \d+ test cases?)? (?P<outcome>passed|failed) after "
    r"(?P<seconds>[0-9.]+) seconds"
)
CLOSING = re.compile(r"^\S*\s*(Test run with \d+ tests?|Executed \d+ tests?)")
XCTEST = re.compile(r"^Test Case '(?P<name>[^']+)' (?P<outcome>passed|failed) \((?P<seconds>[0-9.]+) seconds\)")
# Colour codes, should a terminal's output be read.
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def durations(lines):
    """Each test's (seconds, name, outcome), and the runner's closing lines."""
    found = []
    closing = []
    for line in lines:
        line = ANSI.sub("", line.rstrip("\n"))
        if CLOSING.match(line):
            closing.append(line)
            continue
        match = SWIFT_TESTING.match(line) or XCTEST.match(line)
        if match:
            found.append((float(match["seconds"]), match["name"], match["outcome"]))
    return found, closing


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    count = int(sys.argv[2]) if len(sys.argv) == 3 else 20
    with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
        found, closing = durations(log)
    if not found:
        print("slowest tests: no test's duration in " + sys.argv[1])
        return 0
    found.sort(key=lambda item: -item[0])
    total = len(found)
    print(
        f"Slowest {min(count, total)} of {total} tests, as Swift Testing times them in parallel: from when a test"
        " was scheduled (nearly all at the start) to its end, so waiting for the pool's threads is included"
    )
    for seconds, name, outcome in found[:count]:
        mark = "" if outcome == "passed" else "  (failed)"
        print(f"{seconds:9.1f} s  {name}{mark}")
    for line in closing:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
