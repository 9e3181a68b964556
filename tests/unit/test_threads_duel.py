"""hspc_gen.search.threads.duel: verdicts, when a duel has enough rounds, and the questions a
duel answers on a simulated host."""

from __future__ import annotations

import pytest

from hspc_gen.search.stats import MIN_ROUNDS
from hspc_gen.search.threads.capacity import TopologyShape
from hspc_gen.search.threads.duel import MAX_DUEL_ROUNDS, Duels, Verdict, settled, verdict
from hspc_gen.search.threads.measure import Config, Lab, Relative
from hspc_gen.search.threads.sim_model import SimWorkload
from hspc_gen.search.threads.simulator import SimulatedHost


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        (Relative(1.10, 1.05, 1.15, 12), Verdict.better),
        (Relative(1.02, 1.01, 1.03, 12), Verdict.same),  # real, but within the margin
        (Relative(0.90, 0.85, 0.95, 12), Verdict.worse),
        (Relative(1.00, 0.98, 1.02, 12), Verdict.same),
        (Relative(1.05, 0.99, 1.11, 12), Verdict.unsure),
        (Relative(1.04, 1.001, 1.08, 12), Verdict.better),
    ],
)
def test_a_gain_counts_only_beyond_the_margin_and_the_noise(rel: Relative, expected: str) -> None:
    assert verdict(rel) == expected


def test_small_effects_need_twelve_rounds_large_ones_do_not() -> None:
    assert not settled(Relative(1.05, 1.02, 1.08, MIN_ROUNDS))
    assert settled(Relative(1.05, 1.02, 1.08, 2 * MIN_ROUNDS))
    assert settled(Relative(1.5, 1.4, 1.6, MIN_ROUNDS))
    assert not settled(Relative(0.96, 0.95, 0.97, MIN_ROUNDS), line=0.97)


SHAPE = TopologyShape.uniform(cores_per_package=8)
FLAT = SimWorkload("flat", 200.0, 200.0, sigma=0.0, kappa=0.0)


def duels(seed: int = 0) -> tuple[Duels, SimulatedHost]:
    sim = SimulatedHost(SHAPE, FLAT, noise=0.10, seed=seed)
    return Duels(Lab(sim.measure), tolerance=0.03), sim


def test_a_clear_gain_is_decided_in_few_rounds() -> None:
    d, _ = duels()
    v, rel = d.step(Config(1, 1), Config(2, 2))
    assert v is Verdict.better and rel.gain == pytest.approx(2.0, rel=0.05)
    assert rel.n == MIN_ROUNDS


def test_an_unresolvable_question_stops_at_the_round_limit() -> None:
    d, _ = duels()
    v, rel = d.step(Config(4, 4), Config(4, 4, "copy", (1, 2, 3, 4), (5, 6, 7, 0)))
    assert rel.n <= MAX_DUEL_ROUNDS
    assert v in (Verdict.same, Verdict.unsure, Verdict.worse)


def test_good_means_within_tolerance_of_the_best_and_is_confirmed_on_fresh_rounds() -> None:
    d, sim = duels(seed=4)
    best = Config(4, 4)
    assert sim.true_throughput(Config(3, 3)) < 0.8 * sim.true_throughput(best)
    d.lab.run([best, Config(3, 3)], MIN_ROUNDS)
    assert not d.good(best, Config(3, 3))
    assert d.good(best, best) and d.confirmed(best, best)
    # 10 threads on 8 CPUs are slower than 8: the fewer threads are good against them.
    assert d.confirmed(Config(5, 5), Config(4, 4))
    wide = SimulatedHost(TopologyShape.uniform(cores_per_package=16), FLAT, seed=4)
    more = Duels(Lab(wide.measure), tolerance=0.03)
    assert more.good(best, Config(5, 5))  # better is good too
    before = more.lab.rounds
    assert more.confirmed(best, Config(5, 5))
    assert more.lab.rounds > before  # on rounds of its own
