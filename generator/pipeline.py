"""The orchestrator: every stage of hspc-gen, in order, wired here and nowhere else.

    target    app.yaml, checked                         target.app.load_target
    host      /sys and /proc; the CPU pairs, measured   host.machine.read_host, wiring.host_topology
    space     the parameters and their constraints      wiring.space_for
    search    strategy -> render -> build -> run ->     search.search_channel
              record -> decide, batch by batch
    confirm   the best, again, in a fresh process       search.confirm: the typed SearchResult
    threads   thread counts for the tuned channel       search.recommend_threads
    pool      threads.consumers: adaptive's controller  adaptive -> search.pool_tuning
    emit      the header, atomically                    emit.header
    report    hspc-result.json, hspc-summary.md         reports

`search` is the search's face (search/api.py), the only part of it the stages call. `run` is
`hspc-gen --target`, `compare` and `threads` the other commands. Each returns a typed value from
the model; the command line prints it. Nothing here prints: progress goes to `show`. Bad input
raises UserError before anything is written; every other failure is a value.
"""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from hspc_gen import adaptive, pinning, wiring
from hspc_gen.emit.header import HeaderWriter
from hspc_gen.errors import UserError
from hspc_gen.files import json_text, writable_problem, write_atomic
from hspc_gen.host.machine import Host, read_host
from hspc_gen.model import ChannelParams, Effort, Primitive, Status
from hspc_gen.model.pool import PoolTuning
from hspc_gen.model.result import Comparison, TuneResult
from hspc_gen.model.result_file import read_confirmed
from hspc_gen.model.threads import ThreadAdvice, ThreadFailure, ThreadsReport
from hspc_gen.model.topology import TopologyOutcome
from hspc_gen.model.wisdom import WisdomReport
from hspc_gen.report import write_report
from hspc_gen.reports import result as result_report
from hspc_gen.reports import summary as summary_report
from hspc_gen.reports import threads as threads_report
from hspc_gen.search import api as search
from hspc_gen.search.api import (
    NOT_CALIBRATED,
    Calibrated,
    Machinery,
    RecordStore,
    Settings,
    Show,
    ThreadInputs,
    UserCode,
    locked,
    machine_busy,
    quiet,
)
from hspc_gen.target import params
from hspc_gen.target.app import Target, load_target

RESULT_FILE = "hspc-result.json"
SUMMARY_FILE = "hspc-summary.md"
THREADS_FILE = "hspc-threads.json"
INTERNAL_ERROR = "the thread search stopped on an error of hspc-gen's own"
COMPARE_SEED = 1  # apart from the tuner's seeds: compare measures afresh, and replays itself


@dataclass(frozen=True)
class Options:
    target: Path
    out: Path | None
    budget: str | None  # --budget as typed (app.yaml's budget otherwise)
    effort: Effort
    overrides: tuple[str, ...]
    cache: Path | None
    command: tuple[str, ...]  # the command line's words the header records (cli.common)


def run(options: Options, show: Show = quiet) -> TuneResult:
    """`hspc-gen --target`: tune the channel for this host and write its header and reports."""
    started = time.monotonic()
    target = target_with_budget(options.target, options.budget)  # target
    host = read_host()  # host
    fixed = pinning.completed(
        params.parse_overrides(options.overrides), target.constraints.pin_threads, host
    )
    start = wiring.estimated_params(target, host, fixed)  # the search's start and fallback
    out = Outputs.of(target, options.out)
    inputs = (options.target, *target.workload.sources)  # never overwritten
    wiring.check_outputs(out.header, out.result, out.summary, cache=options.cache, inputs=inputs)
    store = wiring.record_store(host, options.cache)
    recorded = wiring.host_topology(host, store, options.cache, measure=False)
    measuring = options.effort is not Effort.estimate
    if not measuring:  # the estimate is the answer: from the pairs an earlier run measured
        start = wiring.estimated_params(target, host, fixed, topology=recorded)
    estimated = wiring.estimated_threads(target, host)
    user_code = wiring.user_code(target, store, measure=measuring)  # estimate: compiled only
    calibrated = wiring.host_timings(store, options.cache, measure=measuring)  # host: wait costs
    start = wiring.spun(start, fixed, wiring.spin_budgets(calibrated))
    pool = adaptive.estimated_pool(target, host, start.buffer_bytes, estimated, calibrated.timings)
    header = _header_writer(options.command, out, target, host, threads=estimated, pool=pool)
    header.write_start(start, measuring)  # the anytime result: improved as results come, final last
    if options.effort is Effort.estimate:  # what an earlier run measured, if any
        elapsed = time.monotonic() - started
        info = wiring.run_info(
            target, host, options.effort, elapsed, calibrated=calibrated, topology=recorded
        )
        result = TuneResult(info, start, None, pinning.agreeing(estimated, start), pool)
        return _finish(result, out, header)
    with locked(store, started + target.budget, show):  # one measuring run at a time
        pairs = wiring.host_topology(host, store, options.cache, measure=True, show=show)
        context = Context(
            target, host, fixed, start, options.effort, started, user_code, calibrated, pairs
        )
        machinery = Machinery(store, wiring.toolchain_for(target, host, options.cache), show)
        result = tune_channel(context, machinery, header)
    result = adaptive.with_pool(result, target, host, estimated, calibrated.timings)
    return _finish(result, out, header)  # emit, report


def _header_writer(
    command: tuple[str, ...],
    out: Outputs,
    target: Target,
    host: Host,
    *,
    threads: ThreadAdvice,
    pool: PoolTuning | None,
) -> HeaderWriter:
    """The run's header writer: anytime (the estimate's header at once, then each better point)
    only where no header is yet. One already there (an earlier run's, beside the result and
    reports that describe it) stays until this run's final header: an interrupted run leaves the
    folder as consistent as it was."""
    bound = wiring.channel_bound_ns(target)
    anytime = not out.header.exists()
    return HeaderWriter(out.header, target, host, command, threads, bound, pool, anytime)


@dataclass(frozen=True)
class Context:
    """What a tuning run was asked: the target on this host, the fixed values, the estimate."""

    target: Target
    host: Host
    fixed: Mapping[str, int | Primitive]
    start: ChannelParams
    effort: Effort
    started: float
    user_code: UserCode | None  # the user's own code's cost per event, measured alone
    calibrated: Calibrated = NOT_CALIBRATED  # what waiting costs here: the spin budgets
    topology: TopologyOutcome | None = None  # how the CPUs talk, pair by pair (measured classes)


def tune_channel(context: Context, machinery: Machinery, header: HeaderWriter) -> TuneResult:
    """space -> the search (strategy -> render -> build -> run -> record -> decide, batch by
    batch) -> confirm -> threads: the typed result."""
    target, host = context.target, context.host
    busy, others = machine_busy()
    if busy:
        machinery.show(f"warning: other processes use {others:.2f} CPUs: less precise")
    spin = wiring.spin_budgets(context.calibrated)
    space = wiring.space_for(target, host, context.fixed, spin, context.topology)
    settings = wiring.settings_for(
        target, host, context.effort, context.started, quiet=not busy, user=context.user_code
    )
    searched = search.search_channel(
        space, context.start, settings, machinery, on_improve=header.write_best_so_far
    )
    found = search.confirm(searched, settings, machinery)  # confirm
    winner = found.winner
    advice: ThreadAdvice | ThreadFailure = header.threads  # estimated until measured
    if found.confirmed is not None:
        inputs = wiring.thread_inputs(target, host)
        advice = threads_for(winner, inputs, machinery, settings)  # threads
    elapsed = time.monotonic() - context.started
    info = wiring.run_info(
        target,
        host,
        context.effort,
        elapsed,
        others=others,
        store=machinery.store,
        calibrated=context.calibrated,
        topology=context.topology,
    )
    found = replace(found, placement=space.placement_name(winner))
    if isinstance(advice, ThreadAdvice):  # kTuning's pinning is the advice's (generator/pinning)
        advice = pinning.agreeing(advice, winner)
    return TuneResult(info, winner, found, advice)


def threads_for(
    channel: ChannelParams,
    inputs: ThreadInputs,
    machinery: Machinery,
    settings: Settings,
) -> ThreadAdvice | ThreadFailure:
    """The thread counts and placement measured for the tuned channel, until the budget ends;
    or why they could not be."""
    machinery.show("recommending thread counts and placement for the tuned channel")
    where = search.thread_run(machinery.toolchain, machinery.store, settings.end, settings.run)
    try:
        return search.recommend_threads(channel, inputs, where)
    except Exception as bug:  # the channel's result is final: it must still be written
        # A measurement's failure is already a ThreadFailure; what reaches here is hspc-gen's
        # own defect. The finished channel search still ends with its header and reports, and
        # the run says what failed (exit 1), with the traceback for the report.
        trace = "".join(traceback.format_exception(bug))
        return ThreadFailure(Status.crashed, f"{INTERNAL_ERROR}: {bug!r}\n{trace}")


def target_with_budget(path: Path, budget: str | None) -> Target:
    """app.yaml, with --budget as typed over its own budget (checked, and blamed on
    `--budget`, as the YAML key would be)."""
    given = {} if budget is None else {"budget": budget}
    return load_target(path, overrides=given, labels={"budget": f"--budget {budget}"})


@dataclass(frozen=True)
class Outputs:
    header: Path
    result: Path
    summary: Path

    @staticmethod
    def of(target: Target, out: Path | None) -> Outputs:
        header_name = target.output.header.name  # output.header's name, in --out's folder
        if out is not None:
            return Outputs(out / header_name, out / RESULT_FILE, out / SUMMARY_FILE)
        report = target.output.report
        return Outputs(target.output.header, report / RESULT_FILE, report / SUMMARY_FILE)


def _finish(result: TuneResult, out: Outputs, header: HeaderWriter) -> TuneResult:
    """emit, then report: the final header, hspc-result.json, hspc-summary.md and the pictures
    (hspc-report.html and its PNGs)."""
    header.write_result(result)
    document = result_report.document(result)
    write_atomic(out.result, json_text(document))
    write_atomic(out.summary, summary_report.render(result, figures=True))
    write_report(out.result.parent, document)
    return result


def compare(
    target_path: Path,
    results: Sequence[Path],
    rounds: int,
    cache: Path | None,
    show: Show = quiet,
    *,
    aa: bool = False,
) -> Comparison:
    """`hspc-gen compare`: earlier runs' distinct winners re-measured side by side in paired
    rounds, with the first's A/A copy; nothing measured when they all name one, unless `aa`
    asks for that one against its copy."""
    target, host = load_target(target_path), read_host()
    points = [wiring.winner_of(path, target) for path in results]
    named = search.distinct_winners([str(path) for path in results], points)
    if len(named) == 1 and not aa:
        return Comparison(0, named, measured=False)
    settings = wiring.settings_for(target, host, Effort.patient, time.monotonic())
    fresh = wiring.unbounded(settings, COMPARE_SEED)
    wiring.check_outputs(cache=cache)
    store = wiring.record_store(host, cache)
    with locked(store, math.inf, show):
        machinery = Machinery(store, wiring.toolchain_for(target, host, cache), show)
        return search.compare(named, rounds, fresh, machinery)


@dataclass(frozen=True)
class ThreadsOptions:
    """`hspc-gen threads`'s options: --from is `result`; --budget as typed."""

    target: Path
    sweep: bool = False
    result: Path | None = None
    out: Path | None = None
    cache: Path | None = None
    budget: str | None = None


def threads(options: ThreadsOptions, show: Show = quiet) -> ThreadsReport:
    """`hspc-gen threads`: the recommendation for a channel (an earlier result's winner, else the
    estimate), with --sweep the measured curve it is checked against; hspc-threads.json when it
    could be measured. The budget bounds it all, builds included."""
    started = time.monotonic()
    target, host = target_with_budget(options.target, options.budget), read_host()
    result, cache = options.result, options.cache
    channel = wiring.winner_of(result, target) if result else None
    inputs = wiring.thread_inputs(target, host)
    folder = options.out or target.output.report
    wiring.check_outputs(folder / THREADS_FILE, cache=cache)
    store = wiring.record_store(host, cache)
    if channel is None:  # the estimate, as --effort estimate writes it from what is stored
        recorded = wiring.host_topology(host, store, cache, measure=False)
        spin = wiring.spin_budgets(wiring.host_timings(store, cache, measure=False))
        channel = wiring.estimated_params(target, host, {}, spin, topology=recorded)
    run = f"threads{'-sweep' if options.sweep else ''}:{target.budget:g}s"
    toolchain = wiring.toolchain_for(target, host, cache)
    where = search.thread_run(toolchain, store, started + target.budget, run)
    with locked(store, started + target.budget, show):
        if options.sweep:  # sized from the command's budget: the same each time it runs
            advice, curve = search.sweep_threads(channel, inputs, where, target.budget)
        else:
            advice, curve = search.recommend_threads(channel, inputs, where), ()
    if isinstance(advice, ThreadAdvice):
        advice = pinning.agreeing(advice, channel)
    pool = _pool_for_threads(target, host, channel, advice, options=options, store=store)
    report = ThreadsReport(target.name, host.fingerprint, channel, advice, curve, pool)
    if isinstance(advice, ThreadAdvice):  # a failure never overwrites an earlier good answer
        write_atomic(folder / THREADS_FILE, json_text(threads_report.document(report)))
    return report


def _pool_for_threads(
    target: Target,
    host: Host,
    channel: ChannelParams,
    advice: ThreadAdvice | ThreadFailure,
    *,
    options: ThreadsOptions,
    store: RecordStore,
) -> PoolTuning | None:
    """threads.consumers: adaptive: kPoolTuning for this recommendation, as a run would choose
    it: on --from's confirmed channel (its pace and margin) and the wake-up this host's records
    hold. None without the switch, or when nothing was recommended."""
    if not target.threads.adaptive or not isinstance(advice, ThreadAdvice):
        return None
    confirmed = read_confirmed(options.result) if options.result else None
    timings = wiring.host_timings(store, options.cache, measure=False).timings
    return adaptive.pool_for(
        target, host, advice, channel.buffer_bytes, confirmed=confirmed, timings=timings
    )


def export_wisdom(file: Path, fingerprints: Sequence[str], cache: Path | None) -> WisdomReport:
    """`hspc-gen wisdom export`: the cache's records, calibration and user's code's costs of
    the hosts named (all when none), for other hosts of their fingerprints to replay."""
    if (problem := writable_problem(file)) is not None:  # the cache is only read
        raise UserError(f"cannot write {file.name}: {problem}")
    return search.export_wisdom(
        wiring.cache_dir(cache), file, fingerprints, read_host().fingerprint
    )


def import_wisdom(file: Path, cache: Path | None, show: Show = quiet) -> WisdomReport:
    """`hspc-gen wisdom import`: the file checked whole, then merged into the cache."""
    wiring.check_outputs(cache=cache)
    return search.import_wisdom(file, wiring.cache_dir(cache), read_host().fingerprint, show)
