"""The install-step commands: `check` (was this header tuned here?), `vendor` and `integration`
(a build system's configure step), `wisdom` (measurements moved between machines of a fleet)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from hspc_gen import pipeline
from hspc_gen.cli import vendor
from hspc_gen.cli.common import (
    PROG,
    Parser,
    cache_argument,
    outcome_status,
    progress,
    tuning_arguments,
    tuning_options,
)
from hspc_gen.emit import check
from hspc_gen.files import json_text
from hspc_gen.reports import wisdom as wisdom_report


def check_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=f"{PROG} check",
        description="Say whether HEADER was tuned on this host, with this hspc-gen and compiler "
        "(exit 0), or what differs (exit 1).",
    )
    parser.add_argument("header", type=Path, metavar="HEADER", help="a header hspc-gen wrote")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument(
        "--sysfs-root",
        type=Path,
        default=Path("/sys"),
        metavar="DIR",
        help="compare with the host DIR describes, in place of /sys",
    )
    return parser


def _check_command(argv: Sequence[str]) -> int:
    args = check_parser().parse_args(argv)
    checked = check.check(args.header, args.sysfs_root)
    if args.json:
        print(json_text(checked.to_json()), end="")
    elif checked.matches:
        tuned = checked.tuned
        how = "tuned" if checked.measured else "written"
        print(
            f"{args.header}: {how} on this host ({tuned.description!r}, fingerprint "
            f"{tuned.fingerprint}) with hspc-gen {tuned.hspc_gen_version} and {tuned.compiler!r}"
        )
        if not checked.measured:
            print("its parameters are the estimate's, nothing measured: run hspc-gen to tune it")
    else:
        other = {d.what for d in checked.differences}
        where = (
            "on another host" if "host" in other else f"with another {' and '.join(sorted(other))}"
        )
        print(f"{args.header}: tuned {where}; re-run hspc-gen on this host to tune it here")
        print("(the channel still works correctly, only its tuning may not fit):")
        for difference in checked.differences:
            print(f"  {difference.line}")
    return 0 if checked.matches else 1


def vendor_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=f"{PROG} vendor",
        description="A build system's configure step (see hspc-gen integration): tune the header "
        "into DIR unless DIR holds one made from the same app.yaml and the files it names, the "
        "same hspc-gen, host and options. Prints 'status tuned' or 'status current', "
        "'header PATH', then 'input PATH' for each file whose change must re-configure.",
    )
    parser.add_argument(
        "--target", required=True, type=Path, metavar="FILE", help="the app.yaml to tune for"
    )
    parser.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="the build's folder for it"
    )
    tuning_arguments(parser)
    return parser


def _vendor_command(argv: Sequence[str]) -> int:
    args = vendor_parser().parse_args(argv)
    options = tuning_options(args, (PROG, "vendor"))
    request = vendor.Vendoring.of(options)
    status = "current"
    if not request.is_current():
        request.forget()
        # A measuring run takes its whole budget: its progress shows where stderr is a terminal
        # (CMake leaves it to the user's), and nothing mixes into the listing on stdout.
        with progress(silent=False) as show:
            result = pipeline.run(options, show)
        if (failed := outcome_status(result)) != 0:
            return failed
        request.remember()
        status = "tuned"
    print(request.listing(status), end="")
    return 0


def integration_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=f"{PROG} integration",
        description="Print the path of the CMake module (include() it, then call "
        "hspc_gen_channel) or of the Meson snippet (copy it into your project, then subdir() it).",
    )
    kind = parser.add_mutually_exclusive_group(required=True)
    kind.add_argument(
        "--cmake", dest="kind", action="store_const", const="cmake", help="HspcGen.cmake"
    )
    kind.add_argument(
        "--meson", dest="kind", action="store_const", const="meson", help="the Meson snippet"
    )
    return parser


def _integration_command(argv: Sequence[str]) -> int:
    args = integration_parser().parse_args(argv)
    print(vendor.integration_file(args.kind))
    return 0


def wisdom_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=f"{PROG} wisdom",
        description="Move what was measured (records, thread advice, the host's calibration) "
        "between machines: a host of the same fingerprint replays it instead of measuring.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="{export,import}")
    export = actions.add_parser("export", help="write the cache's wisdom to FILE")
    export.add_argument(
        "--host-fingerprint",
        dest="fingerprints",
        action="append",
        default=[],
        metavar="FP",
        help="only this host's (repeatable; default: every host in the cache)",
    )
    imported = actions.add_parser("import", help="merge the wisdom in FILE into the cache")
    for sub in (export, imported):
        cache_argument(sub)
        sub.add_argument("file", type=Path, metavar="FILE", help="the wisdom file")
    return parser


def _wisdom_command(argv: Sequence[str]) -> int:
    args = wisdom_parser().parse_args(argv)
    if args.action == "export":
        report = pipeline.export_wisdom(args.file, args.fingerprints, args.cache)
    else:
        with progress(silent=False) as show:
            report = pipeline.import_wisdom(args.file, args.cache, show)
    print(wisdom_report.render(report), end="")
    return 0


COMMANDS: dict[str, tuple[str, Callable[[Sequence[str]], int]]] = {
    "check": ("say whether a header was tuned on this host, and what differs", _check_command),
    "vendor": (
        "a build system's configure step: tune into its folder unless current",
        _vendor_command,
    ),
    "integration": (
        "print where the CMake module or the Meson snippet is installed",
        _integration_command,
    ),
    "wisdom": (
        "export or import what was measured, for hosts of the same fingerprint to replay",
        _wisdom_command,
    ),
}
