"""What the command-line modules share: the parser that makes a usage error bad input, the tuning
options, progress on a terminal, and a finished run's exit status."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NoReturn

from rich.console import Console
from rich.live import Live
from rich.text import Text

from hspc_gen.errors import UserCodeError, UserError
from hspc_gen.model import PARAM_NAMES, Effort
from hspc_gen.model.progress import Progress
from hspc_gen.model.result import TuneResult
from hspc_gen.pipeline import Options
from hspc_gen.reports import outcome
from hspc_gen.search.api import Show, quiet
from hspc_gen.target import params
from hspc_gen.target.units import format_duration, parse_duration

PROG = "hspc-gen"


VERBATIM_OPTIONS = ("--cxxflags",)
"""Options whose value is taken as typed even when it starts with '-' (compiler flags): argparse
would read `--cxxflags -O3` as a second option and say "expected one argument"."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit status 2 like every other bad input, and
    the word after a VERBATIM_OPTIONS option is its value whatever it starts with (as getopt)."""

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{message} (see {self.prog} --help)")

    def parse_known_args(  # type: ignore[override]  # argparse's overloads; only lists come here
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        return super().parse_known_args(None if args is None else verbatim_values(args), namespace)


def verbatim_values(argv: Sequence[str]) -> list[str]:
    """`--cxxflags -O3` as `--cxxflags=-O3`, so that a value starting with '-' is the value."""
    words: list[str] = []
    rest = iter(argv)
    for word in rest:
        if word == "--":  # everything after it is positional already
            return [*words, word, *rest]
        value = next(rest, None) if word in VERBATIM_OPTIONS else None
        words.append(word if value is None else f"{word}={value}")
    return words


def tuning_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a tuning run that the main command and `vendor` share."""
    parser.add_argument(
        "--budget", metavar="TIME", help="wall-time bound of the whole run, e.g. 90s or 2m"
    )
    parser.add_argument(
        "--effort",
        type=Effort,
        choices=list(Effort),
        default=Effort.measure,
        help="how hard to search (default: measure)",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"fix a channel parameter ({', '.join(PARAM_NAMES)}), e.g. --set buffers=4",
    )
    cache_argument(parser)


def cache_argument(parser: argparse.ArgumentParser) -> None:
    """--cache, as every command that reads or writes the record store takes it."""
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        metavar="DIR",
        help="the record store and builds (default: ~/.cache/hspc-gen)",
    )


def tuning_options(args: argparse.Namespace, command: tuple[str, ...]) -> Options:
    """The run's options; `command` is the words before them (hspc-gen, and its subcommand)."""
    return Options(
        target=args.target,
        out=args.out,
        budget=args.budget,
        effort=args.effort,
        overrides=tuple(args.overrides),
        cache=args.cache,
        command=recorded_command(command, args),
    )


def recorded_command(command: tuple[str, ...], args: argparse.Namespace) -> tuple[str, ...]:
    """The command line the header's banner records: the options that decide what is written
    (where to, from which records), each once in one order, and no display options (--quiet,
    --json): the same run writes the same bytes however it was typed."""
    words = [*command, "--target", str(args.target)]
    if args.out is not None:
        words += ["--out", str(args.out)]
    if args.budget is not None:
        words += ["--budget", _budget_spelled(args.budget)]
    words += ["--effort", str(args.effort)]
    for override in _overrides_spelled(args.overrides):
        words += ["--set", override]
    if args.cache is not None:
        words += ["--cache", str(args.cache)]
    return tuple(words)


def _budget_spelled(budget: str) -> str:
    """--budget in one spelling (30, 30s and 0.5m alike); as typed if it is no duration, which
    the run then refuses before it writes anything."""
    try:
        seconds = parse_duration(budget)
    except ValueError:
        return budget
    short = format_duration(seconds)
    return short if parse_duration(short) == seconds else f"{seconds!r}s"


def _overrides_spelled(overrides: Sequence[str]) -> list[str]:
    """Each --set once, by name, its value in one spelling (params.spelled); as typed if they
    do not parse, which the run then refuses before it writes anything."""
    try:
        parsed = params.parse_overrides(overrides)
    except UserError:
        return list(overrides)
    return [f"{name}={params.spelled(name, parsed[name])}" for name in sorted(parsed)]


def outcome_status(result: TuneResult) -> int:
    """A run that wrote its header may still have failed the user: their code failed under the
    benchmark (3), no channel kept the latency constraint (1), or the thread search failed (1)."""
    if (failure := outcome.user_code_failure(result)) is not None:
        print(f"{PROG}: error: {failure}", file=sys.stderr)
        return UserCodeError.exit_status
    for unmet in (outcome.latency_unmet(result), outcome.threads_unmet(result)):
        if unmet is not None:
            print(f"{PROG}: error: {unmet}", file=sys.stderr)
            return 1
    return 0


@contextlib.contextmanager
def progress(silent: bool) -> Iterator[Show]:
    """On a terminal, the lines a run tells and below them a live line (rich) of where it stands.
    It is redrawn only when the run says something, which it does between plans: never while a
    sample runs, where a redraw would take CPU from what is measured. Nothing off a terminal."""
    if silent or not sys.stderr.isatty():
        yield quiet
        return
    console = Console(stderr=True, highlight=False)
    with Live(console=console, auto_refresh=False, transient=True) as live:

        def show(said: str | Progress) -> None:
            if isinstance(said, str):  # a new stage of the run: the last race's line is done
                live.update(Text(""))
                console.print(f"{PROG}: {said}", markup=False)
            else:
                live.update(Text(live_line(said)), refresh=True)

        yield show


def live_line(p: Progress) -> str:
    """stage one · padding · 3 of 5 racing · round 12/30 · best futex 4x131072 B pad 128:
    741 M/s [702, 760] · 64 s left"""
    rate = p.best_rate
    measured = (
        f": {rate.median / 1e6:.4g} M/s [{rate.ci95_low / 1e6:.4g}, {rate.ci95_high / 1e6:.4g}]"
        if rate is not None and rate.n > 0
        else ""
    )
    return (
        f"stage {p.stage} · {p.step} · {p.left} of {p.candidates} racing · round {p.rounds}/"
        f"{p.planned_rounds} · best {p.best}{measured} · {p.seconds_left:.0f} s left in the search"
    )
