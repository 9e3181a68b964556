"""What the command-line modules share: the parser that makes a usage error bad input, the tuning
options, progress on a terminal, and a finished run's exit status."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import NoReturn

from hspc_gen.batch import Show
from hspc_gen.errors import UserCodeError, UserError
from hspc_gen.model import PARAM_NAMES, Effort
from hspc_gen.model.result import TuneResult
from hspc_gen.pipeline import Options
from hspc_gen.reports import outcome

PROG = "hspc-gen"


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit status 2 like every other bad input."""

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{message} (see {self.prog} --help)")


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
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        metavar="DIR",
        help="the record store and builds (default: ~/.cache/hspc-gen)",
    )


def tuning_options(args: argparse.Namespace, command: list[str]) -> Options:
    return Options(
        target=args.target,
        out=args.out,
        budget=args.budget,
        effort=args.effort,
        overrides=tuple(args.overrides),
        cache=args.cache,
        command=shlex.join(command),
    )


def outcome_status(result: TuneResult) -> int:
    """A run that wrote its header may still have failed the user: their code failed under the
    benchmark (3), or no channel kept the latency constraint (1)."""
    if (failure := outcome.user_code_failure(result)) is not None:
        print(f"{PROG}: error: {failure}", file=sys.stderr)
        return UserCodeError.exit_status
    if (unmet := outcome.latency_unmet(result)) is not None:
        print(f"{PROG}: error: {unmet}", file=sys.stderr)
        return 1
    return 0


def progress(silent: bool) -> Show:
    """Progress on a terminal only, and only between plans (never while a sample runs)."""
    if silent or not sys.stderr.isatty():
        return lambda _line: None
    return lambda line: print(f"{PROG}: {line}", file=sys.stderr, flush=True)
