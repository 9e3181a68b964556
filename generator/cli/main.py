"""The command line: argv -> options -> pipeline -> exit status. Thin on purpose.

The commands (the main one, host, check, compare, threads, bench, vendor, integration, wisdom)
and their options are listed in README.md's "The command line"; each takes --help.

Exit status: 0 done, 1 the run could not finish (for check: the header was tuned elsewhere; for
bench: a row of the tuned channel failed, the table says why), 2 bad input (one message, no
traceback, no file written; the user's code not compiling is bad input too), 3 the user's own code
hung, crashed or exited when run alone before tuning (nothing written), 130 interrupted, 143
terminated. A wisdom file that is damaged, cut short, altered or of another format is bad input
(nothing imported).
This module and the other `cli` modules are the only ones that print.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from hspc_gen import __version__, pipeline
from hspc_gen.cli import bench, install
from hspc_gen.cli.common import (
    PROG,
    Parser,
    cache_argument,
    outcome_status,
    progress,
    tuning_arguments,
    tuning_options,
)
from hspc_gen.cli.host import SurveyOptions, survey
from hspc_gen.errors import UserError
from hspc_gen.files import WriteRefusedError, json_text
from hspc_gen.host.machine import describe
from hspc_gen.model import Status
from hspc_gen.model.bench import Role
from hspc_gen.model.threads import ThreadFailure
from hspc_gen.model.topology import TopologyStatus
from hspc_gen.reports import bench as bench_report
from hspc_gen.reports import comparison as comparison_report
from hspc_gen.reports import result as result_report
from hspc_gen.reports import summary as summary_report
from hspc_gen.reports import threads as threads_report
from hspc_gen.search.api import DEFAULT_CXXFLAGS, DEFAULT_ROUNDS, StoreBusyError
from hspc_gen.topology.text import describe_topology

COMMANDS = {
    "host": "show what the tuner sees of this host",
    "compare": "re-measure the winners of earlier runs side by side",
    "bench": "time the tuned header beside this host's peer queues",
    "threads": "recommend thread counts and placement for a tuned channel",
    **{name: what for name, (what, _) in install.COMMANDS.items()},
}
EPILOG = "other commands (each with --help):\n" + "".join(
    f"  {PROG} {name:<12} {what}\n" for name, what in COMMANDS.items()
)


def main_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description="Tune a producer/consumer channel for this host and write its C++ header.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--target", required=True, type=Path, metavar="FILE", help="the app.yaml to tune for"
    )
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="put every output in DIR (created if missing)"
    )
    tuning_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    return parser


def host_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=f"{PROG} host",
        description="Show this host's topology: what sysfs declares, and how its CPU pairs "
        "measure (a cache line's round trip, a block's transfer), measured once per host.",
    )
    parser.add_argument("--json", action="store_true", help="print the topology as JSON")
    parser.add_argument(
        "--sysfs-root", type=Path, default=Path("/sys"), help="read DIR in place of /sys"
    )
    parser.add_argument(
        "--matrix", type=Path, metavar="FILE", help="classify this recorded matrix, not measure"
    )
    parser.add_argument(
        "--save-matrix",
        type=Path,
        metavar="FILE",
        help="measure the CPU pairs afresh and write them to FILE (a recorded matrix)",
    )
    parser.add_argument(
        "--no-measure", action="store_true", help="measure nothing: what the store holds, if any"
    )
    cache_argument(parser)
    return parser


def compare_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=f"{PROG} compare",
        description="Re-measure the winners of earlier runs side by side, in paired rounds.",
    )
    parser.add_argument(
        "--target", required=True, type=Path, metavar="FILE", help="the app.yaml they tuned"
    )
    parser.add_argument("results", nargs="+", type=Path, help="hspc-result.json files")
    parser.add_argument(
        "--rounds", type=int, default=30, help="paired rounds, 6 to 200 (default 30)"
    )
    parser.add_argument(
        "--aa",
        action="store_true",
        help="measure even when all the results name one winner (or there is one result): "
        "the A/A check, that winner against a copy of itself",
    )
    cache_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    return parser


def _compare_command(argv: Sequence[str]) -> int:
    args = compare_parser().parse_args(argv)
    if len(args.results) < 2 and not args.aa:
        raise UserError(
            f"compare needs two or more results, not {len(args.results)} "
            "(--aa: one result's winner against a copy of itself)"
        )
    if not 6 <= args.rounds <= 200:
        raise UserError(f"--rounds must be between 6 and 200, not {args.rounds}")
    with progress(args.json) as show:
        comparison = pipeline.compare(
            args.target, args.results, args.rounds, args.cache, show, aa=args.aa
        )
    document = comparison_report.to_json(comparison)
    print(json_text(document) if args.json else comparison_report.render(comparison), end="")
    if failed := comparison.unmeasured:
        print(f"{PROG}: {len(failed)} winner(s) could not be measured", file=sys.stderr)
        return 1
    return 0


def bench_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=f"{PROG} bench",
        description="Time the tuned header beside this host's peer queues (boost, moodycamel, "
        "atomic_queue, TBB) and the limit lines, in interleaved rounds, with your flags.",
    )
    parser.add_argument(
        "--target", required=True, type=Path, metavar="FILE", help="the app.yaml it was tuned for"
    )
    parser.add_argument(
        "--from",
        dest="result",
        type=Path,
        metavar="RESULT.json",
        help="the hspc-result.json to bench",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="where hspc-bench.json goes (default: beside the result, whose page it redraws)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=DEFAULT_ROUNDS,
        help=f"rounds, 3 to 200 (default {DEFAULT_ROUNDS})",
    )
    parser.add_argument(
        "--cxxflags",
        default=DEFAULT_CXXFLAGS,
        help=f"the compile flags of every contender (default {DEFAULT_CXXFLAGS!r})",
    )
    cache_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    return parser


def _bench_command(argv: Sequence[str]) -> int:
    args = bench_parser().parse_args(argv)
    if not 3 <= args.rounds <= 200:
        raise UserError(f"--rounds must be between 3 and 200, not {args.rounds}")
    with progress(args.json) as show:
        benched = bench.bench(
            args.target, args.result, args.out, args.rounds, args.cxxflags, args.cache, show
        )
    report = benched.report
    if not benched.redrawn:
        print(
            f"{PROG}: {bench_report.BENCH_FILE} written to {benched.folder}, without the report"
            f" page: the page is drawn beside the result benched ({benched.source}) only",
            file=sys.stderr,
        )
    document = bench_report.document(report)
    print(json_text(document) if args.json else bench_report.render(report), end="")
    failed = [
        r for r in report.rows if r.contender.role is Role.tuned and r.status is not Status.ok
    ]
    for row in failed:
        print(
            f"{PROG}: the tuned channel's {row.contender.id} did not run: {row.status}",
            file=sys.stderr,
        )
    return 1 if failed else 0


def threads_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=f"{PROG} threads",
        description="Recommend producer and consumer thread counts and their CPUs on this host.",
    )
    parser.add_argument("--target", required=True, type=Path, metavar="FILE", help="the app.yaml")
    parser.add_argument("--sweep", action="store_true", help="also measure every count (truth)")
    parser.add_argument(
        "--from", dest="result", type=Path, metavar="RESULT.json", help="use this result's channel"
    )
    parser.add_argument("--out", type=Path, metavar="DIR", help="where hspc-threads.json goes")
    parser.add_argument(
        "--budget", metavar="TIME", help="wall-time bound of the command, e.g. 90s or 2m"
    )
    cache_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def _threads_command(argv: Sequence[str]) -> int:
    args = threads_parser().parse_args(argv)
    with progress(args.json) as show:
        options = pipeline.ThreadsOptions(
            args.target, args.sweep, args.result, args.out, args.cache, args.budget
        )
        report = pipeline.threads(options, show)
    if isinstance(report.advice, ThreadFailure):
        failure = report.advice
        print(f"{PROG}: the thread search could not measure ({failure.status}):", file=sys.stderr)
        print(failure.error.rstrip(), file=sys.stderr)
        return 1
    document = threads_report.document(report)
    print(json_text(document) if args.json else threads_report.render(report), end="")
    return 0


def _host_command(argv: Sequence[str]) -> int:
    args = host_parser().parse_args(argv)
    options = SurveyOptions(
        args.sysfs_root, args.matrix, args.cache, not args.no_measure, args.save_matrix
    )
    with progress(args.json) as show:
        found = survey(options, show)
    if args.json:
        print(json.dumps(found.document(), indent=2, sort_keys=True))
    else:
        print(describe(found.host))
        print(describe_topology(found.topology))
    if args.save_matrix is not None and found.topology.status is not TopologyStatus.measured:
        print(f"{PROG}: nothing written to {args.save_matrix}", file=sys.stderr)
        return 1
    return 0


def _main_command(argv: Sequence[str]) -> int:
    args = main_parser().parse_args(argv)
    options = tuning_options(args, (PROG,))
    with progress(args.quiet or args.json) as show:
        result = pipeline.run(options, show)
    if args.json:
        sys.stdout.write(json_text(result_report.document(result)))
    elif not args.quiet:
        sys.stdout.write(summary_report.render(result))
    return outcome_status(result)


class TerminatedError(BaseException):
    """SIGTERM, raised in the main thread as SIGINT raises KeyboardInterrupt, and like it no
    Exception: a step that turns its own errors into a recorded failure lets it through."""


def _terminate(_signum: int, _frame: object) -> None:
    raise TerminatedError


def _dispatch(args: list[str]) -> int:
    commands = {
        "host": _host_command,
        "compare": _compare_command,
        "threads": _threads_command,
        "bench": _bench_command,
        **{name: command for name, (_, command) in install.COMMANDS.items()},
    }
    choices = f"give --target FILE, or a command: {', '.join(commands)}"
    if args and args[0] in commands:
        return commands[args[0]](args[1:])
    if args == ["help"]:
        print(main_parser().format_help(), end="")
        return 0
    if not args:
        raise UserError(f"nothing to do: {choices} (see {PROG} --help)")
    if not args[0].startswith("-"):
        raise UserError(f"unknown command {args[0]!r}: {choices}")
    return _main_command(args)


REFUSED_BY_THE_MACHINE = frozenset({
    errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO, errno.EACCES, errno.EPERM
})  # fmt: skip
"""A write the machine refused mid-run, after every check before it said yes (a full disk, a
quota, `ulimit -f`, a mount turned read-only), or a file it would not let the run read: one line
and exit 1, not a traceback ("cannot write" an output, "cannot use" anything else)."""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, _terminate)
    try:
        return _dispatch(args)
    except UserError as err:  # bad input (2), or the user's own code failing alone (3)
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return err.exit_status
    except StoreBusyError as busy:
        print(f"{PROG}: busy: {busy}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `hspc-gen host | head`: the reader has read enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return 128 + signal.SIGPIPE
    except OSError as err:
        if err.errno not in REFUSED_BY_THE_MACHINE:
            raise  # hspc-gen's own fault: the traceback says where
        where = f"{err.filename}: " if err.filename else ""
        verb = "write" if isinstance(err, WriteRefusedError) else "use"  # a read, a record
        print(f"{PROG}: error: cannot {verb} {where}{err.strerror}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, TerminatedError) as stop:
        terminated = isinstance(stop, TerminatedError)
        why = "terminated" if terminated else "interrupted"
        print(f"{PROG}: {why}; what was measured is kept for the next run", file=sys.stderr)
        return 128 + (signal.SIGTERM if terminated else signal.SIGINT)


if __name__ == "__main__":
    sys.exit(main())
