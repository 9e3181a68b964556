"""`python -m hspcprof [-o FILE] [-s SORT] [--no-builtins] [-m module | script] [args ...]`, as
`python -m cProfile` (and sorted by cumulative time, as it is, unless -s says otherwise)."""

from __future__ import annotations

import argparse
import io
import os
import pstats
import runpy
import sys
from pathlib import Path
from types import CodeType
from typing import Any, NoReturn

from hspcprof import runctx

USAGE = "%(prog)s [-h] [-o FILE] [-s SORT] [--no-builtins] [-m module | script] [args ...]"
# What `python -m cProfile` sorts by: its default=2 is pstats' legacy key for cumulative time.
SORT_DEFAULT = "cumulative"


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m hspcprof",
        usage=USAGE,
        description="Profile a script or module as cProfile does, aggregated off-thread.",
    )
    parser.add_argument(
        "-o", "--outfile", metavar="FILE", help="save the stats (marshal, as cProfile) to FILE"
    )
    parser.add_argument(
        "-s",
        "--sort",
        default=SORT_DEFAULT,
        metavar="SORT",
        choices=sorted(pstats.Stats.sort_arg_dict_default),
        help="sort order of the printed stats, one of pstats' keys: %(choices)s; default: "
        "cumulative (cumulative time, as python -m cProfile)",
    )
    parser.add_argument(
        "--no-builtins",
        dest="builtins",
        action="store_false",
        help="Python functions only, as cProfile.Profile(builtins=False): the fast producer",
    )
    parser.add_argument("-m", dest="module", action="store_true", help="profile a library module")
    # Optional here so that argparse does not name `args` among the required: only the target is.
    parser.add_argument("target", nargs="?", help="the script (or with -m, the module) to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments (optional)")
    options = parser.parse_args(argv)
    if options.target is None:
        what = "a module after -m" if options.module else "a script (or -m and a module)"
        parser.error(f"nothing to profile: give {what}; its arguments are optional")
    return options


def program(options: argparse.Namespace) -> tuple[str | CodeType, dict[str, Any]]:
    """What to run and in which globals: exactly what cProfile's main runs."""
    if options.module:
        code = "run_module(modname, run_name='__main__', alter_sys=True)"
        return code, {"run_module": runpy.run_module, "modname": options.target}
    script = options.target
    sys.path.insert(0, str(Path(script).parent))
    with io.open_code(script) as source:
        compiled = compile(source.read(), script, "exec")
    return compiled, {
        "__file__": script,
        "__name__": "__main__",
        "__package__": None,
        "__cached__": None,
    }


def refuse(message: str) -> NoReturn:
    """Bad input: one line, exit 2, as argparse (and `python missing.py`) end."""
    print(f"python -m hspcprof: error: {message}", file=sys.stderr)
    sys.exit(2)


def writable_outfile(outfile: str) -> str:
    """The -o path, resolved before the script runs (it may chdir), refused now if it cannot be
    written: not after the whole profile was taken."""
    path = Path(outfile).resolve()
    if path.is_dir():
        refuse(f"-o {outfile}: is a folder")
    if not path.parent.is_dir():
        refuse(f"-o {outfile}: no folder {path.parent}")
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        refuse(f"-o {outfile}: not writable")
    return str(path)


def main(argv: list[str] | None = None) -> int:
    options = parse(sys.argv[1:] if argv is None else argv)
    sys.argv[:] = [options.target, *options.args]
    outfile = None if options.outfile is None else writable_outfile(options.outfile)
    try:
        code, globs = program(options)
    except OSError as exc:  # as `python missing.py` says it, without a traceback
        refuse(f"can't open file {options.target!r}: [Errno {exc.errno}] {exc.strerror}")
    try:
        runctx(code, globs, None, outfile, options.sort, builtins=options.builtins)
    except BrokenPipeError as exc:
        # No "Exception ignored" at interpreter shutdown, as cProfile does.
        sys.stdout = None
        return exc.errno or 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
