"""`hspc-gen bench`: the tuned header beside the host's peer queues and the limit lines, built in
one Meson project with the user's flags and timed in interleaved rounds, every sample checked.

Each round runs every contender once, in a seeded shuffled order, so that the host's drift
falls on all of them alike; each row's speed over the tuned channel's per-event push + consume
is paired round by round (stats.compare, disturbed rounds set aside as everywhere else). The
events of a contender's samples are sized from a first probe round so that every sample lasts
about SAMPLE_SECONDS: the peers run a hundred times apart in speed.

A contender that does not compile (its translation unit is left out and the rest built again),
crashes or hangs (the executor names it and runs the rounds again without it) is a row with
that status; only flags the compiler rejects, or a build nothing of can run, are the user's to
fix (UserError).

Every round is recorded in the host's record store (search.records.contest_rounds): a re-run with
the same inputs replays the rounds recorded and runs only those it lacks.

No row can outrun the slower side alone (the same work per event, no channel): a row paired with
it surely faster takes as many rounds again, once (`within_bound`), and is unresolved if it stays
so; faster within the noise, it is at the bound (`bounded`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hspc_gen.app_files import headers_digest
from hspc_gen.errors import UserError
from hspc_gen.model import ChannelParams, Figure, Status
from hspc_gen.model.bench import BenchReport, BenchRow, Contender, Role
from hspc_gen.model.result import SIDES_ALONE, slower_side
from hspc_gen.model.workload import Workload
from hspc_gen.search.decisions import stats
from hspc_gen.search.decisions.findings import EFFICIENCY_BOUND, REMEASURED_TOO
from hspc_gen.search.measure import load
from hspc_gen.search.measure.build import CONTEST_CXXFLAGS, Project, build, contest_flags
from hspc_gen.search.measure.harness import Executed, execute, parse_samples, plan_line, variants
from hspc_gen.search.measure.run import isolate
from hspc_gen.search.measure.toolchain import first_error
from hspc_gen.search.records import contest_rounds
from hspc_gen.search.records.samples import RecordKey, Sample, candidate_id
from hspc_gen.search.records.store import RecordStore

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
DEFAULT_CXXFLAGS = CONTEST_CXXFLAGS
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
    render: Callable[[tuple[str, ...]], dict[str, str]]  # the Meson project with these tuned
    # rows (the render stage: render.render_contest_files, bound by cli.bench)
    event_bytes: int
    cxxflags: str = DEFAULT_CXXFLAGS
    rounds: int = DEFAULT_ROUNDS
    quiet: bool = False  # nothing else ran when bench began: rounds measured beside load are not
    # replayed, but measured again


Show = Callable[[str], None]


def project(contest: Contest, rows: Sequence[str] = TUNED_ROWS) -> Project:
    """The contest's sources with the tuned `rows` (the others' unit left out), each row's unit
    named so that the builder can tell whose unit failed."""
    rows = tuple(row for row in TUNED_ROWS if row in rows)
    units = {row: "tuned_asserts.cpp" if row in ASSERTS else "tuned.cpp" for row in rows}
    files = contest.render(rows)
    return Project(files, units, contest_flags(contest.cxxflags).meson_options())


def built(contest: Contest, cache_dir: Path) -> tuple[Path, Mapping[str, str]]:
    """The contest's binary, and the tuned rows left out because their unit did not compile
    (row -> compiler output). A build nothing of can run, or one without the reference (every
    other row is paired against it), is the user's flags or header: one message."""
    ids = [c.id for c in CONTENDERS]
    result = build(lambda ids: project(contest, ids), ids, cache_dir)
    log = result.failed.get(REFERENCE, result.log)
    if result.status is not Status.ok or result.executable is None or REFERENCE in result.failed:
        raise UserError(
            f"the bench did not build with --cxxflags {contest.cxxflags!r}: {first_error(log)}"
        )
    return result.executable, result.failed


def available(executable: Path) -> tuple[tuple[str, ...], tuple[Status, str] | None]:
    """The contenders this build has (a peer whose headers the host lacks is not compiled); or,
    when the binary could not list them, every contender and why none can run."""
    listed = variants(executable)
    if listed.failure is not None:
        return tuple(c.id for c in CONTENDERS), listed.failure
    return tuple(c.id for c in CONTENDERS if c.id in listed.names or c.id in BASELINES), None


def _line(arm: str, round_number: int, events: int, contest: Contest, carrier: str) -> str:
    kind, variant = (arm, carrier) if arm in BASELINES else ("throughput", arm)
    cpus = (contest.params.producer_cpu, contest.params.consumer_cpu)
    return plan_line(f"r{round_number}/{arm} {kind} {variant}", events, cpus, contest.workload)


def plan_text(contest: Contest, events: Mapping[str, int], first: int, rounds: int) -> str:
    """Rounds `first`.. of every arm in `events`, each round in its own seeded order. The
    baselines take the reference's event type, or the whole-buffer line's when the reference
    is not running (it failed)."""
    carrier = REFERENCE if REFERENCE in events else "whole_buffers"
    lines = []
    for r in range(first, first + rounds):
        arms = sorted(events)
        order = np.random.default_rng([SEED, r]).permutation(len(arms))
        lines += [_line(arms[i], r, events[arms[i]], contest, carrier) for i in order]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Measured:
    samples: tuple[Sample, ...]
    failed: Mapping[str, tuple[Status, str]]  # arm -> status, cause
    busy: bool = False  # other processes used the CPUs while these rounds ran


def run_rounds(
    executable: Path, contest: Contest, events: Mapping[str, int], first: int, rounds: int
) -> Measured:
    """Run the rounds through the executor: an arm that crashes or hangs is named (by the
    harness, else by running each arm alone), recorded, and the rounds run again without it."""

    def attempt(left_out: frozenset[str], arms: Sequence[str], count: int) -> Executed:
        live = {arm: events[arm] for arm in arms if arm not in left_out}
        if not live:
            return Executed(Status.ok)
        timeout = len(live) * count * SAMPLE_DEADLINE + 30
        return execute(executable, plan_text(contest, live, first, count), timeout, SAMPLE_DEADLINE)

    arms, before = sorted(events), load.cpu_times()
    found = isolate(
        lambda left_out: attempt(left_out, arms, rounds),
        lambda arm: attempt(frozenset(), [arm], 1),
        arms,
    )
    busy = load.busy(before, load.cpu_times())
    failed = {arm: (status, found.causes.get(arm, "")) for arm, status in found.culprits.items()}
    if found.last.status is not Status.ok:  # no one arm to blame: every one still running failed
        cause = f"the rounds failed with no one contender named: {found.last.log.strip()[-300:]}"
        failed |= {arm: (found.last.status, cause) for arm in arms if arm not in failed}
        return Measured((), failed, busy)
    parsed = parse_samples(found.last.document)
    failed |= {arm: (status, parsed.cause(arm)) for arm, status in parsed.failed.items()}
    kept = tuple(s for s in parsed.samples if s.arm not in parsed.failed)
    return Measured(kept, failed, busy)


def round_key(contest: Contest) -> RecordKey:
    """What the contest's rounds are valid for: its sources and flags, the local headers the
    user's code includes (reached through include folders, not in the project's files), and
    how it runs them."""
    cpus = (contest.params.producer_cpu, contest.params.consumer_cpu)
    how = f"{plan_line('round', 1, cpus, contest.workload)} {candidate_id(contest.params)}"
    work = contest.workload
    headers = headers_digest(p for p in (work.producer_source, work.consumer_source) if p)
    source = project(contest).source_hash + (f"+{headers}" if headers else "")
    return contest_rounds.round_key(
        contest.fingerprint, contest.compiler, contest.cxxflags, source, how
    )


Rounds = Callable[[Mapping[str, int], int, int], Measured]


def recorded_rounds(  # noqa: PLR0917 (run_rounds's, with the store, the key and the load)
    store: RecordStore,
    key: RecordKey,
    run: Rounds,
    events: Mapping[str, int],
    first: int,
    rounds: int,
    *,
    quiet: bool = False,
) -> Measured:
    """Rounds `first`.. replayed where the store holds them (on a `quiet` machine, only those
    measured on a quiet one); the rest `run` and recorded."""
    if not events:  # nothing runs: no round to record
        return Measured((), {})
    replayed = contest_rounds.rounds(store, key, events, first, rounds, quiet=quiet)
    earlier = replayed.failed
    rest = rounds - replayed.count
    if rest == 0:
        return Measured(replayed.samples, earlier)
    live = {arm: n for arm, n in events.items() if arm not in earlier}
    measured = run(live, first + replayed.count, rest) if live else Measured((), {})
    failed = {**earlier, **measured.failed}
    start = first + replayed.count
    contest_rounds.record(
        store, key, events, start, rest, measured.samples, failed, busy=measured.busy
    )
    return Measured((*replayed.samples, *measured.samples), failed)


def sized(probe: Sequence[Sample], arms: Sequence[str]) -> dict[str, int]:
    """Events per sample for each arm, so that a sample lasts about SAMPLE_SECONDS."""
    rate = {s.arm: s.events_per_second for s in probe}
    return {
        arm: int(min(MAX_EVENTS, max(MIN_EVENTS, rate[arm] * SAMPLE_SECONDS)))
        for arm in arms
        if arm in rate
    }


def measure(contest: Contest, cache_dir: Path, show: Show, store: RecordStore) -> BenchReport:
    executable, left_out = built(contest, cache_dir)
    broken = {row: (Status.compile_error, first_error(log)) for row, log in left_out.items()}
    compiled, unlisted = available(executable)
    if unlisted is not None:  # the binary cannot say what it holds: no contender runs
        broken = {arm: broken.get(arm, unlisted) for arm in compiled}
    arms = tuple(c.id for c in CONTENDERS if c.id in compiled or c.id in broken)
    runnable = [arm for arm in compiled if arm not in broken]
    show(f"bench: {len(arms)} contenders, a probe round, then {contest.rounds} rounds")
    key, run = round_key(contest), functools.partial(run_rounds, executable, contest)
    probe_events, quiet = dict.fromkeys(runnable, PROBE_EVENTS), contest.quiet
    probe = recorded_rounds(store, key, run, probe_events, 0, 1, quiet=quiet)
    events = sized(probe.samples, runnable)
    rounds = functools.partial(recorded_rounds, store, key, run, events, 1, quiet=quiet)
    counted = within_bound(rounds, contest.rounds, arms, {**broken, **probe.failed}, show)
    missing = tuple(c.id for c in CONTENDERS if c.role is Role.peer and c.id not in arms)
    return BenchReport(
        target=contest.target,
        fingerprint=contest.fingerprint,
        event_bytes=contest.event_bytes,
        channel=contest.params,
        header=str(contest.header),
        cxxflags=contest.cxxflags,
        compiler=contest.compiler,
        rounds=counted.rounds,
        reference=REFERENCE,
        rows=counted.rows,
        missing=missing,
        remeasured=counted.remeasured,
    )


@dataclass(frozen=True)
class Counted:
    """The rows of the rounds run, how many there were, and the rows measured past the bound
    in the rounds asked for (for which as many more were run)."""

    rows: tuple[BenchRow, ...]
    rounds: int
    remeasured: tuple[str, ...] = ()


def within_bound(
    rounds: Callable[[int], Measured],
    count: int,
    arms: Sequence[str],
    failed: Mapping[str, tuple[Status, str]],
    show: Show,
) -> Counted:
    """The rows of rounds 1..`count` (`rounds(n)`: the first n, replayed or run); when a row
    measured surely faster than the slower side alone, which cannot be, once more with as many
    rounds again (those asked for are replayed): a row still past the bound is unresolved."""
    measured = rounds(count)
    first = rows(measured.samples, arms, {**failed, **measured.failed})
    past = tuple(row.contender.id for row in first if row.unresolved)
    if not past:
        return Counted(first, count)
    show(f"bench: {', '.join(past)} measured faster than a side alone: {count} more rounds")
    measured = rounds(2 * count)
    again = rows(measured.samples, arms, {**failed, **measured.failed})
    return Counted(tuple(_again(row, past, 2 * count) for row in again), 2 * count, past)


def _again(row: BenchRow, past: Sequence[str], count: int) -> BenchRow:
    if not row.unresolved or row.contender.id not in past:
        return row
    return dataclasses.replace(
        row, unresolved=f"{row.unresolved}; {REMEASURED_TOO} ({count} rounds)"
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
        row = BenchRow(contender, Status.ok, _rate(mine), _speed(mine, reference))
        out.append(bounded(row, by_arm))
    return tuple(out)


def bounded(row: BenchRow, by_arm: Mapping[str, Sequence[Sample]]) -> BenchRow:
    """The row held to the slower side alone (producer_alone, consumer_alone: the same work per
    event, measured in the same rounds), which no contender can outrun: its paired ratio over
    the rounds (stats.efficiency) surely above 1, its figures are not given (unresolved); above
    1 within the noise, it is at the bound. The sides themselves are the bound."""
    ratio = stats.efficiency(by_arm, row.contender.id)
    if row.contender.id in SIDES_ALONE or not ratio.median > EFFICIENCY_BOUND:
        return row
    sides = {arm: _rate(by_arm[arm]) for arm in SIDES_ALONE if by_arm.get(arm)}
    side = slower_side(sides)
    measured = f"ratio {ratio.median:.3f}, 95% CI {ratio.ci95_low:.3f} to {ratio.ci95_high:.3f}"
    if ratio.ci95_low > EFFICIENCY_BOUND:
        unresolved = f"measured faster than {side} alone ({measured})"
        return dataclasses.replace(row, rate=None, vs_reference=None, unresolved=unresolved)
    return dataclasses.replace(
        row, at_bound=f"as fast as {side} alone within the noise ({measured})"
    )


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
