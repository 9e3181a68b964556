"""hspc_gen.search.decisions.stats: paired log ratios, robust estimates, bootstrap, Wilcoxon, A/A
floor."""

from __future__ import annotations

import math

import numpy as np

from fake_runner import Cost, Simulated
from hspc_gen.search.decisions import stats
from hspc_gen.search.records.samples import Sample


def ns(s: Sample) -> float:
    return s.ns_per_event


def test_ratios_pair_by_round_and_skip_unpaired_rounds() -> None:
    sim = Simulated(seed=3)
    a = sim.samples("a", 30.0, 5)
    b = [s for s in sim.samples("b", 20.0, 5) if s.round != 2]
    d = stats.paired_log_ratios(a, b, ns)
    assert d.size == 4
    by_round = {s.round: s.ns_per_event for s in a}
    first_b = b[0]
    assert math.isclose(d[0], math.log(by_round[0] / first_b.ns_per_event))


def test_pairing_cancels_the_shared_round_factor() -> None:
    # Large round-to-round drift, small own noise: the paired ratio sees only the own noise.
    sim = Simulated(seed=5, round_sigma=0.3)
    a = sim.samples("a", 33.0, 40, Cost(sigma=0.01))
    b = sim.samples("b", 30.0, 40, Cost(sigma=0.01))
    d = stats.paired_log_ratios(a, b, ns)
    assert abs(float(np.median(d)) - math.log(1.1)) < 0.01
    unpaired = np.log([s.ns_per_event for s in a])
    assert float(np.std(d)) < float(np.std(unpaired)) / 5


def test_hodges_lehmann_is_the_median_of_walsh_averages() -> None:
    assert float(stats.hodges_lehmann(np.array([1.0, 2.0, 3.0]))) == 2.0
    # Walsh averages of (0, 0, 10): 0, 0, 0, 5, 5, 10 -> median 2.5
    assert float(stats.hodges_lehmann(np.array([0.0, 0.0, 10.0]))) == 2.5
    rows = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])
    assert stats.hodges_lehmann(rows).tolist() == [2.0, 4.0]


def test_estimates_resist_the_heavy_tail_of_preempted_samples() -> None:
    rng = np.random.default_rng(11)
    d = rng.normal(0.10, 0.08, 60)
    slow = rng.random(60) < 0.1
    d[slow] += math.log(7.0)  # a context switch in the candidate's sample: 7x slower
    assert abs(float(stats.hodges_lehmann(d)) - 0.10) < 0.06
    assert abs(float(stats.median(d)) - 0.10) < 0.06
    assert float(np.mean(d)) > 0.2  # the mean is dragged away; that is why it is not used


def test_bootstrap_interval_is_deterministic_and_narrows_with_rounds() -> None:
    rng = np.random.default_rng(2)
    d = rng.normal(0.05, 0.1, 60)
    first = stats.bootstrap_interval(d)
    assert first == stats.bootstrap_interval(d.copy())
    low, high = first
    assert low < float(stats.hodges_lehmann(d)) < high
    short_low, short_high = stats.bootstrap_interval(d[:10])
    assert short_high - short_low > high - low
    assert stats.bootstrap_interval(np.array([])) == (-math.inf, math.inf)


def test_wilcoxon_one_sided() -> None:
    rng = np.random.default_rng(4)
    worse = rng.normal(0.2, 0.1, 20)
    assert stats.wilcoxon_greater(worse) < 0.001
    assert stats.wilcoxon_greater(-worse) > 0.99
    assert stats.wilcoxon_greater(np.zeros(10)) == 1.0
    assert stats.wilcoxon_greater(np.array([])) == 1.0


def test_compare_reports_a_cost_ratio_with_its_interval() -> None:
    sim = Simulated(seed=8)
    slow = sim.samples("slow", 36.0, 30)
    fast = sim.samples("fast", 30.0, 30)
    c = stats.compare(slow, fast, ns)
    assert c.n == 30
    assert c.ci_low < c.ratio < c.ci_high
    assert c.ci_low > 1.0 and c.ci_high < 1.4
    assert abs(c.ratio - 1.2) < 0.05
    assert c.p_worse < 0.001
    assert c.p_better > 0.99
    assert 0.0 < c.half_width < 0.1
    assert stats.compare(slow, [], ns).n == 0


def test_minimum_detectable_effect_from_the_aa_copy() -> None:
    quiet, noisy = Simulated(seed=9), Simulated(seed=9)
    ref_q = quiet.samples("ref", 30.0, 40, Cost(sigma=0.02))
    aa_q = quiet.samples("aa:ref", 30.0, 40, Cost(sigma=0.02))
    ref_n = noisy.samples("ref", 30.0, 40, Cost(sigma=0.10))
    aa_n = noisy.samples("aa:ref", 30.0, 40, Cost(sigma=0.10))
    small = stats.minimum_detectable_effect(aa_q, ref_q, ns)
    large = stats.minimum_detectable_effect(aa_n, ref_n, ns)
    assert 0.0 < small < large < 0.2
    assert stats.margin(small) == stats.MARGIN_FLOOR  # never below 3%
    assert stats.margin(large) == large
    few = stats.minimum_detectable_effect(aa_n[:3], ref_n[:3], ns)
    assert few == math.inf


def test_summary_of_events_per_second() -> None:
    sim = Simulated(seed=1)
    samples = sim.samples("a", 25.0, 31)
    preempted = [
        Sample(**{**s.to_dict(), "nivcsw_consumer": 1}) if s.round < 5 else s for s in samples
    ]
    summary = stats.summarize(preempted)
    rates = sorted(s.events_per_second for s in samples)
    assert summary.median == rates[15]
    assert summary.q1 <= summary.median <= summary.q3
    assert summary.ci95_low <= summary.median <= summary.ci95_high
    assert summary.iqr == summary.q3 - summary.q1
    assert summary.n == 31
    assert math.isclose(summary.preempted_fraction, 5 / 31)
    assert stats.summarize([]).n == 0


def _neighbour(sample: Sample, delay_share: float, slowdown: float = 1.5) -> Sample:
    """`sample` as if another process took the CPU for part of it: slower, and the threads'
    run-queue delay says so (delay_share -1: a kernel that does not tell)."""
    wall = sample.wall_ns * slowdown
    delay = -1.0 if delay_share < 0 else delay_share * wall
    return Sample(**{**sample.to_dict(), "wall_ns": wall, "delay_ns": delay})


def test_a_sample_is_disturbed_when_its_threads_waited_for_a_cpu() -> None:
    s = Simulated(seed=1).sample("a", 10.0, 0, Cost())
    assert not s.disturbed  # not known: undisturbed
    assert not _neighbour(s, 0.03).disturbed  # a timer tick, a kernel thread
    assert _neighbour(s, 0.2).disturbed  # a neighbour's time slice


def test_disturbed_rounds_are_set_aside_and_the_aa_floor_falls() -> None:
    sim = Simulated(seed=4)
    ref = sim.samples("ref", 30.0, 40, Cost(sigma=0.01))
    aa = sim.samples("aa:ref", 30.0, 40, Cost(sigma=0.01))
    hit = {3, 7, 11, 18, 25, 26, 33, 38}  # a neighbour ran in these rounds
    unknown = [_neighbour(s, -1.0) if s.round in hit else s for s in aa]
    seen = [_neighbour(s, 0.3) if s.round in hit else s for s in aa]
    assert stats.paired_log_ratios(unknown, ref, ns).size == 40
    assert stats.paired_log_ratios(seen, ref, ns).size == 32
    blind = stats.minimum_detectable_effect(unknown, ref, ns)
    aware = stats.minimum_detectable_effect(seen, ref, ns)
    assert aware < 0.02 < blind
    # The reference's disturbed rounds are set aside the same way.
    assert stats.paired_log_ratios(ref, seen, ns).size == 32


def test_disturbance_that_never_stops_counts_in_full() -> None:
    # Both threads on one CPU wait for it by design: every round is disturbed, and every round
    # counts; so does a host busy in more than half the rounds.
    sim = Simulated(seed=6)
    ref = sim.samples("ref", 30.0, 20)
    shared = [_neighbour(s, 0.4, 1.0) for s in sim.samples("one_cpu", 60.0, 20)]
    assert stats.paired_log_ratios(shared, ref, ns).size == 20
    assert stats.paired_rounds(range(20), set(range(11))) == list(range(20))
    assert stats.paired_rounds(range(20), set(range(10))) == list(range(10, 20))
    assert stats.paired_rounds(range(8), {0, 1, 2}) == list(range(8))  # 5 left: too few
