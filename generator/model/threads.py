"""The thread-count recommendation as the run's result carries it: counts and CPUs, the evidence
behind a measured one, or why it could not be measured."""

from __future__ import annotations

from dataclasses import dataclass

from hspc_gen.model import ChannelParams, Figure, Status
from hspc_gen.model.pool import PoolTuning

UNPINNED_PLACEMENT = "unpinned"
FIXED = "fixed"
"""The termination of a search whose counts the target fixes (no other count is searched)."""
SHOWN_ROUNDS = 12
"""Paired rounds beside the best a count needs before its interval can show it as good as the best:
a bootstrap interval over fewer is too narrow when one of them carries a heavy-tail sample."""


@dataclass(frozen=True)
class Capacity:
    """What the host can run at once, as the thread search saw it."""

    cpus: int
    cores: int
    threads_per_core: int
    packages: int
    llc_groups: int
    cpu_quota: float | None
    core_equivalents: float
    virtual: bool


@dataclass(frozen=True)
class ThreadEstimate:
    """The first estimate the ramp started near (Goetz's N per producer group)."""

    producers: int
    consumers_per_producer: int
    threads: int


@dataclass(frozen=True)
class VersusBest:
    """A count's throughput over the best count's, paired by round (1.0 for the best itself)."""

    gain: float
    low: float
    high: float
    rounds: int


@dataclass(frozen=True)
class CurvePoint:
    """One measured thread configuration: throughput and the OS metrics Thread Reinforcer reads."""

    producers: int
    consumers: int
    placement: str
    events_per_s: float
    ci95_low: float
    ci95_high: float
    samples: int
    cpu_utilisation: float  # CPUs busy: CPU seconds per wall second, all threads
    voluntary_switches_per_s: float
    migrations_per_s: float
    wait_fraction: float  # share of the threads' time spent waiting in the channel
    vs_best: VersusBest | None = None  # None: never run beside the best in enough rounds

    @property
    def threads(self) -> int:
        return self.producers + self.consumers

    def within(self, line: float) -> bool:
        """Whether the measurements show this count at or above `line` (a share of the best):
        its throughput over the best's, paired round by round, has a 95% interval wholly at or
        above the line, over SHOWN_ROUNDS rounds at least. A count never run beside the best
        (or too briefly) shows nothing."""
        v = self.vs_best
        if v is None or v.low < line:
            return False
        return v.rounds >= SHOWN_ROUNDS or v.low == v.high  # the best itself: 1.0 exactly


@dataclass(frozen=True)
class PlacementTrial:
    """One pinned placement measured against unpinned in the same rounds (gain > 1: faster)."""

    placement: str
    producer_cpus: tuple[int, ...]
    consumer_cpus: tuple[int, ...]
    gain: float
    low: float
    high: float


@dataclass(frozen=True)
class ThreadEvidence:
    capacity: Capacity
    estimate: ThreadEstimate
    tolerance: float
    margin: float
    termination: str  # what stopped the search
    curve: tuple[CurvePoint, ...]  # every unpinned count measured, in count order
    placements: tuple[PlacementTrial, ...]
    rounds: int
    oversubscription: str | None = None  # why counts past the CPUs were searched; None: not
    resolution: float | None = None  # the step between counts the search resolved (0.044: 4.4%)
    judged: frozenset[tuple[int, int]] | None = None
    """The (producers, consumers) counts judged equally good when the evidence was read back
    from a document: its intervals are rounded there, too coarse to judge again (None: judged
    from the curve, as measured)."""

    @property
    def equally_good(self) -> tuple[CurvePoint, ...]:
        """The counts measured as good as the best: each one's paired 95% interval against the
        best lies at or above 1 - tolerance (the test the recommendation passed: it is the one
        of them with the fewest threads). Several means the curve is flat there: any of them
        will do, and runs that differ by noise may recommend any of them."""
        if self.judged is not None:
            return tuple(p for p in self.curve if (p.producers, p.consumers) in self.judged)
        return tuple(p for p in self.curve if p.within(1.0 - self.tolerance))


@dataclass(frozen=True)
class ThreadAdvice:
    """How many producers and consumers, and where: measured (with its evidence) or estimated
    from the topology. The generated header's kProducers, kConsumers, ... come from here."""

    producers: int
    consumers: int
    consumers_per_producer: int
    producer_cpus: tuple[int, ...]  # pinned: one per producer; unpinned: the affinity mask
    consumer_cpus: tuple[int, ...]
    pinned: bool
    placement: str = UNPINNED_PLACEMENT
    taskset: str = ""  # for `taskset -c`: every CPU the threads may use (measured advice)
    omp_places: str = ""  # OMP_PLACES for the same CPUs (measured advice)
    evidence: ThreadEvidence | None = None  # None: estimated, not measured
    work_ns: tuple[float, float] | None = None  # one pair's measured producer, consumer work

    @property
    def measured(self) -> bool:
        return self.evidence is not None

    @property
    def equally_good(self) -> tuple[tuple[int, int], ...]:
        """The (producers, consumers) counts equally good, in count order, the recommendation
        always among them: the evidence's list, and the recommended count where the curve has no
        unpinned point of it (counts the target fixes, when nothing raced them unpinned); empty
        for estimated advice."""
        if self.evidence is None:
            return ()
        good = {(p.producers, p.consumers) for p in self.evidence.equally_good}
        good.add((self.producers, self.consumers))
        return tuple(sorted(good, key=lambda c: (c[0] + c[1], c[0])))

    @property
    def how(self) -> str:
        """One line for the header: measured (and what stopped the search) or estimated."""
        if self.evidence is None:
            return "estimated, not measured"
        return f"measured; the search stopped at: {self.evidence.termination}"


@dataclass(frozen=True)
class ThreadFailure:
    """The thread search could not measure (the build failed, the benchmark crashed or hung):
    the header keeps the estimated advice, and the result says why."""

    status: Status
    error: str


@dataclass(frozen=True)
class SweepPoint:
    """`hspc-gen threads --sweep`: one producer count measured beside the recommendation."""

    producers: int
    consumers: int
    pinned: bool
    recommended: bool
    rate: Figure


@dataclass(frozen=True)
class ThreadsReport:
    """What `hspc-gen threads` found for one channel on this host."""

    target: str
    fingerprint: str
    channel: ChannelParams
    advice: ThreadAdvice | ThreadFailure
    sweep: tuple[SweepPoint, ...] = ()
    pool: PoolTuning | None = None  # threads.consumers: adaptive: kPoolTuning for the advice
