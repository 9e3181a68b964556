"""hspc_gen.search.threads.knee: the line through the fresh sweep, and the settled answer on a
flat approach to the peak, where single points are too noisy to decide."""

from __future__ import annotations

import pytest

from hspc_gen.search.threads.axis import Axis
from hspc_gen.search.threads.capacity import TopologyShape
from hspc_gen.search.threads.duel import Duels
from hspc_gen.search.threads.knee import crossing, settle
from hspc_gen.search.threads.measure import Lab, Relative
from hspc_gen.search.threads.sim_model import SimWorkload
from hspc_gen.search.threads.simulator import SimulatedHost


def rel(gain: float, half: float = 0.01) -> Relative:
    return Relative(gain, gain * (1 - half), gain * (1 + half), 30)


def rising(n: int) -> float:
    """ln gain = 0.1 ln(n / 20): crosses 0.97 at n = 20 x 0.97^10."""
    return float((n / 20) ** 0.1)


CROSS = 20 * 0.97**10


def test_the_crossing_of_a_straight_rise() -> None:
    rels = {n: rel(rising(n)) for n in range(10, 17)}
    assert crossing(rels, 0.03) == pytest.approx(CROSS, rel=1e-6)


def test_the_plateau_past_the_knee_does_not_flatten_the_line() -> None:
    rels = {n: rel(rising(n)) for n in range(10, 17)}
    rels.update({n: rel(0.985) for n in range(18, 26)})
    assert crossing(rels, 0.03) == pytest.approx(CROSS, rel=1e-6)


def test_too_few_points_or_no_rise_give_no_line() -> None:
    assert crossing({10: rel(0.95), 12: rel(0.98)}, 0.03) is None
    assert crossing({n: rel(0.96) for n in (10, 12, 14, 16)}, 0.03) is None


def test_settle_finds_the_smallest_good_count_on_a_flat_rise() -> None:
    # Lock-limited groups on a big machine: throughput creeps up by well under 1% per group
    # near the top, so single paired points (about 1% of noise each) cannot place the line.
    shape = TopologyShape.uniform(cores_per_package=64)
    w = SimWorkload("slow_rise", 200.0, 200.0, sigma=0.02, kappa=0.0002)
    sim = SimulatedHost(shape, w, noise=0.10, seed=11)
    duels = Duels(Lab(sim.measure), tolerance=0.03)
    axis = Axis("groups", 1, 120, 30, 1)
    counts = list(range(30, 72, 3))
    duels.lab.run([axis.config(n) for n in counts], 6)
    chosen, best = settle(duels, axis, axis.config(69), counts)
    peak = max(sim.true_throughput(axis.config(n)) for n in range(1, 121))
    share = sim.true_throughput(chosen) / peak
    need = min(n for n in range(1, 121) if sim.true_throughput(axis.config(n)) >= 0.95 * peak)
    assert share >= 0.95
    assert chosen.producers <= 1.25 * need
    assert best.producers >= chosen.producers
