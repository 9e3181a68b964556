"""The search's public face: what the orchestrator (generator/pipeline.py and its adapters) calls,
in the order the stages run, and the values they take and return. Nothing outside search imports
its other modules (the `search-face` contract in setup.cfg).

    host_timings, host_topology, user_code   what the host and the user's code cost, measured
    search_channel                           the channel's search, batch by batch
    confirm                                  its best again in a fresh process: the typed result
    recommend_threads, sweep_threads         thread counts and placement for the tuned channel
    compare                                  earlier runs' winners side by side
    contest                                  `hspc-gen bench`: the header beside the peer queues
    open_store, locked, export_wisdom, ...   the record store the stages replay and append to
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from hspc_gen.model import ChannelParams
from hspc_gen.model.bench import BenchReport
from hspc_gen.model.result import Compared, Comparison, SearchResult
from hspc_gen.model.threads import SweepPoint, ThreadAdvice, ThreadFailure
from hspc_gen.model.topology import ProbeHost, TopologyOutcome
from hspc_gen.model.wisdom import WisdomReport
from hspc_gen.model.workload import Workload
from hspc_gen.search import channel
from hspc_gen.search import contest as bench_contest
from hspc_gen.search.batch import Machinery, Show, evaluate_every_round, quiet
from hspc_gen.search.channel import Searched
from hspc_gen.search.contest import DEFAULT_CXXFLAGS, DEFAULT_ROUNDS, Contest
from hspc_gen.search.decisions import findings
from hspc_gen.search.decisions.stats import MARGIN_FLOOR
from hspc_gen.search.measure import calibrate, preflight
from hspc_gen.search.measure import topology as probe
from hspc_gen.search.measure.calibrate import NOT_CALIBRATED, Calibrated
from hspc_gen.search.measure.load import BUSY_OTHER_CPUS, machine_busy
from hspc_gen.search.measure.preflight import UserCode
from hspc_gen.search.measure.toolchain import RealToolchain, Toolchain
from hspc_gen.search.records import migrate, wisdom
from hspc_gen.search.records.samples import params_from_dict
from hspc_gen.search.records.store import RecordStore, StoreBusyError, locked
from hspc_gen.search.stages import stages
from hspc_gen.search.strategies.base import make_batch
from hspc_gen.search.strategies.placements import HostShape
from hspc_gen.search.strategies.space import Space
from hspc_gen.search.threads import session
from hspc_gen.search.threads.pool import PoolInputs, pool_tuning
from hspc_gen.search.threads.recorded import Budget
from hspc_gen.search.threads.session import THREAD_SAMPLE_SECONDS, ThreadInputs, ThreadRun
from hspc_gen.search.tune import Settings

__all__ = [
    "BUSY_OTHER_CPUS",
    "DEFAULT_CXXFLAGS",
    "DEFAULT_ROUNDS",
    "MARGIN_FLOOR",
    "NOT_CALIBRATED",
    "Calibrated",
    "Contest",
    "HostShape",
    "Machinery",
    "PoolInputs",
    "RealToolchain",
    "RecordStore",
    "Searched",
    "Settings",
    "Show",
    "Space",
    "StoreBusyError",
    "ThreadInputs",
    "ThreadRun",
    "UserCode",
    "compare",
    "confirm",
    "contest",
    "distinct_winners",
    "export_wisdom",
    "host_timings",
    "host_topology",
    "import_wisdom",
    "locked",
    "machine_busy",
    "open_store",
    "params_from_dict",
    "pool_tuning",
    "quiet",
    "recommend_threads",
    "search_channel",
    "stages",
    "sweep_threads",
    "thread_run",
    "user_code",
]


def search_channel(
    space: Space,
    start: ChannelParams,
    settings: Settings,
    machinery: Machinery,
    on_improve: Callable[[ChannelParams], None] = lambda _p: None,
) -> Searched:
    """The channel's search from `start`: every stage's strategy batch by batch (strategy ->
    render -> build -> run -> record -> decide), each step within its share of the time plan;
    `on_improve` hears each better point as it is found."""
    return channel.search(space, start, settings, machinery, on_improve)


def confirm(searched: Searched, settings: Settings, machinery: Machinery) -> SearchResult:
    """The search's best and runners-up measured again in a fresh process (the winner once more
    when those figures cannot be true): the typed result, its winner the confirmation's."""
    confirmation = channel.measure_confirmation(searched, settings, machinery)
    winner = channel.final_winner(searched, confirmation, settings)
    remeasured = None
    if confirmation is not None:
        remeasured = channel.remeasure(confirmation, searched, winner, settings, machinery)
    return channel.search_result(searched, (confirmation, remeasured), winner, settings)


def recommend_threads(
    tuned: ChannelParams, inputs: ThreadInputs, where: ThreadRun
) -> ThreadAdvice | ThreadFailure:
    """The thread counts and placement measured for the tuned channel, or why they could not be."""
    return session.recommend_threads(tuned, inputs, where)


def sweep_threads(
    tuned: ChannelParams, inputs: ThreadInputs, where: ThreadRun, budget: float
) -> tuple[ThreadAdvice | ThreadFailure, tuple[SweepPoint, ...]]:
    """The recommendation, and the measured curve of counts it is checked against (`threads
    --sweep`), both within `budget` seconds."""
    return session.sweep_threads(tuned, inputs, where, budget)


def thread_run(toolchain: Toolchain, store: RecordStore, end: float, run: str) -> ThreadRun:
    """Where the thread search measures, until `end` (time.monotonic()); `run` names its cuts."""
    return ThreadRun(toolchain, store, Budget(end, run, THREAD_SAMPLE_SECONDS))


def distinct_winners(
    labels: Sequence[str], winners: Sequence[ChannelParams]
) -> tuple[Compared, ...]:
    """Earlier runs' winners, each distinct one once with every label that names it."""
    return findings.named_winners(labels, winners)


def compare(
    named: Sequence[Compared], rounds: int, settings: Settings, machinery: Machinery
) -> Comparison:
    """The distinct winners measured side by side in paired rounds (`hspc-gen compare`)."""
    winners = [row.params for row in named]
    batch = make_batch("compare", "compare", winners, winners[0], rounds)
    evaluation = evaluate_every_round(batch, settings.stages[-1], settings, machinery)
    return findings.comparison(evaluation, named, settings.objective)


def contest(
    what: Contest, cache_dir: Path, show: Callable[[str], None], store: RecordStore
) -> BenchReport:
    """`hspc-gen bench`: the tuned header's project built with the user's flags and timed in
    interleaved rounds beside the host's peer queues and the limit lines; rounds recorded in
    `store` are replayed, the missing ones run and recorded."""
    return bench_contest.measure(what, cache_dir, show, store)


def host_timings(store: RecordStore, cache_dir: Path, *, measure: bool) -> Calibrated:
    """What waiting costs on this host: measured once per host (when `measure`), then kept in
    its record store."""
    if measure:
        return calibrate.calibrate(store, cache_dir, preflight.compiler())
    return calibrate.cached(store)


def host_topology(
    host: ProbeHost,
    store: RecordStore,
    cache_dir: Path,
    *,
    measure: bool,
    again: bool = False,
    show: Callable[[str], None] = lambda _: None,
) -> TopologyOutcome:
    """How the host's CPUs talk, pair by pair: measured once per host (when `measure`), then
    kept in the record store."""
    compiler = preflight.compiler()
    return probe.host_topology(
        host, store, cache_dir, compiler, measure=measure, again=again, on_measure=show
    )


def user_code(
    workload: Workload, event_bytes: int, store: RecordStore, *, measure: bool = True
) -> UserCode | None:
    """The user's own code checked alone and its cost per event, measured once per host and
    code, then kept in the record store (None: the workload has none). Not `measure`: only
    compiled and linked, None."""
    if not measure:
        preflight.compiles(workload, event_bytes, store)
        return None
    return preflight.checked(workload, event_bytes, store)


def open_store(cache_dir: Path, fingerprint: str) -> RecordStore:
    """The record store under the cache: every measured fact of this host, replayed and
    appended, with what the previous version kept beside it taken in (once)."""
    return migrate.opened(cache_dir, fingerprint)


def export_wisdom(
    cache_dir: Path, file: Path, fingerprints: Sequence[str], own: str
) -> WisdomReport:
    """The cache's measured facts of the hosts named (all when none), written to `file`."""
    return wisdom.export(cache_dir, file, fingerprints, own)


def import_wisdom(file: Path, cache_dir: Path, own: str, show: Show) -> WisdomReport:
    """A wisdom file checked whole, then merged into the cache."""
    return wisdom.import_file(file, cache_dir, own, show)
