#!/usr/bin/env python3
"""Prints the slowest tests of a `swift test` run with their durations, so that the suite's time
stays in view (`make test` calls it at the end, pass or fail).

    scripts/slowest-tests.py LOG [TIMES] [COUNT]

TIMES is the file the tests' `.timed` trait writes (Tests/ScanTestTiming, `SCANTRACK_TEST_TIMES`):
one line a test case, "seconds<TAB>id<TAB>name", timed from when the case's body started to its
end; a test's figure is the sum of its cases. Those are the figures listed. Swift Testing's own "passed after N seconds" in LOG counts from when
a test was scheduled, and nearly every test is scheduled at once, so those say when a test
finished rather than how long it ran; they are used only when TIMES is missing or empty, and the
heading says so. LOG also gives each test's outcome ("✘ Test name() failed after ...") and the
runner's closing lines ("Test run with N tests ... passed after ...", XCTest's "Executed N
tests"), printed again after the list so that the output still ends as the runner's does. A run
with no figures at all says so and exits 0: the test run's own status is what counts.
"""

import os
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


def read_log(lines):
    """Each test's (seconds, name, outcome) as the log has it, and the runner's closing lines."""
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


def read_times(path):
    """Each timed test's (seconds, name): the sum of its cases' lines."""
    totals = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as times:
            for line in times:
                fields = line.rstrip("\n").split("\t")
                if len(fields) != 3:
                    continue
                try:
                    seconds = float(fields[0])
                except ValueError:
                    continue
                test_id, name = fields[1], fields[2]
                total = totals.get(test_id, (0.0, name))[0]
                totals[test_id] = (total + seconds, name)
    except FileNotFoundError:
        return []
    return list(totals.values())


def main():
    arguments = sys.argv[1:]
    if not 1 <= len(arguments) <= 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    count = 20
    if arguments[-1].isdigit() and len(arguments) > 1:
        count = int(arguments.pop())
    log_path = arguments[0]
    times_path = arguments[1] if len(arguments) > 1 else None
    with open(log_path, encoding="utf-8", errors="replace") as log:
        logged, closing = read_log(log)
    failed = {name for _, name, outcome in logged if outcome == "failed"}
    timed = read_times(times_path) if times_path and os.path.exists(times_path) else []
    if timed:
        rows = [(seconds, name, "failed" if name in failed else "passed") for seconds, name in timed]
        heading = (
            "each its body's own run (the .timed trait; a parameterised test's cases added up), in parallel with"
            " the others"
        )
    else:
        rows = logged
        heading = (
            "as Swift Testing times them in parallel: from when a test was scheduled (nearly all at the"
            " start) to its end, so waiting for the pool's threads is included"
        )
    if not rows:
        print("slowest tests: no test's duration in " + log_path)
        for line in closing:
            print(line)
        return 0
    rows.sort(key=lambda item: -item[0])
    print(f"Slowest {min(count, len(rows))} of {len(rows)} tests, {heading}:")
    for seconds, name, outcome in rows[:count]:
        mark = "" if outcome == "passed" else "  (failed)"
        shown = name if len(name) <= 110 else name[:109] + "…"
        print(f"{seconds:9.1f} s  {shown}{mark}")
    for line in closing:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
