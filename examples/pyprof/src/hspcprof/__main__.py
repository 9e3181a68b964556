"""`python -m hspcprof [-o FILE] [--format F] [-s SORT] [--no-builtins] [-m module | script]
[args ...]`, as `python -m cProfile` (and sorted by cumulative time, as it is, unless -s says
otherwise). The program runs as it runs alone: the script is the `__main__` module (so
multiprocessing's spawn and pickle find its functions), `sys.exit(n)` exits n, and an exception
that ends it prints the traceback the script alone prints, and exits 1; the profile is written
or printed first in every case."""

from __future__ import annotations

import argparse
import io
import os
import pstats
import runpy
import sys
from pathlib import Path
from types import CodeType, ModuleType, TracebackType
from typing import Any, NoReturn

import hspcprof
from hspcprof import FORMATS, runctx

USAGE = (
    "%(prog)s [-h] [-o FILE] [--format {pstats,collapsed,speedscope,flamegraph}] [-s SORT] "
    "[--no-builtins] [-m module | script] [args ...]"
)
# What `python -m cProfile` sorts by: its default=2 is pstats' legacy key for cumulative time.
SORT_DEFAULT = "cumulative"


def add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o", "--outfile", metavar="FILE", help="save the profile to FILE (as --format says)"
    )
    parser.add_argument(
        "--format",
        default="pstats",
        choices=FORMATS,
        help="what -o writes: pstats (marshal, as cProfile; the default), collapsed (one "
        "'frame;frame value' line per stack, own time in nanoseconds: flamegraph.pl, "
        "speedscope), speedscope (JSON), flamegraph (an SVG)",
    )


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m hspcprof",
        usage=USAGE,
        description="Profile a script or module as cProfile does, aggregated off-thread.",
    )
    add_output(parser)
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
    if options.format != "pstats" and options.outfile is None:
        parser.error(f"--format {options.format} writes a file: give -o FILE")
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
    # A module of its own in sys.modules, as `python script.py` runs it: pickle finds its
    # functions there, and multiprocessing's spawn runs the script by path in the child (its
    # __spec__ is None). cProfile's plain dict fails at both.
    main = ModuleType("__main__")
    main.__dict__.update({"__file__": script, "__cached__": None, "__builtins__": __builtins__})
    sys.modules["__main__"] = main
    return compiled, main.__dict__


OURS = {hspcprof.__file__, __file__, runpy.__file__, "<frozen runpy>", "<string>"}


def program_traceback(tb: TracebackType | None) -> TracebackType | None:
    """The traceback from the program's first frame on: this runner's frames (and runpy's for
    -m) left out, as the program alone would show it."""
    while tb is not None and tb.tb_frame.f_code.co_filename in OURS:
        tb = tb.tb_next
    return tb


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
    name = Path(options.target).name
    try:
        runctx(code, globs, None, outfile, options.sort, builtins=options.builtins,
               format=options.format, name=name)  # fmt: skip
    except BrokenPipeError as exc:
        # No "Exception ignored" at interpreter shutdown, as cProfile does.
        sys.stdout = None
        return exc.errno or 1
    except (SystemExit, KeyboardInterrupt):
        raise  # the exit status, or the interrupt's, as without the profiler
    except BaseException as exc:
        tb = program_traceback(exc.__traceback__)
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
