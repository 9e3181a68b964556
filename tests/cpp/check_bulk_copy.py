"""The channel's bulk calls copy their runs with the C library's memcpy, whatever bound on the
size the compiler can see: with pop(out, 256) inlined and the size left visible, g++ expanded the
copy in place as `rep movsq`, which cost runs of 8-byte events 10-20% of their speed (issue 23).

Run by meson test: `check_bulk_copy.py COMPILER RUNTIME_DIR SOURCE`; compiles SOURCE (two functions,
one pop(out, 256) and one push(in, 256)) to assembly at -O2 and checks that it holds no string
instruction and a memcpy call for each. Exit status 1 on a failure.
"""

from __future__ import annotations

import re
import subprocess
import sys

STRING_MOVE = re.compile(r"^\s*rep[a-z]*\s*;?\s*movs", re.MULTILINE)
MEMCPY_CALL = re.compile(r"^\s*(?:call|jmp)q?\s+\*?memcpy\b", re.MULTILINE)
CALLS = 2  # pop's run and push's run


def problems(assembly: str) -> list[str]:
    """What is wrong with how the runs are copied in `assembly`."""
    found = []
    if STRING_MOVE.search(assembly):
        found.append("a run is copied in place with a string instruction (rep movs)")
    calls = len(MEMCPY_CALL.findall(assembly))
    if calls < CALLS:
        found.append(f"{calls} memcpy calls, expected {CALLS} (one per run)")
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print("usage: check_bulk_copy.py COMPILER RUNTIME_DIR SOURCE", file=sys.stderr)
        return 2
    compiler, runtime, source = argv[1:]
    command = [compiler, "-std=c++17", "-O2", "-DNDEBUG", "-I", runtime, "-S", "-o", "-", source]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        return 1
    found = problems(done.stdout)
    for problem in found:
        print(f"{compiler}: {problem}", file=sys.stderr)
    print(f"{compiler}: {'failed' if found else 'runs copied by memcpy'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
