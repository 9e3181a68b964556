"""Pick a winner from paired samples, with a margin, and a documented tie order.

The rule (guide: measurement.md, "Decide with a margin"): with δ = max(3%, the A/A minimum
detectable effect), the best arm *beats* another only when the other's whole cost-ratio interval
lies above 1 + δ, and the two are *equivalent* when the whole interval lies within
[1/(1+δ), 1+δ]. The tie set is the best arm, its equivalents, and every arm it does not beat whose
estimated ratio is within 1 + δ (indistinguishable at this noise, though not yet proven equal). The
winner is the first of the tie set in the tie order below, so two runs that differ by noise only
pick the same point, and the generated header is byte-stable. An arm estimated more than δ worse
but not yet beaten (its interval still reaches below 1 + δ) is not tied: the best measured wins.

Tie order (first wins):
  1. blocking over spinning primitives, when the host is oversubscribed (a spinning waiter whose
     peer is not running burns the CPU that peer needs);
  2. nearest the prior, the step's incumbent (the estimate, or the best point so far): fewest
     parameters changed, then the smallest change in powers of two; so a point the host cannot
     tell from the prior never replaces it, and cold runs that differ by noise agree;
  3. fewer buffers;  4. smaller buffer_bytes;  5. smaller padding_bytes;
  6. smaller stack_offset_bytes;  7. unpinned before pinned;  8. the candidate id.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hspc_gen.model import ChannelParams, Objective, Status, Summary
from hspc_gen.search.decisions import stats
from hspc_gen.search.records.samples import AA_PREFIX, Sample

SamplesByArm = Mapping[str, Sequence[Sample]]


def metric_for(objective: Objective) -> stats.Metric:
    """The lower-is-better cost of one sample under an objective."""
    if objective is Objective.throughput:
        return lambda s: s.ns_per_event
    if objective is Objective.efficiency:
        # Both threads' CPU time: a spinning consumer burns its CPU while it waits, and loses here.
        return lambda s: s.cpu_ns_per_event
    return lambda s: s.latency_ns


def distance(params: ChannelParams, prior: ChannelParams) -> tuple[int, float]:
    """How far `params` is from `prior`: the parameters changed, then the changes' sizes in
    powers of two (CPUs and the primitive count as changed only)."""
    base = prior.as_dict()
    changed = {k: v for k, v in params.as_dict().items() if v != base[k]}
    octaves = sum(
        abs(math.log2((v + 2) / (int(base[k]) + 2)))
        for k, v in changed.items()
        if isinstance(v, int) and not k.endswith("_cpu")
    )
    return len(changed), octaves


def tie_key(
    arm: str, params: ChannelParams, oversubscribed: bool, prior: ChannelParams | None = None
) -> tuple[object, ...]:
    spins = oversubscribed and not params.primitive.blocks
    pinned = params.producer_cpu >= 0 or params.consumer_cpu >= 0
    return (
        spins,
        distance(params, prior) if prior is not None else (0, 0.0),
        params.buffers,
        params.buffer_bytes,
        params.padding_bytes,
        params.stack_offset_bytes,
        pinned,
        arm,
    )


@dataclass(frozen=True)
class Decision:
    """The outcome of one batch: who won, how sure we are, and what was left out and why."""

    objective: Objective
    winner: str | None
    ranking: tuple[str, ...]
    """The winner, its equivalents in tie order, then the rest by estimated cost ratio."""
    ties: tuple[str, ...]
    """The best measured arm and those indistinguishable from it, in tie order (winner first)."""
    intervals: Mapping[str, stats.Comparison]
    """Every other ranked arm's cost relative to the winner (above 1: costs more)."""
    noise_floor: float
    """The A/A minimum detectable effect (inf when the A/A copy has too few rounds)."""
    delta: float
    precision: float
    """The difference this decision could resolve: max(δ, the median interval half-width)."""
    excluded: Mapping[str, Status] = field(default_factory=dict)
    summaries: Mapping[str, Summary] = field(default_factory=dict)
    best_measured: str | None = None


def exclusions(
    samples_by_arm: SamplesByArm,
    candidates: Mapping[str, ChannelParams],
    statuses: Mapping[str, Status],
    metric: stats.Metric,
) -> dict[str, Status]:
    """Arms that may not win, with the reason.

    One unverified sample excludes the whole arm: a channel that lost or reordered events once is
    wrong, however fast it is.
    """
    out: dict[str, Status] = {}
    for arm in candidates:
        status = statuses.get(arm, Status.ok)
        samples = samples_by_arm.get(arm, ())
        if status is not Status.ok:
            out[arm] = status
        elif any(not s.verified for s in samples):
            out[arm] = Status.wrong_answer
        elif not stats.by_round(samples, metric):
            out[arm] = Status.no_samples
    return out


def _reference(arms: Sequence[str], samples_by_arm: SamplesByArm, preferred: str) -> str:
    if preferred in arms:
        return preferred
    return max(arms, key=lambda a: (len(samples_by_arm[a]), a))


def find_best(
    arms: Sequence[str],
    samples_by_arm: SamplesByArm,
    metric: stats.Metric,
    delta: float,
    reference: str,
) -> tuple[str, dict[str, stats.Comparison]]:
    """The arm of lowest paired cost, and every arm's comparison against it.

    A first guess (lowest paired estimate against one common reference) is replaced while some
    arm is clearly better than it; this ends because each step strictly lowers the estimate.
    """
    ref = _reference(arms, samples_by_arm, reference)
    estimates = {
        a: stats.paired_estimate(samples_by_arm[a], samples_by_arm[ref], metric)
        if a != ref
        else 0.0
        for a in arms
    }
    best = min(arms, key=lambda a: (estimates[a], a))
    comps: dict[str, stats.Comparison] = {}
    for _ in range(len(arms)):
        comps = compare_all(arms, samples_by_arm, best, metric)
        better = [a for a, c in comps.items() if c.ci_high < 1.0 / (1.0 + delta)]
        if not better:
            break
        best = min(better, key=lambda a: (comps[a].ratio, a))
    return best, comps


def is_equivalent(comp: stats.Comparison, delta: float) -> bool:
    """The whole interval within ±δ: shown equal at this margin."""
    return comp.n > 0 and 1.0 / (1.0 + delta) <= comp.ci_low and comp.ci_high <= 1.0 + delta


def is_beaten(comp: stats.Comparison, delta: float) -> bool:
    """The whole interval above 1 + δ: shown worse than the reference."""
    return comp.n > 0 and comp.ci_low > 1.0 + delta


def is_tied(comp: stats.Comparison, delta: float) -> bool:
    return is_equivalent(comp, delta) or (
        comp.n > 0 and not is_beaten(comp, delta) and comp.ratio <= 1.0 + delta
    )


def compare_all(
    arms: Sequence[str], samples_by_arm: SamplesByArm, reference: str, metric: stats.Metric
) -> dict[str, stats.Comparison]:
    ref = samples_by_arm[reference]
    return {a: stats.compare(samples_by_arm[a], ref, metric) for a in arms if a != reference}


def noise_floor(samples_by_arm: SamplesByArm, aa: str, metric: stats.Metric) -> float:
    """The A/A minimum detectable effect of the arm `aa` copies (`aa:<id>` against `<id>`)."""
    original = samples_by_arm.get(aa.removeprefix(AA_PREFIX), ())
    return stats.minimum_detectable_effect(samples_by_arm.get(aa, ()), original, metric)


def _precision(comps: Mapping[str, stats.Comparison], delta: float) -> float:
    widths = sorted(c.half_width for c in comps.values())
    return max(delta, widths[len(widths) // 2]) if widths else delta


def pick_winner(
    samples_by_arm: SamplesByArm,
    objective: Objective,
    aa: str,
    *,
    oversubscribed: bool,
    candidates: Mapping[str, ChannelParams],
    statuses: Mapping[str, Status] | None = None,
    prior: ChannelParams | None = None,
) -> Decision:
    """Decide among `candidates` (arm id -> params) from the samples of one batch. `aa` names
    the A/A arm (`aa:<id>`), whose ratios to `<id>` give the noise floor. Baseline arms in
    `samples_by_arm` are summarised but never win. Ties go to the point nearest `prior`."""
    metric = metric_for(objective)
    excluded = exclusions(samples_by_arm, candidates, statuses or {}, metric)
    arms = sorted(a for a in candidates if a not in excluded)
    noise = noise_floor(samples_by_arm, aa, metric)
    delta = stats.margin(noise)
    summaries = {a: stats.summarize(s) for a, s in sorted(samples_by_arm.items())}
    if not arms:
        return Decision(objective, None, (), (), {}, noise, delta, math.inf, excluded, summaries)
    best, comps = find_best(arms, samples_by_arm, metric, delta, aa.removeprefix(AA_PREFIX))
    ties = tie_set(best, comps, delta, candidates, oversubscribed, prior=prior)
    winner = ties[0]
    if winner != best:  # the tie order picked another: compare everything against it
        comps = compare_all(arms, samples_by_arm, winner, metric)
    rest = sorted((a for a in arms if a not in ties), key=lambda a: (comps[a].ratio, a))
    return Decision(
        objective=objective,
        winner=winner,
        ranking=(*ties, *rest),
        ties=ties,
        intervals=comps,
        noise_floor=noise,
        delta=delta,
        precision=_precision(comps, delta),
        excluded=excluded,
        summaries=summaries,
        best_measured=best,
    )


def tie_set(
    best: str,
    comps: Mapping[str, stats.Comparison],
    delta: float,
    candidates: Mapping[str, ChannelParams],
    oversubscribed: bool,
    *,
    prior: ChannelParams | None = None,
) -> tuple[str, ...]:
    """The best arm and those indistinguishable from it, in tie order (the winner first)."""
    ties = [best, *(a for a, c in comps.items() if is_tied(c, delta))]
    return tuple(sorted(ties, key=lambda a: tie_key(a, candidates[a], oversubscribed, prior)))
