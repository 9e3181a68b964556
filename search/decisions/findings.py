"""What the search found, as the model's typed values: every decision, every candidate with its
status, and the confirmation's figures (throughput, latency, efficiency, the baselines). The
figures are computed here, once; reports and the header's banner only format them."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

from hspc_gen.model import ChannelParams, Figure, Objective, Status, Summary
from hspc_gen.model.result import (
    SIDES_ALONE,
    CandidateResult,
    Compared,
    Comparison,
    Confirmed,
    Failure,
    Step,
    slower_side,
)
from hspc_gen.search.decisions import stats
from hspc_gen.search.decisions.decide import metric_for
from hspc_gen.search.racing import Evaluation
from hspc_gen.search.records.samples import BASELINE_ARMS, Sample, aa_arm, latency_arm


def step(evaluation: Evaluation, proposed: int = 0, seconds: float = 0.0) -> Step:
    """One decision of the trail; `proposed` is the step's size before the budget trimmed it,
    `seconds` what it took in this run."""
    batch, decision = evaluation.step.batch, evaluation.step.decision
    samples = evaluation.race.samples
    disturbed = sum(1 for s in samples if s.disturbed)
    return Step(
        stage=batch.stage,
        step=batch.step,
        winner=decision.winner,
        ties=decision.ties,
        noise_floor=decision.noise_floor,
        margin=decision.delta,
        precision=decision.precision,
        rounds=evaluation.race.rounds,
        excluded=dict(decision.excluded),
        proposed=max(proposed, len(batch.candidates)),
        screened=len(batch.candidates),
        seconds=seconds,
        disturbed=disturbed / len(samples) if samples else 0.0,
        planned_rounds=batch.rounds,
        cut=evaluation.counts.cut,
        baselines={
            arm: summary
            for arm in BASELINE_ARMS
            if (summary := _measured(decision.summaries.get(arm))) is not None
        },
        host_noise=host_noise(samples),
    )


def host_noise(samples: Sequence[Sample]) -> float:
    """How far the two single-threaded baselines' paired ratio could be told from its estimate
    in these rounds (Step.host_noise); NaN without both."""
    by_arm = stats.group_by_arm(samples)
    producer, consumer = by_arm.get("producer_alone"), by_arm.get("consumer_alone")
    if not producer or not consumer:
        return math.nan
    comparison = stats.compare(producer, consumer, metric_for(Objective.throughput))
    return comparison.half_width if comparison.n >= stats.MIN_ROUNDS else math.nan


def status_of(arm: str, evaluation: Evaluation) -> Status:
    """A failure the run reported, else why the decision left the arm out, else its race's."""
    failed = evaluation.race.arm_status.get(arm)
    if failed is not None and failed is not Status.ok:
        return failed
    excluded = evaluation.step.decision.excluded.get(arm)
    if excluded is not None:
        return excluded
    return Status.ok if arm in evaluation.step.decision.summaries else evaluation.race.status


def candidates(evaluations: Sequence[Evaluation]) -> tuple[CandidateResult, ...]:
    rows = []
    for evaluation in evaluations:
        batch, decision = evaluation.step.batch, evaluation.step.decision
        for c in batch.candidates:
            rows.append(
                CandidateResult(
                    id=c.id,
                    stage=batch.stage,
                    step=batch.step,
                    params=c.params,
                    status=status_of(c.id, evaluation),
                    dropped_after_round=evaluation.race.dropped.get(c.id),
                    won_step=c.id == decision.winner,
                    rate=_measured(decision.summaries.get(c.id)),
                    cost_vs_winner=_versus(decision.intervals.get(c.id)),
                )
            )
    return tuple(rows)


def failures(evaluations: Sequence[Evaluation]) -> tuple[Failure, ...]:
    """Every arm a run reported failed, once (the first cause given), sorted."""
    found: dict[tuple[str, Status], str] = {}
    for e in evaluations:
        for arm, status in e.race.arm_status.items():
            if status is not Status.ok:
                found.setdefault((arm, status), _cause(e, arm, status))
    return tuple(Failure(arm, status, cause) for (arm, status), cause in sorted(found.items()))


def _cause(evaluation: Evaluation, arm: str, status: Status) -> str:
    said = evaluation.race.causes.get(arm, "").strip()
    return said or {Status.wrong_answer: "events lost, duplicated or out of order"}.get(status, "")


def confirmed(
    evaluation: Evaluation,
    winner: ChannelParams,
    objective: Objective,
    latency_bound_ns: float | None = None,
    remeasured: Evaluation | None = None,
) -> Confirmed:
    """The confirmation's figures for the winner, with its baselines, from that run only; or,
    when they put the channel past its physical bound and the winner was measured again
    (`remeasured`), that measurement's unless it is further from the truth (the decision
    stays the confirmation's). Past the bound both times and surely: unresolved."""
    first = _figures(evaluation, winner, objective, latency_bound_ns)
    if remeasured is None or first.sound:
        return first
    second = _figures(remeasured, winner, objective, latency_bound_ns)
    if first.unresolved and (second.rate is None or second.unresolved):
        return dataclasses.replace(first, unresolved=f"{first.unresolved}; {REMEASURED_TOO}")
    if second.rate is None or _doubt(second) > _doubt(first):
        return first
    why = first.unresolved or first.at_bound
    return dataclasses.replace(second, decision=first.decision, remeasured=why)


def _doubt(figures: Confirmed) -> int:
    return 2 if figures.unresolved else 1 if figures.at_bound else 0


REMEASURED_TOO = "measured again, the same"
EFFICIENCY_BOUND = 1.0
"""The pair cannot move events faster than its slower side alone: an efficiency surely above
this is a measurement that went wrong (baselines on other CPUs, a host that moved), and one
whose median is above it but not its interval is as fast as the slower side within the noise."""


def _figures(
    evaluation: Evaluation, winner: ChannelParams, objective: Objective, bound: float | None
) -> Confirmed:
    summaries = evaluation.step.decision.summaries
    winner_id = next((c.id for c in evaluation.step.batch.candidates if c.params == winner), None)
    samples = stats.group_by_arm(evaluation.race.samples)
    latency = objective is Objective.latency
    figures: Mapping[str, Summary] = {
        arm: summary
        for arm in BASELINE_ARMS
        if (summary := _measured(summaries.get(arm))) is not None
    }
    rate = _measured(summaries.get(winner_id or ""))
    efficiency = None
    if winner_id and not latency:
        efficiency = _figure(stats.efficiency(samples, winner_id))
    past = past_bound(efficiency, rate, figures)
    sure = efficiency is not None and efficiency.ci95_low > EFFICIENCY_BOUND
    return Confirmed(
        winner_id=winner_id,
        rate=rate,
        latency_ns=_figure(stats.latency(samples.get(winner_id or "", ()))) if latency else None,
        efficiency=None if sure else _bounded(efficiency),
        baselines=figures,
        decision=step(evaluation),
        latency_bound_ns=bound,
        latency_p99_ns=_p99(samples.get(latency_arm(winner_id or ""), ())),
        unresolved=past if sure else "",
        at_bound="" if sure else past,
    )


def past_bound(
    efficiency: Figure | None, rate: Summary | None, baselines: Mapping[str, Summary]
) -> str:
    """What puts these figures past the bound, or "": the channel measured faster than its
    slower side alone (an efficiency above 1)."""
    if efficiency is None or not efficiency.median > EFFICIENCY_BOUND:
        return ""
    sides = {arm: baselines[arm] for arm in SIDES_ALONE if arm in baselines}
    said = (
        f"efficiency {efficiency.median:.3f} (95% CI {efficiency.ci95_low:.3f} to"
        f" {efficiency.ci95_high:.3f})"
    )
    if rate is not None and sides:
        slower = slower_side(sides)
        said += f": {versus_side(rate, slower, sides[slower])}"
    return said


def versus_side(rate: Figure, arm: str, side: Figure) -> str:
    """The channel's rate beside a side alone's, in words that the figures as printed bear out:
    both at one precision, fine enough to show which is higher; "as fast as ... within the
    noise" when their intervals overlap."""
    ours, theirs = _apart(rate.median / 1e6, side.median / 1e6)
    measured = f"the channel measured {ours} M events/s"
    if rate.overlaps(side):
        return f"{measured}, as fast as {arm} at {theirs} M within the noise"
    if rate.median > side.median:
        return f"{measured}, faster than {arm} at {theirs} M"
    return f"{measured}, {arm} {theirs} M; paired round by round, the channel came out faster"


MOST_DECIMALS = 6


def _apart(a: float, b: float) -> tuple[str, str]:
    """a and b with as many decimals as tell them apart (three significant digits of the
    smaller at least, six decimals at most)."""
    small = min(abs(a), abs(b))
    decimals = 0
    if 0 < small < math.inf:
        decimals = min(MOST_DECIMALS, max(0, 2 - math.floor(math.log10(small))))
    while f"{a:.{decimals}f}" == f"{b:.{decimals}f}" and decimals < MOST_DECIMALS:
        decimals += 1
    return f"{a:.{decimals}f}", f"{b:.{decimals}f}"


def _bounded(efficiency: Figure | None) -> Figure | None:
    """The estimate within what can be: the bound caps the interval (its part above holds no
    true value) and the median (the constrained estimate of one measured past it)."""
    if efficiency is None:
        return None
    high = min(efficiency.ci95_high, EFFICIENCY_BOUND)
    return dataclasses.replace(efficiency, median=min(efficiency.median, high), ci95_high=high)


def _p99(samples: Sequence[Sample]) -> Figure | None:
    """The median over rounds of the 99th-percentile waits, with its interval."""
    values = np.array([s.latency_p99_ns for s in samples if s.latency_p99_ns], dtype=float)
    if values.size == 0:
        return None
    low, high = stats.bootstrap_interval(values, stats.median)
    return Figure(float(np.median(values)), low, high, int(values.size))


def _measured(summary: Summary | None) -> Summary | None:
    return None if summary is None or summary.n == 0 else summary


def _versus(comparison: stats.Comparison | None) -> Figure | None:
    if comparison is None or comparison.n == 0:
        return None
    return Figure(comparison.ratio, comparison.ci_low, comparison.ci_high, comparison.n)


def _figure(figure: Figure) -> Figure | None:
    return None if figure.n == 0 or math.isnan(figure.median) else figure


def named_winners(labels: Sequence[str], winners: Sequence[ChannelParams]) -> tuple[Compared, ...]:
    """The distinct winners, in the order first named, each with every result that names it;
    not measured yet."""
    named: dict[ChannelParams, list[str]] = {}
    for label, params in zip(labels, winners, strict=True):
        named.setdefault(params, []).append(label)
    return tuple(Compared(tuple(names), params, None, None) for params, names in named.items())


def comparison(
    evaluation: Evaluation, named: Sequence[Compared], objective: Objective
) -> Comparison:
    """`hspc-gen compare`: each distinct winner's rate, and its speed relative to the first,
    paired by round (the first's cost over this one's: above 1, this one is faster); and the
    first's A/A copy's speed the same way (the race times one beside every incumbent)."""
    batch, summaries = evaluation.step.batch, evaluation.step.decision.summaries
    by_arm = stats.group_by_arm(evaluation.race.samples)
    metric = metric_for(objective)
    first = batch.candidates[0].id
    reference = by_arm.get(first, ())

    def speed_of(arm: str) -> Figure | None:
        ratio = stats.compare(by_arm.get(arm, ()), reference, metric)
        if ratio.n == 0:
            return None
        return Figure(1 / ratio.ratio, 1 / ratio.ci_high, 1 / ratio.ci_low, ratio.n)

    def status_of(arm: str, rate: Summary | None) -> Status:
        race = evaluation.race
        if race.status is not Status.ok:  # the run failed whole (its sizing probe, say)
            return race.status
        found = race.arm_status.get(arm, Status.ok)
        return Status.no_samples if found is Status.ok and rate is None else found

    rows = []
    for row, candidate in zip(named, batch.candidates, strict=True):
        rate = _measured(summaries.get(candidate.id))
        status = status_of(candidate.id, rate)
        speed = speed_of(candidate.id) if status is Status.ok else None
        rows.append(dataclasses.replace(row, rate=rate, speed_vs_first=speed, status=status))
    return Comparison(evaluation.race.rounds, tuple(rows), aa=speed_of(aa_arm(first)))


def least_latency(evaluation: Evaluation) -> ChannelParams | None:
    """When every candidate missed constraints.max_latency_us: the one that came closest (the
    lowest median p99 wait), or None when no latency was measured."""
    by_arm = stats.group_by_arm(evaluation.race.samples)
    waits = {
        c.id: stats.latency_p99(by_arm.get(latency_arm(c.id), ()))
        for c in evaluation.step.batch.candidates
    }
    best = min(waits, key=lambda arm: (waits[arm], arm))
    return evaluation.step.batch.params_of(best) if math.isfinite(waits[best]) else None
