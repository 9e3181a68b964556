"""hspc_gen.search.decisions.decide: margins, the tie order, objectives, exclusions, determinism."""

from __future__ import annotations

import math
import random

from fake_runner import Cost, Simulated
from hspc_gen.model import ChannelParams, Objective, Primitive, Status
from hspc_gen.search.decisions import stats
from hspc_gen.search.decisions.decide import Decision, pick_winner, tie_key
from hspc_gen.search.records.samples import Sample, aa_arm, candidate_id

BASE = ChannelParams(128, 0, 4, 4096, Primitive.condvar)
ROUNDS = 40


def measured(
    points: dict[ChannelParams, float],
    reference: ChannelParams,
    *,
    seed: int = 1,
    costs: dict[ChannelParams, Cost] | None = None,
) -> tuple[dict[str, list[Sample]], dict[str, ChannelParams], str]:
    """Samples of each point (mean ns per event given) plus the reference's A/A copy."""
    sim = Simulated(seed)
    costs = costs or {}
    by_arm = {
        candidate_id(p): sim.samples(candidate_id(p), ns, ROUNDS, costs.get(p))
        for p, ns in points.items()
    }
    aa = aa_arm(candidate_id(reference))
    by_arm[aa] = sim.samples(aa, points[reference], ROUNDS, costs.get(reference))
    return by_arm, {candidate_id(p): p for p in points}, aa


def decide(
    points: dict[ChannelParams, float],
    objective: Objective = Objective.throughput,
    oversubscribed: bool = False,
    **kw: object,
) -> tuple[Decision, dict[str, ChannelParams]]:
    by_arm, cands, aa = measured(points, next(iter(points)), **kw)  # type: ignore[arg-type]
    d = pick_winner(by_arm, objective, aa, oversubscribed=oversubscribed, candidates=cands)
    return d, cands


def test_a_clearly_faster_candidate_wins() -> None:
    fast = BASE.replace(padding_bytes=64)
    d, cands = decide({BASE: 40.0, fast: 28.0, BASE.replace(padding_bytes=0): 52.0})
    assert d.winner == candidate_id(fast)
    assert d.ties == (candidate_id(fast),)
    slow = d.intervals[candidate_id(BASE)]
    assert slow.ci_low > 1.0 + d.delta  # beaten: the whole interval beyond 1 + delta
    assert d.ranking[-1] == candidate_id(BASE.replace(padding_bytes=0))
    assert set(d.summaries) == {*cands, aa_arm(candidate_id(BASE))}


def test_equivalent_candidates_resolve_by_the_tie_order() -> None:
    # Same true cost: whichever measures faster, the one with fewer buffers wins.
    fewer = BASE.replace(buffers=3)
    for seed in range(4):
        d, _ = decide({BASE: 30.0, fewer: 30.0}, seed=seed)
        assert d.winner == candidate_id(fewer), seed
        assert set(d.ties) == {candidate_id(fewer), candidate_id(BASE)}


def test_tie_order_is_the_documented_one() -> None:
    p = BASE
    spin = p.replace(primitive=Primitive.pause_spin)
    keys = {
        "fewer buffers": (p.replace(buffers=3), p),
        "smaller buffers": (p.replace(buffer_bytes=2048), p),
        "smaller padding": (p.replace(padding_bytes=64), p),
        "smaller stack offset": (
            p.replace(stack_offset_bytes=0),
            p.replace(stack_offset_bytes=4096),
        ),
        "unpinned": (p, p.replace(producer_cpu=0, consumer_cpu=1)),
    }
    for why, (first, second) in keys.items():
        assert tie_key("z", first, False) < tie_key("a", second, False), why
    # Blocking before spinning only when oversubscribed, and then before everything else.
    assert tie_key("a", spin.replace(buffers=2), True) > tie_key("b", p.replace(buffers=64), True)
    assert tie_key("a", spin.replace(buffers=2), False) < tie_key("b", p.replace(buffers=64), False)
    assert tie_key("a", p, False) < tie_key("b", p, False)  # the id settles what is left


def test_oversubscribed_host_prefers_blocking_among_equals() -> None:
    spin = BASE.replace(primitive=Primitive.pause_spin, buffers=3)
    block = BASE.replace(primitive=Primitive.futex)
    points = {block: 30.0, spin: 30.0}
    shared, _ = decide(points, oversubscribed=True)
    assert shared.winner == candidate_id(block)
    alone, _ = decide(points, oversubscribed=False)
    assert alone.winner == candidate_id(spin)  # fewer buffers decides instead


def test_efficiency_counts_the_cpu_a_spinning_waiter_burns() -> None:
    spin = BASE.replace(primitive=Primitive.pause_spin)
    block = BASE.replace(primitive=Primitive.futex)
    points = {block: 34.0, spin: 30.0}
    costs = {spin: Cost(spins=True)}
    fast, _ = decide(points, Objective.throughput, costs=costs)
    assert fast.winner == candidate_id(spin)
    frugal, _ = decide(points, Objective.efficiency, costs=costs)
    assert frugal.winner == candidate_id(block)


def test_latency_objective_uses_latency_samples() -> None:
    a, b = BASE, BASE.replace(buffer_bytes=512)
    points = {a: 30.0, b: 36.0}  # b is slower per event but hands off sooner
    costs = {a: Cost(latency_ns=9000.0), b: Cost(latency_ns=1200.0)}
    d, _ = decide(points, Objective.latency, costs=costs)
    assert d.winner == candidate_id(b)
    without, _ = decide(points, Objective.latency)
    assert without.winner is None
    assert set(without.excluded.values()) == {Status.no_samples}


def test_unverified_and_failed_arms_are_excluded_and_reported() -> None:
    wrong = BASE.replace(padding_bytes=0)
    crashed = BASE.replace(padding_bytes=256)
    by_arm, cands, aa = measured({BASE: 30.0, wrong: 10.0, crashed: 12.0}, BASE)
    first = by_arm[candidate_id(wrong)][0]
    by_arm[candidate_id(wrong)][0] = Sample(**{**first.to_dict(), "verified": False})
    statuses = {candidate_id(crashed): Status.crashed}
    d = pick_winner(
        by_arm, Objective.throughput, aa, oversubscribed=False, candidates=cands, statuses=statuses
    )
    assert d.winner == candidate_id(BASE)
    assert d.excluded == {
        candidate_id(wrong): Status.wrong_answer,
        candidate_id(crashed): "crashed",
    }
    assert candidate_id(wrong) not in d.ranking


def test_same_samples_same_decision_in_any_order() -> None:
    points = {BASE: 30.0, BASE.replace(buffers=8): 30.5, BASE.replace(buffer_bytes=1024): 33.0}
    by_arm, cands, aa = measured(points, BASE, seed=7)
    first = pick_winner(by_arm, Objective.throughput, aa, oversubscribed=False, candidates=cands)
    shuffled = {}
    rng = random.Random(3)
    for arm in rng.sample(sorted(by_arm), len(by_arm)):
        shuffled[arm] = rng.sample(by_arm[arm], len(by_arm[arm]))
    again = pick_winner(shuffled, Objective.throughput, aa, oversubscribed=False, candidates=cands)
    assert again == first


def test_noise_floor_sets_delta_and_precision() -> None:
    quiet, _ = decide({BASE: 30.0, BASE.replace(buffers=8): 31.0}, costs={})
    assert quiet.delta == max(stats.MARGIN_FLOOR, quiet.noise_floor)
    assert quiet.precision >= quiet.delta
    noisy_costs = {p: Cost(sigma=0.2) for p in (BASE, BASE.replace(buffers=8))}
    noisy, _ = decide({BASE: 30.0, BASE.replace(buffers=8): 31.0}, costs=noisy_costs)
    assert noisy.noise_floor > quiet.noise_floor
    assert noisy.precision > quiet.precision


def test_without_an_aa_copy_nothing_can_be_told_apart() -> None:
    by_arm, cands, aa = measured({BASE: 30.0, BASE.replace(buffers=8): 24.0}, BASE)
    del by_arm[aa]
    d = pick_winner(by_arm, Objective.throughput, aa, oversubscribed=False, candidates=cands)
    assert d.noise_floor == math.inf
    assert d.winner == candidate_id(BASE)  # every arm tied; fewer buffers first


def test_no_candidate_left_means_no_winner() -> None:
    by_arm, cands, aa = measured({BASE: 30.0}, BASE)
    statuses = {candidate_id(BASE): Status.compile_error}
    d = pick_winner(
        by_arm, Objective.throughput, aa, oversubscribed=False, candidates=cands, statuses=statuses
    )
    assert d.winner is None
    assert d.ranking == ()
    assert d.excluded == {candidate_id(BASE): "compile_error"}


def test_a_point_the_host_cannot_tell_from_the_prior_does_not_replace_it() -> None:
    """Ties go to the step's incumbent (the estimate, or the best so far), not to the smallest
    point: two cold runs that differ by noise then keep the same answer."""
    prior = BASE.replace(buffers=8, buffer_bytes=65536)
    smaller = BASE.replace(buffers=2, buffer_bytes=1024)
    nearer = prior.replace(buffer_bytes=32768)
    points = {prior: 30.0, smaller: 29.9, nearer: 29.95}  # all within the noise
    by_arm, cands, aa = measured(points, prior, seed=5)
    kw = {"oversubscribed": False, "candidates": cands}
    with_prior = pick_winner(by_arm, Objective.throughput, aa, prior=prior, **kw)  # type: ignore[arg-type]
    assert with_prior.winner == candidate_id(prior), with_prior.ties
    without = pick_winner(by_arm, Objective.throughput, aa, **kw)  # type: ignore[arg-type]
    assert without.winner == candidate_id(smaller)  # the old order: the smallest point
    # Among the others, the nearer one comes first.
    assert tie_key("z", nearer, False, prior) < tie_key("a", smaller, False, prior)
    # A clearly faster point still replaces the prior.
    faster = {prior: 30.0, smaller: 20.0}
    by_arm, cands, aa = measured(faster, prior, seed=5)
    d = pick_winner(by_arm, Objective.throughput, aa, oversubscribed=False, candidates=cands,
                    prior=prior)  # fmt: skip
    assert d.winner == candidate_id(smaller)
