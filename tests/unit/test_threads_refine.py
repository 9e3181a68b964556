"""hspc_gen.search.threads.refine: the peak refined between the coarse grid's points, the knee's
bracket closed in level by level, and the counts near the line settled beside the best."""

from __future__ import annotations

from hspc_gen.model.shape import TopologyShape
from hspc_gen.search.threads.axis import Axis
from hspc_gen.search.threads.knee import good, smallest_good
from hspc_gen.search.threads.measure import Lab
from hspc_gen.search.threads.plan import FULL, coarse_counts
from hspc_gen.search.threads.refine import (
    bracket,
    measured_counts,
    refine_knee,
    refine_peak,
    settle,
    share_of_best,
)
from threadsim.physics import SimWorkload
from threadsim.simulator import SimulatedHost

SHAPE = TopologyShape.uniform(cores_per_package=64)
# A sharp USL peak at sqrt((1 - sigma) / kappa) = 30 groups.
PEAKED = SimWorkload("peaked", 200.0, 200.0, sigma=0.1, kappa=0.001)
AXIS = Axis("groups", 1, 128, 8, 1)


def coarse(seed: int = 2) -> tuple[Lab, SimulatedHost]:
    sim = SimulatedHost(SHAPE, PEAKED, noise=0.08, seed=seed)
    lab = Lab(sim.measure)
    lab.run([AXIS.config(n) for n in coarse_counts(AXIS, 64)], 8)
    return lab, sim


def truth(sim: SimulatedHost) -> list[float]:
    return [sim.true_throughput(AXIS.config(n)) for n in range(1, 129)]


def test_the_peak_between_two_coarse_points_is_found() -> None:
    lab, sim = coarse()
    start = AXIS.config(32)
    peak = refine_peak(lab, AXIS, start, FULL, lambda _c: True)
    assert sim.true_throughput(peak) >= 0.99 * max(truth(sim))
    assert any(16 < n < 64 and n != 32 for n in measured_counts(lab, AXIS))


def test_the_knee_closes_in_on_where_the_interval_clears_the_line() -> None:
    lab, sim = coarse()
    best = refine_peak(lab, AXIS, AXIS.config(32), FULL, lambda _c: True)
    before = bracket(lab, AXIS, best, 0.97, lambda _c: True)
    refine_knee(lab, AXIS, best, FULL, line=0.97, allowed=lambda _c: True)
    after = bracket(lab, AXIS, best, 0.97, lambda _c: True)
    assert before is not None and after is not None
    assert after[1] / after[0] < before[1] / before[0]
    settle(lab, best, FULL, answer=smallest_good(lab, best, 0.03), line=0.97, rival=None)
    answer = smallest_good(lab, best, 0.03)
    curve = truth(sim)
    # Shown within 3% of the best: at least 97% of the peak, with few groups more than that needs.
    need = 1 + next(i for i, x in enumerate(curve) if x >= 0.97 * max(curve))
    assert sim.true_throughput(answer) >= 0.95 * max(curve)
    assert answer.producers <= 1.25 * need


def test_an_unpaired_count_is_read_through_one_paired_with_both() -> None:
    lab, _ = coarse()
    old, new = AXIS.config(32), AXIS.config(23)
    lab.run([old, new], 8)  # the peak's probe, beside the coarse best only
    far = AXIS.config(16)  # ran with the coarse best, never with the new one
    assert lab.shared(far, new) == 0
    through = share_of_best(lab, far, new)
    direct = lab.compare(far, old).gain * lab.compare(old, new).gain
    assert through == direct


def test_settling_runs_the_counts_near_the_line_again_beside_the_best() -> None:
    lab, _ = coarse()
    best = refine_peak(lab, AXIS, AXIS.config(32), FULL, lambda _c: True)
    refine_knee(lab, AXIS, best, FULL, line=0.97, allowed=lambda _c: True)
    answer = smallest_good(lab, best, 0.03)
    rounds = lab.rounds
    settle(lab, best, FULL, answer=answer, line=0.97, rival=None)
    near = [c for c in lab.measured() if len(lab.samples(c, rounds)) and c != best]
    assert near and all(c.threads < answer.threads for c in near)
    assert all(share_of_best(lab, c, best) >= 0.97 for c in near)
    assert all(good(lab, c, best, 0.03) or c.threads < answer.threads for c in near)
