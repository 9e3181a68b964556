"""One tuning session: from the target and the host to the search's inputs, the search itself,
and the confirmation of its best candidates in a fresh process."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from hspc_gen.estimate import DEFAULT_SPIN_NS
from hspc_gen.host import Host
from hspc_gen.model import ChannelParams, Effort, Primitive
from hspc_gen.search.racing import Evaluation
from hspc_gen.search.space import HostShape, Space
from hspc_gen.search.store import RecordStore
from hspc_gen.search.threads.harness import MeasureError
from hspc_gen.search.threads.session import recommendation_for
from hspc_gen.search.toolchain import RealToolchain
from hspc_gen.search.tune import (
    STAGE_ONE_BASELINES,
    STAGE_TWO_BASELINES,
    Machinery,
    Outcome,
    Progress,
    Settings,
    StageSpec,
    confirm,
    tune,
)
from hspc_gen.target import Target, Workload

CONFIRM_SHARE = 0.15  # of the budget, kept for re-measuring the best candidates
THREADS_SHARE = 0.2  # of the budget, kept for the thread-count recommendation that follows
STAGE_ONE_SHARE, STAGE_TWO_SHARE = 0.45, 0.55  # of the search's time
OVERSUBSCRIBED_BELOW_CPUS = 4
DEFAULT_SEED = 20070326  # fixed, so the same machine and inputs give the same header
BUSY_LOAD_PER_CPU = 0.25  # load average above this share of the allowed CPUs: a busy machine


def host_shape(host: Host) -> HostShape:
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
    )


def space_for(target: Target, host: Host, fixed: Mapping[str, int | Primitive]) -> Space:
    """The target's space, narrowed to the values `--set` fixed."""
    space = Space.from_target(
        event_bytes=target.event.size,
        primitives=target.constraints.primitives,
        max_buffer_memory=target.constraints.max_buffer_memory,
        pin_threads=target.constraints.pin_threads,
        host=host_shape(host),
    )
    return space.narrowed(fixed)


def workloads(target: Target) -> tuple[Workload, Workload]:
    """Stage One's idealised producer/consumer (events only) and Stage Two's real work."""
    return Workload(), target.workload


def stages_for(target: Target, effort: Effort) -> tuple[StageSpec, ...]:
    bare, work = workloads(target)
    if effort is Effort.exhaustive:
        return (StageSpec("exhaustive", work, STAGE_TWO_BASELINES),)
    return (
        StageSpec("stage_one", bare, STAGE_ONE_BASELINES, STAGE_ONE_SHARE),
        StageSpec("stage_two", work, STAGE_TWO_BASELINES, STAGE_TWO_SHARE),
    )


def load_average(proc_root: Path = Path("/proc")) -> float:
    try:
        return float((proc_root / "loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0


def busy(host: Host, load: float) -> bool:
    return load > BUSY_LOAD_PER_CPU * len(host.allowed_cpus)


def settings_for(target: Target, host: Host, effort: Effort, started: float) -> Settings:
    # Our two threads fill a host of fewer than four CPUs: anything else running then preempts a
    # spinning waiter. A property of the host, not of the moment's load, so that a re-run from
    # the same records breaks ties the same way.
    oversubscribed = len(host.allowed_cpus) < OVERSUBSCRIBED_BELOW_CPUS
    return Settings(
        objective=target.objective,
        effort=effort,
        seed=DEFAULT_SEED,
        deadline=started + target.budget * (1.0 - CONFIRM_SHARE - THREADS_SHARE),
        confirm_deadline=started + target.budget * (1.0 - THREADS_SHARE),
        oversubscribed=oversubscribed,
        stages=stages_for(target, effort),
        run=f"{effort}:{target.budget:g}s",
    )


def toolchain_for(target: Target, host: Host, cache: Path | None) -> RealToolchain:
    """The real render/build/run chain, its builds and records under `cache` (or the default)."""
    root = cache or default_cache_dir()
    return RealToolchain(
        host.fingerprint,
        host.compiler,
        root,
        DEFAULT_SPIN_NS,
        target.event.size,
        target.objective,
    )


def default_cache_dir() -> Path:
    """Records and builds live per user, across runs and output folders (FFTW's wisdom file)."""
    return Path.home() / ".cache" / "hspc-gen"


@dataclass(frozen=True)
class Tuned:
    """What a session found: the search's outcome, the confirmation, and the final winner."""

    winner: ChannelParams
    outcome: Outcome
    confirmation: Evaluation | None
    settings: Settings
    load_before: float
    busy: bool
    spin_ns: int
    recommendation: dict[str, object] | None = None  # the thread counts (hspc-result.json's)


def tune_target(
    target: Target,
    host: Host,
    start: ChannelParams,
    fixed: Mapping[str, int | Primitive],
    *,
    effort: Effort,
    started: float,
    progress: Progress,
    on_improve: Callable[[ChannelParams], None],
    cache: Path | None = None,
) -> Tuned:
    load = load_average()
    if busy(host, load):
        progress.show(
            f"warning: the machine is busy (load {load:.2f}); comparisons are less precise"
        )
    settings = settings_for(target, host, effort, started)
    toolchain = toolchain_for(target, host, cache)
    store = RecordStore(toolchain.cache_dir / "records", host.fingerprint)
    machinery = Machinery(store, toolchain, progress)
    outcome = tune(space_for(target, host, fixed), start, settings, machinery, on_improve)
    confirmation = None
    if outcome.history:
        confirmation = confirm(outcome, settings.stages[-1], settings, machinery)
    final = confirmation.step.winner() if confirmation else None
    recommendation = None
    if confirmation is not None:
        progress.show("recommending thread counts and placement for the tuned channel")
        try:
            recommendation = recommendation_for(target, host, final or outcome.winner, toolchain)
        except MeasureError as err:  # a status, not a crash: the channel's result stands
            recommendation = {"status": "failed", "error": str(err)}
    return Tuned(
        final or outcome.winner,
        outcome,
        confirmation,
        settings,
        load,
        busy(host, load),
        DEFAULT_SPIN_NS,
        recommendation,
    )
