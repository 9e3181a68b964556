"""`hspc-gen bench`: the tuned header beside the host's peer queues and the limit lines, built in
one Meson project with the user's flags and timed in interleaved rounds, every sample checked.

Each round runs every contender once, in a seeded shuffled order, so that the host's drift
falls on all of them alike; each row's speed over the tuned channel's per-event push + consume
is paired round by round (stats.compare, disturbed rounds set aside as everywhere else). The
events of a contender's samples are sized from a first probe round so that every sample lasts
about SAMPLE_SECONDS: the peers run a hundred times apart in speed.
"""

from __future__ import annotations

import math
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hspc_gen.errors import UserError
from hspc_gen.model import ChannelParams, Figure, Status
from hspc_gen.model.bench import BenchReport, BenchRow, Contender, Role
from hspc_gen.model.workload import Workload
from hspc_gen.search import stats
from hspc_gen.search.measure.build import Project, build
from hspc_gen.search.measure.harness import death, execute, parse_samples, plan_line
from hspc_gen.search.measure.toolchain import first_error
from hspc_gen.search.records import Sample

REFERENCE = "tuned_consume"
ASSERTS = ("tuned_consume_asserts", "tuned_pop_asserts")
CONTENDERS = (
    Contender(REFERENCE, Role.tuned, "tuned channel: push per event, consume"),
    Contender("tuned_pop", Role.tuned, "tuned channel: push per event, pop per event"),
    Contender("tuned_runs", Role.tuned, "tuned channel: push(ptr, 256), pop(ptr, 256)"),
    Contender("tuned_usage", Role.tuned, "tuned channel as its header shows it (stack offset)"),
    Contender(ASSERTS[0], Role.tuned, "tuned channel: push per event, consume; asserts on"),
    Contender(ASSERTS[1], Role.tuned, "tuned channel: push per event, pop; asserts on"),
    Contender(
        "boost_spsc_bulk", Role.peer, "boost::lockfree::spsc_queue, push(ptr, n)/pop(ptr, n)"
    ),
    Contender("boost_spsc_single", Role.peer, "boost::lockfree::spsc_queue, push/pop"),
    Contender("moodycamel_cq_bulk", Role.peer, "moodycamel::ConcurrentQueue, bulk with tokens"),
    Contender("moodycamel_rwq", Role.peer, "moodycamel::ReaderWriterQueue"),
    Contender("moodycamel_blocking_rwq", Role.peer, "moodycamel::BlockingReaderWriterQueue"),
    Contender("atomic_queue_spsc", Role.peer, "atomic_queue::AtomicQueue2, SPSC"),
    Contender("tbb_bounded_queue", Role.peer, "tbb::concurrent_bounded_queue"),
    Contender("whole_buffers", Role.line, "whole buffers, spinning hand-off: the channel's limit"),
    Contender("p0_parallel", Role.line, "producer and consumer loops alone in parallel (p0)"),
    Contender("producer_alone", Role.line, "producer loop alone"),
    Contender("consumer_alone", Role.line, "consumer loop alone"),
)
BASELINES = frozenset({"p0_parallel", "producer_alone", "consumer_alone"})
TUNED_ROWS = tuple(c.id for c in CONTENDERS if c.role is Role.tuned)
DEFAULT_CXXFLAGS = "-O2 -DNDEBUG"
DEFAULT_ROUNDS = 15
SAMPLE_SECONDS = 0.03
# The harness's watchdog ends a sample past SAMPLE_DEADLINE as hung, whatever its event count (the
# probe's fixed count meets the app's real work, so this is generous); the whole run is bounded by
# every sample reaching it.
SAMPLE_DEADLINE = 10.0
PROBE_EVENTS = 20_000
MIN_EVENTS, MAX_EVENTS = 10_000, 200_000_000
SEED = 20_140_312


@dataclass(frozen=True)
class Contest:
    """What to measure: the tuned point and its header, the app's work, how to build it."""

    target: str
    fingerprint: str
    compiler: str
    params: ChannelParams
    header: Path
    workload: Workload
    files: Mapping[str, str]  # the Meson project, rendered (render.render_contest_files)
    event_bytes: int
    cxxflags: str = DEFAULT_CXXFLAGS
    rounds: int = DEFAULT_ROUNDS


Show = Callable[[str], None]


def project(contest: Contest) -> Project:
    options = ("--buildtype=plain", "-Dwarning_level=2", f"-Dcpp_args={contest.cxxflags}")
    return Project(dict(contest.files), {}, options)


def built(contest: Contest, cache_dir: Path) -> Path:
    """The contest's binary; a build that fails is the user's flags or header: one message."""
    result = build(lambda _ids: project(contest), [], cache_dir)
    if result.status is not Status.ok or result.executable is None:
        raise UserError(
            f"the bench did not build with --cxxflags {contest.cxxflags!r}: "
            f"{first_error(result.log)}"
        )
    return result.executable


def available(executable: Path) -> tuple[str, ...]:
    """The contenders this build has (a peer whose headers the host lacks is not compiled)."""
    done = subprocess.run(
        [str(executable), "--list_variants"], capture_output=True, text=True, check=False
    )
    compiled = set(done.stdout.split())
    return tuple(c.id for c in CONTENDERS if c.id in compiled or c.id in BASELINES)


def _line(arm: str, round_number: int, events: int, contest: Contest) -> str:
    kind, variant = (arm, REFERENCE) if arm in BASELINES else ("throughput", arm)
    cpus = (contest.params.producer_cpu, contest.params.consumer_cpu)
    return plan_line(f"r{round_number}/{arm} {kind} {variant}", events, cpus, contest.workload)


def plan_text(contest: Contest, events: Mapping[str, int], first: int, rounds: int) -> str:
    """Rounds `first`.. of every arm in `events`, each round in its own seeded order."""
    lines = []
    for r in range(first, first + rounds):
        arms = sorted(events)
        order = np.random.default_rng([SEED, r]).permutation(len(arms))
        lines += [_line(arms[i], r, events[arms[i]], contest) for i in order]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Measured:
    samples: tuple[Sample, ...]
    failed: Mapping[str, tuple[Status, str]]  # arm -> status, cause


def run_rounds(
    executable: Path, contest: Contest, events: Mapping[str, int], first: int, rounds: int
) -> Measured:
    """Run the rounds; an arm that crashes or hangs is named by the harness, recorded, and the
    rounds run again without it."""
    live = dict(events)
    failed: dict[str, tuple[Status, str]] = {}
    while live:
        plan = plan_text(contest, live, first, rounds)
        done = execute(executable, plan, len(live) * rounds * SAMPLE_DEADLINE + 30, SAMPLE_DEADLINE)
        if done.status is Status.ok:
            parsed = parse_samples(done.document)
            failed |= {arm: (status, parsed.cause(arm)) for arm, status in parsed.failed.items()}
            kept = tuple(s for s in parsed.samples if s.arm not in parsed.failed)
            return Measured(kept, failed)
        said = death(done.log)
        culprit = said.arm.split("/")[0] if said and said.arm else None
        if culprit not in live or culprit == REFERENCE:
            cause = said.cause if said else done.log.strip()[-300:]
            raise UserError(f"the bench's tuned channel failed ({done.status}): {cause}")
        failed[culprit] = (done.status, said.cause if said else "")
        del live[culprit]
    return Measured((), failed)


def sized(probe: Sequence[Sample], arms: Sequence[str]) -> dict[str, int]:
    """Events per sample for each arm, so that a sample lasts about SAMPLE_SECONDS."""
    rate = {s.arm: s.events_per_second for s in probe}
    return {
        arm: int(min(MAX_EVENTS, max(MIN_EVENTS, rate[arm] * SAMPLE_SECONDS)))
        for arm in arms
        if arm in rate
    }


def measure(contest: Contest, cache_dir: Path, show: Show) -> BenchReport:
    executable = built(contest, cache_dir)
    arms = available(executable)
    show(f"bench: {len(arms)} contenders, a probe round, then {contest.rounds} rounds")
    probe = run_rounds(executable, contest, dict.fromkeys(arms, PROBE_EVENTS), 0, 1)
    measured = run_rounds(executable, contest, sized(probe.samples, arms), 1, contest.rounds)
    failed = {**probe.failed, **measured.failed}
    missing = tuple(c.id for c in CONTENDERS if c.role is Role.peer and c.id not in arms)
    return BenchReport(
        target=contest.target,
        fingerprint=contest.fingerprint,
        event_bytes=contest.event_bytes,
        channel=contest.params,
        header=str(contest.header),
        cxxflags=contest.cxxflags,
        compiler=contest.compiler,
        rounds=contest.rounds,
        reference=REFERENCE,
        rows=rows(measured.samples, arms, failed),
        missing=missing,
    )


def rows(
    samples: Sequence[Sample], arms: Sequence[str], failed: Mapping[str, tuple[Status, str]]
) -> tuple[BenchRow, ...]:
    by_arm = stats.group_by_arm(samples)
    reference = by_arm.get(REFERENCE, [])
    out = []
    for contender in CONTENDERS:
        if contender.id not in arms:
            continue
        if contender.id in failed or not by_arm.get(contender.id):
            status, cause = failed.get(contender.id, (Status.crashed, "no sample"))
            out.append(BenchRow(contender, status, cause=cause))
            continue
        mine = by_arm[contender.id]
        out.append(BenchRow(contender, Status.ok, _rate(mine), _speed(mine, reference)))
    return tuple(out)


def _rate(samples: Sequence[Sample]) -> Figure:
    s = stats.summarize(samples)
    return Figure(s.median, s.ci95_low, s.ci95_high, s.n)


def _speed(samples: Sequence[Sample], reference: Sequence[Sample]) -> Figure | None:
    """Events/s over the reference's, paired by round (the ratio of their times, inverted)."""
    if samples is reference or not reference:
        return None
    c = stats.compare(samples, reference, lambda s: s.ns_per_event)
    if c.n == 0 or not math.isfinite(c.ratio):
        return None
    return Figure(1.0 / c.ratio, 1.0 / c.ci_high, 1.0 / c.ci_low, c.n)
