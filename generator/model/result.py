"""The typed result of a run: what leaves the search, what the header's banner and the reports
read. Computed figures (efficiency, latency, the baselines) are computed in `search`; the
reports only format them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from hspc_gen.model import (
    ChannelParams,
    Effort,
    Figure,
    HostTimings,
    Objective,
    Status,
    Summary,
)
from hspc_gen.model.pool import PoolTuning
from hspc_gen.model.threads import ThreadAdvice, ThreadFailure

SIDES_ALONE = ("producer_alone", "consumer_alone")
"""The baselines that run one side's loop without the channel: the slower is the channel's
bound (the efficiency's 1.0)."""


def slower_side(baselines: Mapping[str, Figure]) -> str:
    """The slower side alone of those measured (by median; on a tie, by name)."""
    sides = [arm for arm in SIDES_ALONE if arm in baselines]
    return min(sides, key=lambda arm: (baselines[arm].median, arm))


@dataclass(frozen=True)
class Step:
    """One decision of the trail: a batch's winner, how sure, and what was left out and why."""

    stage: str
    step: str
    winner: str | None
    ties: tuple[str, ...]
    noise_floor: float  # the A/A minimum detectable effect (inf: too few A/A rounds)
    margin: float  # δ: the least difference called real
    precision: float  # the difference this decision could resolve
    rounds: int
    excluded: Mapping[str, Status] = field(default_factory=dict)
    proposed: int = 0  # the candidates the strategy proposed for the step
    screened: int = 0  # those measured: the rest the budget left out (nearest the best kept)
    seconds: float = 0.0  # what the step took in this run (builds and measuring; ~0 replayed)
    disturbed: float = 0.0  # the share of its samples whose threads waited for a CPU
    planned_rounds: int = 0  # the most rounds the step would run
    cut: bool = False  # the budget stopped its race before it settled or reached planned_rounds
    baselines: Mapping[str, Summary] = field(default_factory=dict)
    """The limit lines timed in the step's own rounds (producer_alone, consumer_alone, p0_parallel,
    and with work optimal, achievable, upper_bound): the roadmap's reference bars."""
    host_noise: float = math.nan
    """The half-width of the producer-alone / consumer-alone interval in the step's rounds: the
    noise of two single-threaded programs without a channel, so the host's own (NaN without
    both baselines). An A/A floor near it is the host's, not the channel's."""


@dataclass(frozen=True)
class CandidateResult:
    """One candidate of one step: its parameters, what became of it, and its measured rate."""

    id: str
    stage: str
    step: str
    params: ChannelParams
    status: Status
    dropped_after_round: int | None
    won_step: bool
    rate: Summary | None
    cost_vs_winner: Figure | None = None
    """Its cost over its step winner's, paired by round (1.05: 5% slower); None for the winner
    and for a candidate without paired rounds."""


@dataclass(frozen=True)
class Failure:
    """A candidate (or baseline) that failed, how, and why in words that name whose code was
    running: "fatal signal SIGSEGV in the user's consumer code (hspc_consume)"."""

    id: str
    status: Status
    cause: str


@dataclass(frozen=True)
class Confirmed:
    """The winner re-measured in a fresh process with a new seed: the figures reported."""

    winner_id: str | None
    rate: Summary | None
    latency_ns: Figure | None  # the latency objective's paced push-to-pop time
    efficiency: Figure | None  # the slower side alone over the pair, per round; 1.0 is perfect
    baselines: Mapping[str, Summary]  # producer_alone, consumer_alone, optimal, ...
    decision: Step
    latency_bound_ns: float | None = None  # constraints.max_latency_us, when it was checked
    latency_p99_ns: Figure | None = None  # the winner's p99 wait under a paced load
    unresolved: str = ""
    """Why the efficiency is not reported although it was measured: the channel measured surely
    faster than a side alone (its interval above 1, which cannot be), in the confirmation and
    again when re-measured."""
    at_bound: str = ""
    """What was measured when the efficiency's median came out above 1 but its interval did
    not: reported at the bound (1.0), as fast as the slower side alone within the noise."""
    remeasured: str = ""
    """Why the winner was measured again, when its figures come from that second measurement
    (the confirmation's were past the bound)."""

    @property
    def sound(self) -> bool:
        """Whether the figures are within what can be, as measured."""
        return not (self.unresolved or self.at_bound)

    @property
    def doubted_sides(self) -> tuple[str, ...]:
        """The sides alone (producer_alone, consumer_alone) the doubt about these figures is
        about: the slower one, which the efficiency holds the channel to, and, at the bound, any
        other measured within the noise of the channel (its interval overlapping the
        channel's); none when the figures are sound. A side many times faster than the channel
        is not doubted."""
        sides = {arm: f for arm in SIDES_ALONE if (f := self.baselines.get(arm)) is not None}
        if self.sound or not sides:
            return ()
        slower = slower_side(sides)
        rate = self.rate
        if self.unresolved or rate is None:
            return (slower,)
        return tuple(arm for arm in sides if arm == slower or sides[arm].overlaps(rate))


@dataclass(frozen=True)
class SearchResult:
    """What the search found, and how it went."""

    winner: ChannelParams
    confirmed: Confirmed | None  # None: nothing was measured within the budget
    trail: tuple[Step, ...]
    candidates: tuple[CandidateResult, ...]
    failures: tuple[Failure, ...]  # sorted by id
    budget_exhausted: bool
    measured_plans: int
    cached_plans: int
    seed: int
    oversubscribed: bool
    step_left_out: bool = False  # the budget left a whole step out (budget_exhausted says so too)
    placement: str = ""
    """Where the winner's threads run, in words: unpinned, the measured class of CPU pairs its
    CPUs represent (e.g. shared_l3), or pinned (sysfs's choice, or `--set`'s)."""
    remeasured_plans: int = 0
    """Of `measured_plans`: recorded beside other load, measured again on a quiet machine."""


@dataclass(frozen=True)
class RunInfo:
    """What was asked, where, and by which version of the tool."""

    target: str
    event_bytes: int
    objective: Objective
    effort: Effort
    budget_seconds: float
    elapsed_seconds: float
    host: Mapping[str, object]  # the host's topology, as `hspc-gen host --json` prints it
    host_model: str
    fingerprint: str
    tool_version: str
    other_cpus: float = 0.0  # CPUs' worth other processes used just before measuring
    busy: bool = False
    notes: tuple[str, ...] = ()  # what a person should know: unread records, oversubscription
    timings: HostTimings | None = None  # what waiting costs here: the spin budgets' source
    max_latency_us: float | None = None  # constraints.max_latency_us, as app.yaml asked it


@dataclass(frozen=True)
class TuneResult:
    """One run of `hspc-gen --target`: the chosen channel, the search behind it (None for
    --effort estimate), the thread advice, and the adaptive pool's parameters (None unless
    app.yaml asks for threads.consumers: adaptive)."""

    run: RunInfo
    winner: ChannelParams
    search: SearchResult | None
    threads: ThreadAdvice | ThreadFailure
    pool: PoolTuning | None = None


@dataclass(frozen=True)
class Compared:
    """One distinct winner of earlier runs, re-measured by `hspc-gen compare`."""

    labels: tuple[str, ...]  # the results that name this winner, in the order they were given
    params: ChannelParams
    rate: Summary | None
    speed_vs_first: Figure | None  # the first's cost over this one's: above 1, this is faster
    status: Status = Status.ok  # why it has no rate, when it was measured and has none


@dataclass(frozen=True)
class Comparison:
    rounds: int  # the paired rounds measured: 0 when nothing was, or its measuring failed
    results: tuple[Compared, ...]  # one per distinct winner, in the order first named
    aa: Figure | None = None
    """The A/A check: an independent copy of the first winner timed in the same rounds, its
    speed vs the first (as `speed_vs_first`). How far apart this host puts two copies of one
    program: a speed inside that spread cannot be told from the host's own noise."""
    measured: bool = True  # False: every result names one winner, and --aa did not ask

    @property
    def same_winner(self) -> bool:
        return len(self.results) == 1

    @property
    def unmeasured(self) -> tuple[Compared, ...]:
        """The winners whose measuring failed (none when nothing was to be measured)."""
        return tuple(row for row in self.results if row.status is not Status.ok)
