"""Racing (irace style): run a batch in chunks of rounds and drop the clear losers between chunks.

A candidate is dropped only when both tests agree that it costs more than the current best: the
one-sided Wilcoxon signed-rank test at RACING_ALPHA, and the bootstrap interval of the cost ratio
lying wholly above 1 + δ. Neither fires before MIN_ROUNDS paired rounds. Everything is a function
of the samples, so the same samples always drop the same candidates.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from hspc_gen.model import Objective, Status
from hspc_gen.search.decisions import stats
from hspc_gen.search.decisions.decide import (
    SamplesByArm,
    is_equivalent,
    metric_for,
    noise_floor,
    pick_winner,
)
from hspc_gen.search.measure.plan import Plan, Runner, RunResult, make_plan
from hspc_gen.search.records.samples import Candidate, Sample, aa_arm, latency_arm
from hspc_gen.search.strategies.base import Batch, StepResult


def current_best(
    live: Sequence[str], samples_by_arm: SamplesByArm, metric: stats.Metric, reference: str
) -> str:
    """The live arm of lowest paired cost (Hodges-Lehmann) against the common reference."""
    ref = samples_by_arm.get(reference, ())

    def estimate(arm: str) -> float:
        if arm == reference:
            return 0.0
        return stats.paired_estimate(samples_by_arm.get(arm, ()), ref, metric)

    return min(live, key=lambda a: (estimate(a), a))


def clearly_worse(d_vs_best: np.ndarray, delta: float, alpha: float) -> bool:
    if d_vs_best.size < stats.MIN_ROUNDS:
        return False
    # The rank test is cheap; the bootstrap runs only for candidates it already flags.
    if stats.wilcoxon_greater(d_vs_best) >= alpha:
        return False
    low, _ = stats.bootstrap_interval(d_vs_best)
    return low > math.log1p(delta)


def losers(
    samples_by_arm: SamplesByArm,
    live: Sequence[str],
    *,
    objective: Objective,
    incumbent: str,
    delta: float,
    alpha: float = stats.RACING_ALPHA,
) -> tuple[str, ...]:
    """The live candidates clearly worse than the current best; the incumbent is never dropped
    (it is the A/A reference of every later round)."""
    metric = metric_for(objective)
    unverified = {a for a in live if any(not s.verified for s in samples_by_arm.get(a, ()))}
    contenders = [a for a in live if a not in unverified]
    if not contenders:
        return tuple(sorted(unverified - {incumbent}))
    best = current_best(contenders, samples_by_arm, metric, incumbent)
    best_samples = samples_by_arm.get(best, ())
    worse = {
        a
        for a in contenders
        if a != best
        and clearly_worse(
            stats.paired_log_ratios(samples_by_arm.get(a, ()), best_samples, metric),
            delta,
            alpha,
        )
    }
    # A wrong answer can never win: stop spending rounds on it.
    return tuple(sorted((worse | unverified) - {incumbent}))


@dataclass(frozen=True)
class PlanCounts:
    """How the plans of a search were answered: measured now, replayed from the records; and
    whether the budget stopped one (a cut, recorded so that a replay stops there too)."""

    measured: int = 0
    replayed: int = 0
    cut: bool = False
    remeasured: int = 0  # of `measured`: recorded beside other load, measured again when quiet

    @classmethod
    def of(cls, result: RunResult) -> PlanCounts:
        cut = result.status is Status.skipped
        if result.replayed:
            return cls(0, 0 if cut else 1, cut)
        return cls(0 if cut else 1, 0, cut, int(result.remeasured and not cut))

    def __add__(self, other: PlanCounts) -> PlanCounts:
        return PlanCounts(
            self.measured + other.measured,
            self.replayed + other.replayed,
            self.cut or other.cut,
            self.remeasured + other.remeasured,
        )


@dataclass(frozen=True)
class RaceResult:
    """All samples of a raced batch, which arms were dropped (arm -> last round it ran), why it
    stopped, and the per-arm failures the runner reported."""

    samples: tuple[Sample, ...]
    status: Status
    rounds: int
    dropped: Mapping[str, int] = field(default_factory=dict)
    arm_status: Mapping[str, Status] = field(default_factory=dict)
    plans: tuple[Plan, ...] = ()
    log: str = ""
    counts: PlanCounts = PlanCounts()
    causes: Mapping[str, str] = field(default_factory=dict)  # why a failed arm failed


@dataclass(frozen=True)
class RaceSettings:
    rounds: int
    events_per_sample: int
    seed: int
    objective: Objective
    baselines: tuple[str, ...] = ()
    chunk: int = stats.MIN_ROUNDS
    """Rounds per runner call: racing looks at the samples between chunks."""
    drop: bool = True
    """False for a confirmation: every arm runs every round, even a lone one."""
    latency_bound_ns: float | None = None
    """constraints.max_latency_us, in ns, when this race must check it: every candidate also
    runs a paced latency arm, and one whose p99 exceeds the bound is excluded."""


@dataclass
class _Race:
    """What a race has gathered so far (local to one `race` call)."""

    live: list[str]
    first: int = 0
    samples: list[Sample] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    arm_status: dict[str, Status] = field(default_factory=dict)
    plans: list[Plan] = field(default_factory=list)
    counts: PlanCounts = PlanCounts()
    causes: dict[str, str] = field(default_factory=dict)

    def absorb(self, plan: Plan, result: RunResult) -> None:
        self.plans.append(plan)
        self.counts += PlanCounts.of(result)
        self.samples.extend(result.samples)
        self.arm_status.update(result.arm_status)
        self.causes.update(result.causes)

    def prune(self, incumbent: str, objective: Objective) -> None:
        gone = _drop(self.samples, self.live, incumbent, objective, self.arm_status)
        self.dropped.update(dict.fromkeys(gone, self.first - 1))
        self.live = [a for a in self.live if a not in gone]

    def result(self, status: Status, log: str = "") -> RaceResult:
        return RaceResult(
            tuple(self.samples),
            status,
            self.first,
            dict(self.dropped),
            dict(self.arm_status),
            tuple(self.plans),
            log,
            self.counts,
            dict(self.causes),
        )


def race(
    batch: Sequence[Candidate], incumbent: str, settings: RaceSettings, run: Runner
) -> RaceResult:
    """Run `batch` for up to `settings.rounds` rounds, dropping losers between chunks.

    A failed run (compile_error, crashed, timeout) ends the race with that status and the samples
    gathered so far. The race also ends when only the incumbent is left.
    """
    state = _Race([c.id for c in batch])
    while state.first < settings.rounds and (len(state.live) > 1 or not settings.drop):
        plan = make_plan(
            batch,
            incumbent=incumbent,
            baselines=settings.baselines,
            rounds=min(settings.chunk, settings.rounds - state.first),
            events_per_sample=settings.events_per_sample,
            seed=settings.seed,
            first_round=state.first,
            live=state.live,
            latency=settings.latency_bound_ns is not None,
        )
        result = run(plan)
        state.absorb(plan, result)
        if result.status is Status.skipped:  # the budget ran out: decide on the rounds run
            return state.result(Status.ok if state.samples else Status.skipped, result.log)
        state.first += plan.rounds
        if result.status is not Status.ok:
            return state.result(result.status, result.log)
        if settings.drop:
            state.prune(incumbent, settings.objective)
            if _settled(state.samples, state.live, incumbent, settings.objective):
                break
    return state.result(Status.ok)


def _settled(
    samples: Sequence[Sample], live: Sequence[str], incumbent: str, objective: Objective
) -> bool:
    """True when every live arm is shown equivalent to the incumbent (its whole interval within
    ±δ, with δ itself small): more rounds cannot separate them, and the tie order decides."""
    by_arm = stats.group_by_arm(samples)
    metric = metric_for(objective)
    delta = stats.margin(noise_floor(by_arm, aa_arm(incumbent), metric))
    if delta > stats.SETTLE_MAX_MARGIN:
        return False  # too few or too noisy rounds: "equivalent" would mean nothing yet
    reference = by_arm.get(incumbent, ())
    return all(
        is_equivalent(stats.compare(by_arm.get(a, ()), reference, metric), delta)
        for a in live
        if a != incumbent
    )


def _drop(
    samples: Sequence[Sample],
    live: Sequence[str],
    incumbent: str,
    objective: Objective,
    arm_status: Mapping[str, Status],
) -> tuple[str, ...]:
    by_arm = stats.group_by_arm(samples)
    noise = noise_floor(by_arm, aa_arm(incumbent), metric_for(objective))
    failed = {a for a in live if arm_status.get(a, Status.ok) is not Status.ok} - {incumbent}
    healthy = [a for a in live if a not in failed]
    beaten = losers(
        by_arm, healthy, objective=objective, incumbent=incumbent, delta=stats.margin(noise)
    )
    return tuple(sorted(failed | set(beaten)))


@dataclass(frozen=True)
class Evaluation:
    """A batch raced and decided: the strategy's history entry, the samples behind it, and how
    its plans (the sizing probe's too) were answered."""

    step: StepResult
    race: RaceResult
    counts: PlanCounts = PlanCounts()


def race_and_decide(
    batch: Batch,
    run: Runner,
    *,
    settings: RaceSettings,
    oversubscribed: bool,
    failed: RunResult | None = None,
) -> Evaluation:
    """Race the batch for `batch.rounds` rounds, then decide among its candidates; or, given a
    `failed` run of its incumbent (the sizing probe's), decide on nothing: the reference of
    every paired ratio failed.

    `settings.rounds` is ignored: the strategy's batch says how many rounds it wants.
    """
    race_settings = dataclasses.replace(settings, rounds=batch.rounds)
    if failed is not None:
        raced = RaceResult((), failed.status, 0, {}, failed.arm_status, (), failed.log)
        raced = dataclasses.replace(raced, causes=failed.causes)
    else:
        raced = race(batch.candidates, batch.incumbent.id, race_settings, run)
    if settings.latency_bound_ns is not None:
        raced = over_the_bound(raced, batch, settings.latency_bound_ns)
    decision = pick_winner(
        stats.group_by_arm(raced.samples),
        settings.objective,
        aa_arm(batch.incumbent.id),
        oversubscribed=oversubscribed,
        candidates={c.id: c.params for c in batch.candidates},
        statuses=_statuses(batch, raced),
        prior=batch.incumbent.params,
    )
    return Evaluation(StepResult(batch, decision), raced, raced.counts)


def over_the_bound(raced: RaceResult, batch: Batch, bound_ns: float) -> RaceResult:
    """The race with every candidate whose events waited too long marked misses_latency: the
    median over rounds of its latency arm's 99th percentile, above the bound."""
    by_arm = stats.group_by_arm(raced.samples)
    statuses, causes = dict(raced.arm_status), dict(raced.causes)
    for candidate in batch.candidates:
        p99 = stats.latency_p99(by_arm.get(latency_arm(candidate.id), ()))
        if bound_ns < p99 < math.inf and candidate.id not in statuses:  # measured, too long
            statuses[candidate.id] = Status.misses_latency
            causes[candidate.id] = (
                f"99% of events waited at most {p99 / 1e3:.3g} us (median over rounds), above"
                f" constraints.max_latency_us ({bound_ns / 1e3:g} us)"
            )
    return dataclasses.replace(raced, arm_status=statuses, causes=causes)


def _statuses(batch: Batch, raced: RaceResult) -> dict[str, Status]:
    """A failed run fails every arm it did not finish; per-arm failures stand as reported."""
    out: dict[str, Status] = {}
    if raced.status is not Status.ok:
        out.update(dict.fromkeys((c.id for c in batch.candidates), raced.status))
    out.update(raced.arm_status)
    return out
