"""search.threads.pool: the adaptive pool's controller parameters, each derived from a figure with
its reason: on made-up inputs rule by rule, and on the thread search's answers over the curves
recorded on real hosts (tests/data/threads/curves.json)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from hspc_gen import adaptive
from hspc_gen.model.pool import Basis, PoolTuning
from hspc_gen.model.threads import FIXED, ThreadAdvice
from hspc_gen.search.threads.pool import (
    CLOCK_TICKS_PER_DRAW,
    GROW_INTERVALS,
    LONGEST_DRAW,
    MAX_POOL_CONSUMERS,
    REACT_NS,
    SHORTEST_DRAW,
    PoolInputs,
    pool_tuning,
)
from pools import ESTIMATED_POOL_INPUTS, INPUTS, STORED_WAKE
from recorded_curves import Curve, recorded_curves
from thread_searches import searched_advice

FLOOR_NS = CLOCK_TICKS_PER_DRAW * 1e9 / 100 / SHORTEST_DRAW  # 40 ms at 100 ticks a second


def with_(**changes: object) -> PoolInputs:
    return dataclasses.replace(INPUTS, **changes)  # type: ignore[arg-type]


def values(tuning: PoolTuning) -> dict[str, int]:
    return {name: choice.value for name, choice in tuning.choices()}


def test_every_field_has_a_value_and_a_reason_in_pool_options_order() -> None:
    tuning = pool_tuning(INPUTS)
    assert [name for name, _ in tuning.choices()] == [
        "min_consumers",
        "max_consumers",
        "start_consumers",
        "interval_ns",
        "grow_wait_ns",
        "grow_intervals",
    ]
    assert all(len(choice.why) > 20 for _, choice in tuning.choices())
    assert pool_tuning(INPUTS) == tuning  # the same inputs, the same choice


def test_the_grow_wait_is_a_wake_up_and_a_buffers_handling_past_the_margin() -> None:
    choice = pool_tuning(INPUTS).grow_wait_ns
    assert choice.value == math.ceil((3000 + 512 * 15) * 1.05)
    assert "3000 ns, the futex wake-up measured on this host" in choice.why
    assert "512 events of 15 ns, the consumer's CPU time per event, measured" in choice.why
    assert "5.0%, the confirmation's decision margin" in choice.why


def test_quick_hand_offs_leave_the_interval_at_the_clock_ticks_floor() -> None:
    choice = pool_tuning(INPUTS).interval_ns  # 20 hand-offs of 20.5 us: far below 40 ms
    assert choice.value == math.ceil(FLOOR_NS)
    assert "2 clock ticks of 10 ms" in choice.why


def test_slow_hand_offs_lengthen_the_interval_to_average_one_over_the_margin_of_them() -> None:
    slow = with_(pace_ns=Basis(2000.0, "app.yaml's work per event, not measured", False))
    choice = pool_tuning(slow).interval_ns  # 20 hand-offs of 1.024 ms in the shortest draw
    assert choice.value == math.ceil(20 * 512 * 2000 / SHORTEST_DRAW)
    assert "averages 20 buffer hand-offs, one per 1024000 ns" in choice.why
    assert "app.yaml's work per event, not measured" in choice.why


def test_the_interval_lets_the_pool_climb_to_its_most_within_the_reaction_time() -> None:
    slow = with_(pace_ns=Basis(20000.0, "paced", True), cpus=8)  # 20 hand-offs: 410 ms
    choice = pool_tuning(slow).interval_ns
    assert choice.value == math.ceil(REACT_NS / (7 * GROW_INTERVALS * LONGEST_DRAW))
    assert "climbing 7 consumer(s)" in choice.why


def test_the_pool_starts_at_the_advice_and_may_use_the_cpus_when_nothing_was_measured() -> None:
    tuning = pool_tuning(INPUTS)
    assert values(tuning)["start_consumers"] == 2
    assert "the estimate's 2 consumer(s) for 1 producer(s)" in tuning.start_consumers.why
    assert values(tuning)["min_consumers"] == 1
    assert tuning.max_consumers.value == 0  # the usable CPUs, read at run time
    assert "(4 here)" in tuning.max_consumers.why and "estimate" in tuning.max_consumers.why


def test_an_advice_past_the_cpus_raises_the_limit_to_it() -> None:
    many = ThreadAdvice(2, 6, 3, (0,), (0, 1), pinned=False)
    tuning = pool_tuning(with_(advice=many, cpus=2))
    assert (tuning.max_consumers.value, tuning.start_consumers.value) == (6, 6)
    huge = ThreadAdvice(80, 80, 1, (0,), (0,), pinned=False)
    capped = pool_tuning(with_(advice=huge, cpus=2))
    assert capped.max_consumers.value == capped.start_consumers.value == MAX_POOL_CONSUMERS
    assert "within max_consumers (64)" in capped.start_consumers.why


def test_an_estimate_past_the_cpus_claims_no_measured_advice() -> None:
    """A new user's report: under `--effort estimate` with 2 producers and adaptive consumers,
    max_consumers said "the thread advice has 8 consumers as good as the best", though no
    thread advice was measured. A wake-up an earlier run measured on this host is measured
    all the same: the values are then "partly measured"."""
    estimated = ThreadAdvice(2, 8, 4, (0, 1), (0, 1), pinned=False)
    wake = adaptive.wake_ns(STORED_WAKE)  # from an earlier run's calibration: measured
    stored = dataclasses.replace(ESTIMATED_POOL_INPUTS, advice=estimated, wake_ns=wake, cpus=2)
    tuning = pool_tuning(stored)
    why = tuning.max_consumers.why
    assert tuning.max_consumers.value == 8
    assert why.startswith("the estimate has 8 consumers (not measured), more than the 2")
    assert "as good as the best" not in why and "measured 8" not in why
    assert tuning.basis == "partly measured"
    assert "measured on this host" in tuning.grow_wait_ns.why
    nothing = dataclasses.replace(stored, wake_ns=adaptive.wake_ns(None))
    assert pool_tuning(nothing).basis == "estimated, nothing measured"


def test_counts_the_target_fixes_past_the_cpus_are_the_recommendations_not_the_curves() -> None:
    """Fixed counts measured nothing unpinned (no placement raced): the recommendation has
    its consumers, the search did not measure them as good as the best."""
    (curve,) = [c for c in recorded_curves() if c.name == "issue24-first-run"]
    found = searched_advice(curve.shape(), curve, seed=1, noise=0.03)
    assert found.evidence is not None
    unraced = dataclasses.replace(found.evidence, curve=(), termination=FIXED)
    many = ThreadAdvice(2, 6, 3, (0, 1), (0, 1), pinned=False, evidence=unraced)
    why = pool_tuning(with_(advice=many, cpus=2)).max_consumers.why
    assert why.startswith("the thread recommendation has 6 consumers, more than the 2")


@pytest.mark.parametrize(
    ("measured", "basis"),
    [((True,) * 4, "partly measured"), ((False,) * 4, "estimated, nothing measured")],
)
def test_the_basis_says_what_the_values_rest_on(measured: tuple[bool, ...], basis: str) -> None:
    names = ("pace_ns", "handling_ns", "wake_ns", "margin")
    changes = {
        name: dataclasses.replace(getattr(INPUTS, name), measured=m)
        for name, m in zip(names, measured, strict=True)
    }
    assert pool_tuning(with_(**changes)).basis == basis  # the advice here is the estimate's


@pytest.mark.parametrize("curve", recorded_curves(), ids=lambda c: c.name)
def test_on_every_recorded_curve_the_limits_hold_the_advice_and_what_was_as_good(
    curve: Curve,
) -> None:
    """The thread search's answer on curves recorded on real hosts: the pool starts at its
    recommendation, never below one consumer or past 64, and may grow to the most consumers the
    search measured as good as the best when they are more than the CPUs (blocking work)."""
    shape = curve.shape()
    advice = searched_advice(shape, curve, seed=1, noise=0.03)
    assert advice.evidence is not None
    cpus = len(shape.places)
    tuning = pool_tuning(with_(advice=advice, cpus=cpus))
    assert tuning.basis == "measured"
    got = values(tuning)
    most = got["max_consumers"] or cpus
    assert 1 == got["min_consumers"] <= got["start_consumers"] <= most <= MAX_POOL_CONSUMERS
    assert got["start_consumers"] == min(advice.consumers, most)
    wanted = max(advice.consumers, *(p.consumers for p in advice.evidence.equally_good))
    assert got["max_consumers"] == (min(wanted, MAX_POOL_CONSUMERS) if wanted > cpus else 0)
    assert "measured as good as the best" in tuning.start_consumers.why
    assert got["interval_ns"] >= FLOOR_NS and got["grow_intervals"] == GROW_INTERVALS
