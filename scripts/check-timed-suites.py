#!/usr/bin/env python3
"""Fails when a test suite lacks the `.timed` trait, whose times `make test` lists at its end
(Tests/ScanTestTiming): a suite without it would be missing from that list without a word.

    scripts/check-timed-suites.py [FOLDER]     (default: Tests)
"""

import pathlib
import re
import sys



def arguments(text, start):
    """The text from `start` (just after "@Suite(") to its closing parenthesis, strings skipped."""
    depth, index, in_string = 1, start, False
    while index < len(text) and depth > 0:
        character = text[index]
        if in_string:
            if character == "\\":
                index += 1
            elif character == '"':
                in_string = False
        elif character == '"':
            in_string = True
        elif character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
        index += 1
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', text[start : index - 1])


def main():
    folder = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "Tests")
    untimed = []
    for path in sorted(folder.rglob("*.swift")):
        if path.parent.name == "ScanTestTiming":
            continue
        text = path.read_text(encoding="utf-8")
        for line_number, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("@Suite") and not line.lstrip().startswith("@Suite("):
                untimed.append(f"{path}:{line_number}: @Suite without arguments")
        for match in re.finditer(r"@Suite\(", text):
            if not re.search(r"(^|[\s,(])\.timed\b", arguments(text, match.end())):
                line_number = text.count("\n", 0, match.start()) + 1
                untimed.append(f"{path}:{line_number}: @Suite without .timed")
    if untimed:
        print("suites without the .timed trait (add it: @Suite(\"name\", .timed)):")
        print("\n".join(untimed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
