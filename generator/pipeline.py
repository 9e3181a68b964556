"""The orchestrator: target -> host -> space -> render -> build -> run -> record -> decide -> emit.

Each stage is a function of frozen values; this module only wires them and decides where outputs
go. Bad input raises UserError before anything is written.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

from hspc_gen import estimate, params
from hspc_gen.emit import json_text, write_atomic
from hspc_gen.errors import UserError
from hspc_gen.host import Host, read_host
from hspc_gen.model import ChannelParams, Effort
from hspc_gen.render import HeaderSpec, Provenance, render_header
from hspc_gen.reports import result as result_report
from hspc_gen.reports import summary as summary_report
from hspc_gen.target import Target, load_target

RESULT_FILE = "hspc-result.json"
SUMMARY_FILE = "hspc-summary.md"


@dataclass(frozen=True)
class Options:
    target: Path
    out: Path | None
    budget: float | None
    effort: Effort
    overrides: tuple[str, ...]
    json: bool
    quiet: bool
    command: str


@dataclass(frozen=True)
class Destinations:
    header: Path
    result: Path
    summary: Path

    @staticmethod
    def of(target: Target, out: Path | None) -> Destinations:
        header_name = f"{target.name}_channel.hpp"
        if out is not None:
            return Destinations(out / header_name, out / RESULT_FILE, out / SUMMARY_FILE)
        report = target.output.report
        return Destinations(target.output.header, report / RESULT_FILE, report / SUMMARY_FILE)


def host_summary(host: Host) -> str:
    return (
        f"{host.model_name}; {host.packages} package(s), {host.cores} core(s), "
        f"{len(host.logical_cpus)} CPU(s), {'/'.join(host.kind) or 'uniprocessor'}"
        f"{', virtual' if host.virtual else ''}"
    )


def estimated_params(target: Target, host: Host, overrides: tuple[str, ...]) -> ChannelParams:
    point = estimate.estimate(
        host,
        event_bytes=target.event.size,
        max_buffer_memory=target.constraints.max_buffer_memory,
        allowed=target.constraints.primitives,
        pin=target.constraints.pin_threads,
    )
    fixed = params.parse_overrides(overrides)
    point = params.apply(point, fixed)
    params.check(point, host.allowed_cpus)
    return point


def run(options: Options) -> int:
    started = time.monotonic()
    budget = None if options.budget is None else {"budget": f"{options.budget}s"}
    target = load_target(options.target, overrides=budget)
    host = read_host()
    point = estimated_params(target, host, options.overrides)
    if options.effort is not Effort.estimate:
        raise_not_ready(options.effort)
    spec = HeaderSpec(
        name=target.name,
        namespace=target.output.namespace,
        params=point,
        spin_ns=estimate.DEFAULT_SPIN_NS,
        provenance=Provenance(options.command, host.fingerprint, host_summary(host), ()),
    )
    destinations = Destinations.of(target, options.out)
    document = result_report.estimate_result(
        target, host, point, options.effort, time.monotonic() - started
    )
    summary = summary_report.render(document)
    write_atomic(destinations.header, render_header(spec))
    write_atomic(destinations.result, json_text(document))
    write_atomic(destinations.summary, summary)
    if options.json:
        sys.stdout.write(json_text(document))
    elif not options.quiet:
        sys.stdout.write(summary)
    return 0


def raise_not_ready(effort: Effort) -> None:
    raise UserError(f"--effort {effort} is not available in this build; use --effort estimate")
