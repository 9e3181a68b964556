"""The orchestrator: target -> host -> space -> render -> build -> run -> record -> decide -> emit.

Each stage is a function of frozen values; this module only wires them and decides where outputs
go. Bad input raises UserError before anything is written.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hspc_gen import estimate, params
from hspc_gen.emit import json_text, write_atomic
from hspc_gen.host import Host, read_host
from hspc_gen.model import ChannelParams, Effort, Primitive
from hspc_gen.render import HeaderSpec, Provenance, ThreadAdvice, render_header
from hspc_gen.reports import result as result_report
from hspc_gen.reports import summary as summary_report
from hspc_gen.reports import threads as threads_report
from hspc_gen.search import session
from hspc_gen.search.compare import winner_of
from hspc_gen.search.threads import session as thread_session
from hspc_gen.search.threads.harness import MeasureError
from hspc_gen.search.tune import Progress
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
    cache: Path | None
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


def estimated_params(
    target: Target, host: Host, fixed: Mapping[str, int | Primitive]
) -> ChannelParams:
    point = estimate.estimate(
        host,
        event_bytes=target.event.size,
        max_buffer_memory=target.constraints.max_buffer_memory,
        allowed=target.constraints.primitives,
        pin=target.constraints.pin_threads,
    )
    point = params.apply(point, fixed)
    params.check(point, host.allowed_cpus)
    return point


@dataclass(frozen=True)
class Writer:
    """Writes the outputs, each atomically; the header first from the estimate, then better."""

    destinations: Destinations
    target: Target
    host: Host
    command: str

    def header(
        self,
        point: ChannelParams,
        measured: tuple[str, ...] = (),
        threads: ThreadAdvice | None = None,
    ) -> None:
        provenance = Provenance(
            self.command, self.host.fingerprint, host_summary(self.host), measured
        )
        spec = HeaderSpec(
            name=self.target.name,
            namespace=self.target.output.namespace,
            params=point,
            spin_ns=estimate.DEFAULT_SPIN_NS,
            provenance=provenance,
            threads=threads or self.estimated_threads(),
        )
        write_atomic(self.destinations.header, render_header(spec))

    def estimated_threads(self) -> ThreadAdvice:
        t, w = self.target.threads, self.target.workload
        work = (w.producer_ns, w.consumer_ns)
        return estimate.thread_advice(self.host, t.producers, t.consumers, work)

    def reports(self, document: dict[str, Any], options: Options) -> None:
        summary = summary_report.render(document)
        write_atomic(self.destinations.result, json_text(document))
        write_atomic(self.destinations.summary, summary)
        if options.json:
            sys.stdout.write(json_text(document))
        elif not options.quiet:
            sys.stdout.write(summary)


def run(options: Options) -> int:
    started = time.monotonic()
    budget = None if options.budget is None else {"budget": f"{options.budget}s"}
    target = load_target(options.target, overrides=budget)
    host = read_host()
    fixed = params.parse_overrides(options.overrides)
    point = estimated_params(target, host, fixed)
    writer = Writer(Destinations.of(target, options.out), target, host, options.command)
    if options.effort is Effort.estimate:
        writer.header(point)
        elapsed = time.monotonic() - started
        writer.reports(
            result_report.estimate_result(target, host, point, options.effort, elapsed), options
        )
        return 0
    writer.header(point)  # the anytime result: improved as results come, final at the end
    progress = Progress(show=_progress_printer(options))
    tuned = session.tune_target(
        target,
        host,
        point,
        fixed,
        effort=options.effort,
        started=started,
        progress=progress,
        on_improve=writer.header,
        cache=options.cache,
    )
    document = result_report.tuned_result(target, host, tuned, time.monotonic() - started)
    rec = tuned.recommendation
    advice = advice_from(rec) if rec is not None and "producers" in rec else None
    writer.header(tuned.winner, result_report.measured_lines(document), advice)
    writer.reports(document, options)
    return 0


def advice_from(recommendation: Mapping[str, Any]) -> ThreadAdvice:
    """The header's thread constants from a measured recommendation (hspc-result.json's)."""
    cpus = recommendation["cpus"]
    evidence = recommendation.get("evidence") or {}
    return ThreadAdvice(
        producers=int(recommendation["producers"]),
        consumers_per_producer=int(recommendation["consumers_per_producer"]),
        producer_cpus=tuple(cpus["producers"]),
        consumer_cpus=tuple(cpus["consumers"]),
        pinned=bool(recommendation["pinned"]),
        how=f"measured; the search stopped at: {evidence.get('termination', 'unknown')}",
    )


def _progress_printer(options: Options) -> Callable[[str], None]:
    """Progress on a terminal only, and only between plans (never while a sample runs)."""
    if options.quiet or options.json or not sys.stderr.isatty():
        return lambda _line: None
    return lambda line: print(f"hspc-gen: {line}", file=sys.stderr, flush=True)


THREADS_FILE = "hspc-threads.json"


@dataclass(frozen=True)
class ThreadsOptions:
    target: Path
    sweep: bool
    result: Path | None  # an hspc-result.json whose winner to use; else the estimate
    out: Path | None
    cache: Path | None
    json: bool


def run_threads(options: ThreadsOptions) -> int:
    """`hspc-gen threads`: the thread-count recommendation alone, and with --sweep the ground
    truth it is checked against, measured in the same interleaved rounds."""
    target = load_target(options.target)
    host = read_host()
    winner = winner_of(options.result) if options.result else estimated_params(target, host, {})
    toolchain = session.toolchain_for(target, host, options.cache)
    try:
        bench = thread_session.prepare(target, host, winner, toolchain)
        advice = thread_session.recommend_threads(target, bench)
        curve: tuple[thread_session.SweepPoint, ...] = ()
        if options.sweep:
            max_groups = thread_session.default_max_groups(host)
            curve = thread_session.sweep(bench, advice.config(), max_groups)
    except MeasureError as err:
        print(f"hspc-gen: {err}", file=sys.stderr)
        return 1
    document = threads_report.document(target, host, winner, bench, advice, curve=curve)
    folder = options.out or target.output.report
    write_atomic(folder / THREADS_FILE, json_text(document))
    text = json_text(document) if options.json else threads_report.render(document)
    sys.stdout.write(text)
    return 0
