"""hspc_gen.search.threads.refine: refining the peak inside the ramp's bracket, and probing down
to the smallest good count."""

from __future__ import annotations

from hspc_gen.search.threads.axis import Axis
from hspc_gen.search.threads.capacity import TopologyShape
from hspc_gen.search.threads.duel import Duels
from hspc_gen.search.threads.measure import Lab
from hspc_gen.search.threads.refine import measured_counts, refine_peak, smallest_good
from hspc_gen.search.threads.sim_model import SimWorkload
from hspc_gen.search.threads.simulator import SimulatedHost

SHAPE = TopologyShape.uniform(cores_per_package=64)
# A sharp USL peak at sqrt((1 - sigma) / kappa) = 30 groups.
PEAKED = SimWorkload("peaked", 200.0, 200.0, sigma=0.1, kappa=0.001)


def setup(seed: int = 2) -> tuple[Duels, SimulatedHost, Axis]:
    sim = SimulatedHost(SHAPE, PEAKED, noise=0.10, seed=seed)
    return Duels(Lab(sim.measure), 0.03), sim, Axis("groups", 1, 128, 8, 1)


def test_the_peak_between_two_grid_points_is_found() -> None:
    duels, sim, axis = setup()
    duels.lab.run([axis.config(n) for n in (16, 23, 45)], 12)
    peak = refine_peak(duels, axis, axis.config(23))
    best = max(sim.true_throughput(axis.config(n)) for n in range(1, 129))
    assert sim.true_throughput(peak) >= 0.98 * best
    measured = measured_counts(duels, axis)
    assert any(23 < n < 45 for n in measured)


def test_probes_go_down_the_grid_until_the_smallest_good_count_is_bracketed() -> None:
    duels, sim, axis = setup()
    best = axis.config(30)
    duels.lab.run([best], 6)
    chosen, settled_best = smallest_good(duels, axis, axis.grid(), best)
    truth = [sim.true_throughput(axis.config(n)) for n in range(1, 129)]
    need = 1 + next(i for i, x in enumerate(truth) if x >= 0.95 * max(truth))
    assert sim.true_throughput(chosen) >= 0.95 * max(truth)
    assert chosen.producers <= 1.25 * need
    assert min(measured_counts(duels, axis)) < chosen.producers <= settled_best.producers
