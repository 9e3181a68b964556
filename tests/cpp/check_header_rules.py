"""Checks the shape the generator relies on when it pastes runtime headers into one header.

Each runtime/hspc/*.hpp must be: `#pragma once`, then only blank lines and includes (`<system>`
or `"hspc/<existing>.hpp"`), then exactly one `namespace hspc {` ... `}  // namespace hspc` block
holding everything, with no `hspc::` anywhere (the generator re-wraps the bodies into the user's
namespace), and at most MAX_LINES lines (one header per concern). Run by meson test:
`check_header_rules.py runtime/hspc`; exit status 1 on a violation.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

OPEN = "namespace hspc {"
CLOSE = "}  // namespace hspc"
SYSTEM_INCLUDE = re.compile(r"#include <[\w./+-]+>")
OWN_INCLUDE = re.compile(r'#include "hspc/([\w]+\.hpp)"')
# A header past this has grown a second concern: split it (and include the new header).
MAX_LINES = 300


def preamble_problems(lines: list[str], siblings: set[str]) -> list[str]:
    """Problems in the lines before the namespace block (pragma, includes, blanks only)."""
    problems: list[str] = []
    if not lines or lines[0] != "#pragma once":
        problems.append("first line is not '#pragma once'")
    for number, line in enumerate(lines[1:], start=2):
        own = OWN_INCLUDE.fullmatch(line)
        if own and own.group(1) not in siblings:
            problems.append(f"line {number}: includes a missing runtime header")
        elif not (line == "" or own or SYSTEM_INCLUDE.fullmatch(line)):
            problems.append(f"line {number}: only includes may precede the namespace: {line!r}")
    return problems


def header_problems(path: Path, siblings: set[str]) -> list[str]:
    """Every rule violation in one header, as readable messages."""
    lines = path.read_text(encoding="utf-8").splitlines()
    while lines and lines[-1] == "":
        lines.pop()
    if lines.count(OPEN) != 1:
        return [f"needs exactly one '{OPEN}' line"]
    start = lines.index(OPEN)
    problems = preamble_problems(lines[:start], siblings)
    if len(lines) > MAX_LINES:
        problems.append(f"{len(lines)} lines, more than {MAX_LINES}: split it")
    if not lines or lines[-1] != CLOSE:
        problems.append(f"last line is not '{CLOSE}'")
    if lines.count(CLOSE) != 1:
        problems.append(f"needs exactly one '{CLOSE}' line")
    problems += [
        f"line {number}: writes 'hspc::'"
        for number, line in enumerate(lines, start=1)
        if "hspc::" in line
    ]
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: check_header_rules.py RUNTIME_HSPC_DIR", file=sys.stderr)
        return 2
    headers = sorted(Path(argv[1]).glob("*.hpp"))
    if not headers:
        print(f"no headers in {argv[1]}", file=sys.stderr)
        return 1
    siblings = {header.name for header in headers}
    failed = False
    for header in headers:
        for problem in header_problems(header, siblings):
            print(f"{header}: {problem}", file=sys.stderr)
            failed = True
        print(f"checked {header.name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
