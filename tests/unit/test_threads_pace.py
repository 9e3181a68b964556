"""hspc_gen.search.threads.pace: samples sized to last about the same whatever the count (from
the cost model first, then from what was measured), and what a call of them costs."""

from __future__ import annotations

import pytest

from hspc_gen.search.records.samples import Sample
from hspc_gen.search.threads.measure import Config, ThreadSample
from hspc_gen.search.threads.pace import MAX_STRETCH, SAMPLE_OVERHEAD, Pace

PAIR_RATE = 5e6  # events/s: 100k events in 20 ms


def pace(min_events: int = 1000) -> Pace:
    return Pace(
        100_000, 0.02, pair_rate=PAIR_RATE, saturation=16.0, min_events=min_events, max_events=10**8
    )


def measured(config: Config, rate: float) -> dict[Config, list[ThreadSample]]:
    events = 1_000_000
    wall = events / rate * 1e9
    sample = Sample(config.label, 0, events, wall, wall, wall, 0, 0, 0, True)
    return {config: [ThreadSample(sample, 0, 0.0)]}


def test_before_measuring_a_count_the_cost_model_sizes_it() -> None:
    """A pair's events per producer up to the groups that saturate the CPUs (8 of 2 threads),
    then the same events in all: a count past saturation does not run longer samples."""
    sized = pace()
    assert sized.events(Config(1, 1)) == 100_000
    assert sized.events(Config(8, 8)) == 100_000
    assert sized.events(Config(32, 32)) == 100_000 * 8 // 32
    assert sized.seconds(Config(32, 32)) == pytest.approx(0.02)
    assert sized.events(Config(2, 6)) == 100_000  # 4 groups of 4 threads saturate


def test_a_measured_count_is_sized_from_its_own_rate() -> None:
    """Under contention 64 groups ran at 4 pairs' rate, not 8: their samples are sized so."""
    sized = pace()
    sized.learn(measured(Config(64, 64), 4 * PAIR_RATE))
    assert sized.events(Config(64, 64)) == round(0.02 * 4 * PAIR_RATE / 64)
    assert sized.seconds(Config(64, 64)) == pytest.approx(0.02, rel=0.01)
    pinned = Config(1, 1, "compact", (1,), (2,))
    sized.learn(measured(Config(1, 1), PAIR_RATE))
    assert sized.rate(pinned) == pytest.approx(PAIR_RATE)  # its counts' rate, unpinned


def test_counts_between_measured_ones_are_interpolated_on_log_scales() -> None:
    sized = pace()
    sized.learn(measured(Config(4, 4), 4e6))
    sized.learn(measured(Config(16, 16), 16e6))
    assert sized.rate(Config(8, 8)) == pytest.approx(8e6)
    assert sized.rate(Config(64, 64)) == pytest.approx(16e6)  # flat past the largest
    assert sized.rate(Config(2, 2)) == pytest.approx(2e6)  # proportional below the smallest
    # Another ratio has nothing measured: the model, with 16 / 3 groups saturating the CPUs.
    assert sized.rate(Config(8, 16)) == pytest.approx(PAIR_RATE * 16 / 3)


def test_the_fewest_events_a_producer_moves_yield_to_the_sample_s_length() -> None:
    sized = pace(min_events=50_000)
    sized.learn(measured(Config(128, 128), PAIR_RATE))  # 128 producers at one pair's rate
    wanted = 0.02 * PAIR_RATE / 128
    assert sized.events(Config(128, 128)) == round(MAX_STRETCH * wanted)
    assert sized.seconds(Config(128, 128)) == pytest.approx(MAX_STRETCH * 0.02, rel=0.01)


def test_a_call_costs_its_samples_with_their_set_up_and_a_fixed_pace_its_own_events() -> None:
    sized = pace()
    configs = [Config(1, 1), Config(32, 32)]
    assert sized.call_seconds(configs, 3) == pytest.approx(3 * 2 * 0.02 * SAMPLE_OVERHEAD)
    fixed = Pace(20_000, 0.02)
    assert fixed.events(Config(64, 64)) == 20_000
    assert fixed.seconds(Config(1, 1)) == 0.02  # nothing known: a sample's nominal length
