"""The pipeline's adapters: the Target and the Host turned into each stage's inputs.

The stages take plain values, never a Target or a Host whole: the search gets a Space, Settings
and a toolchain; the thread search gets ThreadInputs; the reports get a RunInfo. Only the
orchestrator (`pipeline`) calls these.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from hspc_gen import __version__, estimate
from hspc_gen.batch_project import BatchProjects
from hspc_gen.errors import UserError
from hspc_gen.files import writable_problem
from hspc_gen.host.machine import Host
from hspc_gen.model import (
    UNCALIBRATED,
    ChannelParams,
    Effort,
    Primitive,
    SpinBudgets,
)
from hspc_gen.model.result import RunInfo
from hspc_gen.model.threads import ThreadAdvice
from hspc_gen.model.topology import TopologyOutcome
from hspc_gen.search import api as search
from hspc_gen.search.api import (
    BUSY_OTHER_CPUS,
    NOT_CALIBRATED,
    Calibrated,
    HostShape,
    RealToolchain,
    RecordStore,
    Settings,
    Space,
    ThreadInputs,
    UserCode,
    params_from_dict,
    stages,
)
from hspc_gen.target import params
from hspc_gen.target.app import Target
from hspc_gen.topology import plan as topology_plan
from hspc_gen.topology.classes import (
    lasting_classes,
    measured_kind,
    relation_of,
    representative_pairs,
    typical_class,
)
from hspc_gen.topology.moving import moves, topology_notes
from hspc_gen.topology.text import topology_json

CONFIRM_SHARE = 0.10  # of the budget, for re-measuring the best (12 s at 120 s; it takes ~5 s)
THREADS_SHARE = 0.2  # of the budget, kept for the thread-count recommendation that follows
OVERSUBSCRIBED_BELOW_CPUS = 4
DEFAULT_SEED = 20070326  # fixed, so the same machine and inputs give the same header


def estimated_params(
    target: Target,
    host: Host,
    fixed: Mapping[str, int | Primitive],
    spin: SpinBudgets = UNCALIBRATED,
    topology: TopologyOutcome | None = None,
) -> ChannelParams:
    """The estimate from the host's topology (its measured pairs, where recorded) and spin
    budgets, with `--set` applied and checked."""
    point = estimate.estimate(
        host,
        event_bytes=target.event.size,
        max_buffer_memory=target.constraints.max_buffer_memory,
        allowed=target.constraints.primitives,
        pin=target.constraints.pin_threads,
        measured=measured_pairs(topology),
    )
    point = params.apply(point, fixed)
    params.check(point, host.allowed_cpus, target.constraints.primitives)
    memory = target.constraints.max_buffer_memory
    return spun(params.fit_memory(point, fixed, memory, target.event.stride), fixed, spin)


def measured_pairs(topology: TopologyOutcome | None) -> estimate.MeasuredPairs | None:
    """What the estimate takes of the measured classes (None: not measured, sysfs decides)."""
    measured = topology.topology if topology is not None else None
    if measured is None or not measured.classes:
        return None
    lasting = lasting_classes(measured)
    apart = [c for c in lasting if relation_of(c) != "smt_sibling"]  # fastest first
    smt = "SMT" in measured_kind(lasting, ())
    return estimate.MeasuredPairs(smt, apart[0].representative if apart else None)


def spun(
    point: ChannelParams, fixed: Mapping[str, int | Primitive], spin: SpinBudgets
) -> ChannelParams:
    """`point` at its primitive's spin budget, unless `--set` fixed spin_ns."""
    if "spin_ns" in fixed:
        return point
    return point.replace(spin_ns=spin.for_primitive(point.primitive))


def estimated_threads(target: Target, host: Host) -> ThreadAdvice:
    t, work = target.threads, (target.workload.producer_ns, target.workload.consumer_ns)
    return estimate.thread_advice(host, t.producers, t.consumer_count, work)


def host_shape(host: Host, topology: TopologyOutcome | None = None) -> HostShape:
    """What the space needs of the host; with its measured classes, when it was measured."""
    measured = topology.topology if topology is not None else None
    lasting = lasting_classes(measured) if measured else ()
    placed = representative_pairs(measured, lasting) if measured else ()
    classes = tuple((pair.name, pair.producer_cpu, pair.consumer_cpu) for pair in placed)
    typical = None
    if measured is not None and moves(measured):
        typical = typical_class(measured).representative  # the host moves its CPUs about
    pairs = {
        tuple(sorted(host.siblings(cpu)))
        for cpu in host.allowed_cpus
        if len(host.siblings(cpu)) > 1
    }
    return HostShape(
        logical_cpus=len(host.logical_cpus),
        allowed_cpus=tuple(host.allowed_cpus),
        cores=host.cores,
        threads_per_core=host.threads_per_core,
        sibling_pairs=tuple(sorted((p[0], p[1]) for p in pairs)),
        llc_groups=tuple(tuple(g) for g in host.llc_groups()),
        cache_line_bytes=host.cache_line_bytes,
        l2_bytes=host.l2_bytes_per_core(),
        huge_pages=host.huge_pages in {"always", "madvise"},
        class_pairs=classes,
        typical_pair=typical,
    )


def space_for(
    target: Target,
    host: Host,
    fixed: Mapping[str, int | Primitive],
    spin: SpinBudgets = UNCALIBRATED,
    topology: TopologyOutcome | None = None,
) -> Space:
    """The target's space, narrowed to the values `--set` fixed; its placements one pair per
    measured class of CPU pairs when the host was measured."""
    space = Space.from_target(
        event_bytes=target.event.size,
        primitives=target.constraints.primitives,
        max_buffer_memory=target.constraints.max_buffer_memory,
        pin_threads=target.constraints.pin_threads,
        host=host_shape(host, topology),
        spin=spin,
    )
    return space.narrowed(fixed)


def host_timings(store: RecordStore, cache: Path | None, *, measure: bool) -> Calibrated:
    """What waiting costs on this host: measured (once per host, then kept in its record store)
    when the run measures anyway, else whatever an earlier run recorded."""
    return search.host_timings(store, cache_dir(cache), measure=measure)


def host_topology(
    host: Host,
    store: RecordStore,
    cache: Path | None,
    *,
    measure: bool,
    again: bool = False,
    show: Callable[[str], None] = lambda _: None,
) -> TopologyOutcome:
    """How this host's CPUs talk, pair by pair: measured once per host (a few seconds) when the
    run measures anyway, then kept in the record store; else whatever an earlier run stored."""
    return search.host_topology(
        topology_plan.probe_host(host),
        store,
        cache_dir(cache),
        measure=measure,
        again=again,
        show=show,
    )


def host_document(host: Host, topology: TopologyOutcome | None) -> dict[str, object]:
    """The host as `hspc-gen host --json` prints it: sysfs's, and the measured topology."""
    document = host.to_json()
    if topology is not None:
        document["topology"] = topology_json(topology)
    return document


def user_code(target: Target, store: RecordStore, *, measure: bool) -> UserCode | None:
    """The user's own code checked alone and its cost per event: measured once per host and
    code, then kept in its record store (None when the workload has no code of the user's, or
    when not `measure`: then only compiled and linked)."""
    workload, event_bytes = target.workload.value(), target.event.size
    return search.user_code(workload, event_bytes, store, measure=measure)


def spin_budgets(calibrated: Calibrated) -> SpinBudgets:
    timings = calibrated.timings
    return timings.budgets() if timings is not None else UNCALIBRATED


def settings_for(
    target: Target,
    host: Host,
    effort: Effort,
    started: float,
    *,
    quiet: bool = False,
    user: UserCode | None = None,
) -> Settings:
    # Our two threads fill a host of fewer than four CPUs: anything else running then preempts a
    # spinning waiter. A property of the host, not of the moment's load, so that a re-run from
    # the same records breaks ties the same way.
    oversubscribed = len(host.allowed_cpus) < OVERSUBSCRIBED_BELOW_CPUS
    return Settings(
        objective=target.objective,
        effort=effort,
        seed=DEFAULT_SEED,
        search_deadline=started + target.budget * (1.0 - CONFIRM_SHARE - THREADS_SHARE),
        confirm_deadline=started + target.budget * (1.0 - THREADS_SHARE),
        end=started + target.budget,
        oversubscribed=oversubscribed,
        stages=stages(
            target.workload.value(),
            target.event.size,
            target.objective,
            effort,
            bounded=channel_bound_ns(target) > 0,
            user=user,
        ),
        run=f"{effort}:{target.budget:g}s",
        quiet=quiet,
        max_latency_ns=_ns(target.constraints.max_latency_us),
    )


def _ns(microseconds: float | None) -> float | None:
    return None if microseconds is None else microseconds * 1e3


def unbounded(settings: Settings, seed: int) -> Settings:
    """The same settings with another seed and no deadline (`hspc-gen compare`)."""
    return dataclasses.replace(
        settings, seed=seed, search_deadline=math.inf, confirm_deadline=math.inf, end=math.inf
    )


def cache_dir(cache: Path | None) -> Path:
    """Records and builds live per user, across runs and output folders (FFTW's wisdom file)."""
    return cache or Path.home() / ".cache" / "hspc-gen"


def check_outputs(*files: Path, cache: Path | None, inputs: Sequence[Path] = ()) -> None:
    """Refuse, before anything is written, outputs or a cache that cannot be written, and
    outputs that would land on the run's own inputs or on one another."""
    kept = {path.resolve(): path for path in inputs}
    for path in files:
        if (same := kept.get(path.resolve())) is not None:
            raise UserError(f"cannot write {path}: it is the run's own input {same}")
        if under := [other for other in files if path.resolve() in other.resolve().parents]:
            raise UserError(f"cannot write {path}: {under[0]} is to be written inside it")
        if (problem := writable_problem(path)) is not None:
            raise UserError(f"cannot write {path.name}: {problem}")
    if (problem := writable_problem(cache_dir(cache), folder=True)) is not None:
        raise UserError(f"cannot use the cache folder: {problem} (choose another with --cache)")


def toolchain_for(target: Target, host: Host, cache: Path | None) -> RealToolchain:
    """The real render/build/run chain, its builds under the cache."""
    return RealToolchain(
        host.fingerprint,
        host.compiler,
        cache_dir(cache),
        target.event.size,
        BatchProjects(),
        target.objective,
        channel_bound_ns(target),
    )


BOUND_SHARE = 0.6
"""The channel's latency bound, as a share of constraints.max_latency_us: the channel hands a
buffer over within about 1.25x its bound plus the consumer's wake-up, so a bound of 0.6 of the
constraint keeps the 99th percentile under it."""


def channel_bound_ns(target: Target) -> int:
    """The channel's MaxLatencyNs for the target: 0 without constraints.max_latency_us."""
    limit = target.constraints.max_latency_us
    return 0 if limit is None else max(1, int(limit * 1e3 * BOUND_SHARE))


def record_store(host: Host, cache: Path | None) -> RecordStore:
    """The host's record store, with what the previous version kept beside it taken in."""
    return search.open_store(cache_dir(cache), host.fingerprint)


def thread_inputs(target: Target, host: Host) -> ThreadInputs:
    return ThreadInputs(
        target.workload.value(),
        target.threads.producers,
        target.threads.consumer_count,
        target.constraints.pin_threads,
        host.topology_shape(),
    )


def store_notes(store: RecordStore) -> tuple[str, ...]:
    """One note for the records that could not be read, naming the first and why."""
    skipped = store.skipped
    if not skipped:
        return ()
    return (
        f"{len(skipped)} record(s) could not be read (written by another hspc-gen version, or"
        f" damaged) and are not used: what they held is measured again. The first: {skipped[0]}",
    )


def thread_notes(target: Target, host: Host) -> tuple[str, ...]:
    """A word when app.yaml fixes more threads than this host has CPUs for."""
    producers, consumers = target.threads.producers, target.threads.consumers
    fixed = [n for n in (producers, consumers) if isinstance(n, int)]
    cpus = len(host.allowed_cpus)
    if sum(fixed) <= cpus:
        return ()
    asked = " and ".join(
        f"{n} {role}"
        for n, role in ((producers, "producers"), (consumers, "consumers"))
        if isinstance(n, int)
    )
    return (
        f"threads: {asked} on {cpus} usable CPU(s): they take turns on the CPUs"
        " (oversubscribed), and a spinning primitive then burns the time its peer needs",
    )


def run_info(
    target: Target,
    host: Host,
    effort: Effort,
    elapsed: float,
    *,
    others: float = 0.0,
    store: RecordStore | None = None,
    calibrated: Calibrated = NOT_CALIBRATED,
    topology: TopologyOutcome | None = None,
) -> RunInfo:
    """What was asked, where, and how it went (the load before measuring, the record store's
    unreadable lines, the host's measured topology)."""
    return RunInfo(
        target=target.name,
        event_bytes=target.event.size,
        objective=target.objective,
        max_latency_us=target.constraints.max_latency_us,
        effort=effort,
        budget_seconds=target.budget,
        elapsed_seconds=elapsed,
        host=host_document(host, topology),
        host_model=host.model_name,
        fingerprint=host.fingerprint,
        tool_version=__version__,
        other_cpus=others,
        busy=others > BUSY_OTHER_CPUS,
        notes=(
            *thread_notes(target, host),
            *(store_notes(store) if store else ()),
            *((calibrated.note,) if calibrated.note else ()),
            *topology_notes(topology, measured=effort is not Effort.estimate),
        ),
        timings=calibrated.timings,
    )


def winner_of(path: Path, target: Target) -> ChannelParams:
    """The winning parameters recorded in an hspc-result.json of this target (the same name and
    event size: another app's channel is no answer for this one)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        params = params_from_dict(document["winner"]["params"])
        tuned = document["target"]
        name, event_bytes = str(tuned["name"]), int(tuned["event_bytes"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise UserError(f"{path}: not an hspc-result.json ({err})") from None
    if (name, event_bytes) != (target.name, target.event.size):
        raise UserError(
            f"{path}: tuned for {name!r} with {event_bytes} B events, not for {target.name!r}"
            f" with {target.event.size} B events"
        )
    return params
