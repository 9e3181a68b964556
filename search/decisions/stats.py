"""Paired statistics on log ratios, with the statistics policy as named constants.

Within one round every arm runs once, in a random order, so the noise a round shares (a busy
neighbour, a frequency change) cancels in the ratio of two arms of the same round. Everything here
works on d_r = ln(cost_candidate_r / cost_reference_r), where cost is lower-is-better (ns per
event, CPU ns per event, latency). Intervals come from a bootstrap over rounds with a fixed seed:
the same samples always give the same numbers.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from hspc_gen.model import Figure, Summary
from hspc_gen.search.records.samples import Sample

# --- Statistics policy (Google Benchmark style: named, documented, in one place) -----------------
MIN_ROUNDS = 6
"""Fewest paired rounds before a comparison may drop or decide anything (Wilcoxon's exact one-sided
p-value can only fall below 0.05 from n = 5 on; one more round for a margin)."""
MAX_ROUNDS = 60
"""Most rounds one plan runs: ±15-18% noise needs ~40-60 rounds to resolve a 3-5% difference."""
MARGIN_FLOOR = 0.03
# Racing stops early on equivalence only when the margin is at most this: a wider one says the
# noise has not been measured well enough for "equivalent" to mean anything.
SETTLE_MAX_MARGIN = 0.10
"""The smallest difference we ever call real: below 3% the shared host's drift dominates."""
CONFIDENCE = 0.95
"""Two-sided coverage of every reported interval."""
RACING_ALPHA = 0.05
"""One-sided Wilcoxon level at which racing may drop a candidate (the interval must agree too)."""
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 20070326
"""Fixed, so that a decision depends on the samples only."""

Metric = Callable[[Sample], float | None]
Estimator = Callable[[np.ndarray], np.ndarray]


def by_round(samples: Iterable[Sample], metric: Metric) -> dict[int, float]:
    """The metric per round; a round with two samples of one arm keeps the first."""
    out: dict[int, float] = {}
    for s in samples:
        value = metric(s)
        if value is not None and value > 0 and s.round not in out:
            out[s.round] = value
    return out


def paired_log_ratios(
    candidate: Iterable[Sample], reference: Iterable[Sample], metric: Metric
) -> np.ndarray:
    """d_r = ln(metric(candidate_r) / metric(reference_r)) over the rounds both arms ran,
    without the rounds in which either was disturbed (`paired_rounds`)."""
    cand_samples, ref_samples = list(candidate), list(reference)
    cand, ref = by_round(cand_samples, metric), by_round(ref_samples, metric)
    rounds = paired_rounds(cand.keys() & ref.keys(), disturbed_rounds(cand_samples, ref_samples))
    return np.array([math.log(cand[r] / ref[r]) for r in rounds], dtype=float)


def disturbed_rounds(*arms: Iterable[Sample]) -> set[int]:
    """The rounds in which a sample of any of `arms` was disturbed (Sample.disturbed)."""
    return {s.round for samples in arms for s in samples if s.disturbed}


def paired_rounds(rounds: Iterable[int], disturbed: set[int]) -> list[int]:
    """The rounds to pair, in order: a round in which either arm waited for a CPU measured the
    neighbour too, so it is set aside while at least MIN_ROUNDS and half the rounds remain.
    Past that the disturbance is the arms' own (a placement that shares one CPU waits by
    design) or the host's steady state, and every round counts."""
    every = sorted(rounds)
    clean = [r for r in every if r not in disturbed]
    return clean if len(clean) >= max(MIN_ROUNDS, math.ceil(len(every) / 2)) else every


def hodges_lehmann(d: np.ndarray) -> np.ndarray:
    """The median of the Walsh averages (d_i + d_j) / 2, i <= j, along the last axis.

    As robust as the median to the heavy tail of preempted samples (29% breakdown point) but
    much more efficient when the noise is near normal.
    """
    n = d.shape[-1]
    i, j = np.triu_indices(n)
    return np.asarray(np.median((d[..., i] + d[..., j]) / 2.0, axis=-1))


def median(d: np.ndarray) -> np.ndarray:
    return np.asarray(np.median(d, axis=-1))


def paired_estimate(
    candidate: Iterable[Sample], reference: Iterable[Sample], metric: Metric
) -> float:
    """The Hodges-Lehmann log cost ratio of two arms (no interval: cheap); inf without pairs."""
    d = paired_log_ratios(candidate, reference, metric)
    return float(hodges_lehmann(d)) if d.size else math.inf


def bootstrap_interval(
    d: np.ndarray,
    estimator: Estimator = hodges_lehmann,
    confidence: float = CONFIDENCE,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile bootstrap interval of `estimator` over rounds (resampling whole rounds)."""
    if d.size == 0:
        return (-math.inf, math.inf)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, d.size, size=(resamples, d.size))
    estimates = estimator(d[idx])
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(estimates, [tail, 1.0 - tail])
    return (float(low), float(high))


def wilcoxon_greater(d: np.ndarray) -> float:
    """One-sided Wilcoxon signed-rank p-value for 'the candidate costs more' (d above zero)."""
    if d.size == 0 or not np.any(d != 0.0):
        return 1.0
    with warnings.catch_warnings():
        # scipy warns that small or tied samples fall back to the normal approximation; that
        # approximation is what we want then, and the interval check guards the decision anyway.
        warnings.simplefilter("ignore")
        result = scipy_stats.wilcoxon(d, alternative="greater", zero_method="wilcox")
    return float(result.pvalue)


@dataclass(frozen=True)
class Comparison:
    """A candidate's cost relative to a reference, as ratios (1.10 = 10% more cost)."""

    ratio: float
    ci_low: float
    ci_high: float
    p_worse: float
    """One-sided Wilcoxon p-value for 'the candidate costs more than the reference'."""
    p_better: float
    n: int

    @property
    def half_width(self) -> float:
        """Half the interval's width in log space, as a ratio: the precision of this comparison."""
        if self.n == 0:
            return math.inf
        return math.exp((math.log(self.ci_high) - math.log(self.ci_low)) / 2.0) - 1.0


def compare(
    candidate: Iterable[Sample],
    reference: Iterable[Sample],
    metric: Metric,
    estimator: Estimator = hodges_lehmann,
) -> Comparison:
    d = paired_log_ratios(candidate, reference, metric)
    if d.size == 0:
        return Comparison(math.nan, 0.0, math.inf, 1.0, 1.0, 0)
    low, high = bootstrap_interval(d, estimator)
    return Comparison(
        ratio=math.exp(float(estimator(d))),
        ci_low=math.exp(low),
        ci_high=math.exp(high),
        p_worse=wilcoxon_greater(d),
        p_better=wilcoxon_greater(-d),
        n=int(d.size),
    )


def minimum_detectable_effect(
    aa: Iterable[Sample], reference: Iterable[Sample], metric: Metric
) -> float:
    """The A/A noise floor: how far from 1 the interval of two copies of one program reaches.

    Identical code differs only by noise (and by any bias of the round order), so a difference
    smaller than this cannot be told from nothing. Infinite without enough A/A rounds.
    """
    d = paired_log_ratios(aa, reference, metric)
    if d.size < MIN_ROUNDS:
        return math.inf
    low, high = bootstrap_interval(d)
    return math.exp(max(abs(low), abs(high))) - 1.0


def margin(noise_floor: float) -> float:
    """δ = max(MARGIN_FLOOR, the A/A minimum detectable effect)."""
    return max(MARGIN_FLOOR, noise_floor)


def summarize(samples: Sequence[Sample]) -> Summary:
    if not samples:
        nan = math.nan
        return Summary(nan, nan, nan, 0, q1=nan, q3=nan, preempted_fraction=nan)
    # Round order, so the bootstrap (and so the summary) does not depend on how samples arrive.
    ordered = sorted(samples, key=lambda s: (s.round, s.wall_ns))
    rate = np.array([s.events_per_second for s in ordered], dtype=float)
    low, high = bootstrap_interval(rate, median)
    q1, mid, q3 = np.quantile(rate, [0.25, 0.5, 0.75])
    preempted = sum(1 for s in samples if s.nivcsw_producer + s.nivcsw_consumer > 0)
    return Summary(
        median=float(mid),
        ci95_low=low,
        ci95_high=high,
        q1=float(q1),
        q3=float(q3),
        n=len(samples),
        preempted_fraction=preempted / len(samples),
    )


def group_by_arm(samples: Iterable[Sample]) -> dict[str, list[Sample]]:
    out: dict[str, list[Sample]] = {}
    for s in samples:
        out.setdefault(s.arm, []).append(s)
    return out


def center(samples: Iterable[Sample], metric: Metric) -> float:
    """The median cost of one arm (unpaired: used only to pick a reference to pair against)."""
    values = list(by_round(samples, metric).values())
    return float(np.median(values)) if values else math.inf


def rounds_of(samples_by_arm: Mapping[str, Sequence[Sample]]) -> int:
    return len({s.round for arm in samples_by_arm.values() for s in arm})


_ALONE = ("producer_alone", "consumer_alone")


def _ns_per_event(s: Sample) -> float:
    return s.ns_per_event


def efficiency(samples_by_arm: Mapping[str, Sequence[Sample]], arm: str) -> Figure:
    """The paper's balance: max(producer-alone, consumer-alone time) over the pair's time for the
    same events, per round (both baselines run in the same round as the arm); 1.0 is perfect."""
    pair = by_round(samples_by_arm.get(arm, ()), _ns_per_event)
    alone = [by_round(samples_by_arm.get(b, ()), _ns_per_event) for b in _ALONE]
    rounds = sorted(set(pair).intersection(*alone))
    if not rounds:
        return Figure(math.nan, math.nan, math.nan, 0)
    values = np.array([max(a[r] for a in alone) / pair[r] for r in rounds], dtype=float)
    low, high = bootstrap_interval(values, median)
    return Figure(float(np.median(values)), low, high, len(values))


def figure(values: Sequence[float]) -> Figure:
    """The median of `values` (in their order) with its 95% bootstrap interval; NaN when empty."""
    array = np.array(values, dtype=float)
    if array.size == 0:
        return Figure(math.nan, math.nan, math.nan, 0)
    low, high = bootstrap_interval(array, median)
    return Figure(float(np.median(array)), low, high, int(array.size))


def latency(samples: Sequence[Sample]) -> Figure:
    """Median push-to-pop latency (ns) over the samples that measured it."""
    ordered = sorted(samples, key=lambda s: (s.round, s.wall_ns))
    return figure([s.latency_ns for s in ordered if s.latency_ns is not None])


def latency_p99(samples: Sequence[Sample]) -> float:
    """The median over rounds of the samples' 99th-percentile latency (inf with none)."""
    values = [s.latency_p99_ns for s in samples if s.latency_p99_ns is not None]
    return float(np.median(values)) if values else math.inf
