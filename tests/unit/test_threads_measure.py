"""hspc_gen.search.threads.measure: configurations, the Lab's global rounds and paired
comparisons, and the evidence a point carries."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pytest

from hspc_gen.search.records.samples import Sample
from hspc_gen.search.threads import advice
from hspc_gen.search.threads.measure import Config, Lab, ThreadSample


def test_every_producer_needs_its_own_consumer() -> None:
    with pytest.raises(ValueError, match="consumer of its own"):
        Config(3, 2)
    with pytest.raises(ValueError, match="consumer of its own"):
        Config(0, 1)


def test_a_pinned_configuration_lists_one_cpu_per_thread() -> None:
    with pytest.raises(ValueError, match="one CPU per thread"):
        Config(2, 2, "compact", (1, 2), (3,))
    pinned = Config(1, 2, "compact", (1,), (2, 3))
    assert pinned.pinned and pinned.label == "1p2c@compact"
    assert not Config(1, 2).pinned and Config(1, 2).label == "1p2c"
    assert pinned.counts() == Config(1, 2)


def test_consumers_are_dealt_round_robin_to_the_producers() -> None:
    config = Config(3, 7)
    assert config.group_sizes() == (3, 2, 2)
    assert [config.group_of(j) for j in range(7)] == [0, 1, 2, 0, 1, 2, 0]
    assert config.consumers_per_producer == 3 and config.threads == 10


def fake_sample(config: Config, rnd: int, ns_per_event: float) -> ThreadSample:
    events = 1000
    wall = ns_per_event * events
    sample = Sample(
        arm=config.label,
        round=rnd,
        events=events,
        wall_ns=wall,
        cpu_ns_producer=wall * config.producers,
        cpu_ns_consumer=wall * config.consumers / 2,
        nivcsw_producer=0,
        nivcsw_consumer=0,
        migrations=4,
        verified=True,
    )
    return ThreadSample(sample, voluntary_switches=10, wait_ns=wall * config.threads / 4)


class Scripted:
    """A measure whose costs per configuration are given, with a per-round factor both share."""

    def __init__(self, cost: Mapping[Config, float]) -> None:
        self.cost = cost
        self.calls: list[tuple[tuple[Config, ...], int]] = []

    def __call__(self, configs: Sequence[Config], rounds: int) -> dict[Config, list[ThreadSample]]:
        self.calls.append((tuple(configs), rounds))
        return {
            c: [fake_sample(c, r, self.cost[c] * (1.0 + 0.1 * r)) for r in range(rounds)]
            for c in configs
        }


def test_the_lab_numbers_rounds_across_calls_and_pairs_only_shared_rounds() -> None:
    a, b, c = Config(1, 1), Config(2, 2), Config(3, 3)
    measure = Scripted({a: 100.0, b: 50.0, c: 40.0})
    lab = Lab(measure)
    assert lab.run([b, a, b], 6) == 0  # duplicates run once, in a sorted order
    assert measure.calls[0] == ((a, b), 6)
    assert lab.run([a, c], 6) == 6
    assert lab.rounds == 12
    assert sorted({s.round for s in lab.samples(a)}) == list(range(12))
    rel = lab.compare(b, a)
    assert rel.n == 6 and rel.gain == pytest.approx(2.0)
    assert lab.compare(c, a, since=6).gain == pytest.approx(2.5)
    assert lab.compare(c, b).n == 0 and math.isnan(lab.compare(c, b).gain)
    assert lab.measured() == (a, b, c)


def test_a_point_reports_throughput_and_the_os_metrics_per_second() -> None:
    config = Config(2, 2)
    lab = Lab(Scripted({config: 100.0}))
    lab.run([config], 1)
    point = lab.point(config)
    assert point.events_per_s == pytest.approx(1e7)
    assert point.cpu_utilisation == pytest.approx(3.0)  # 2 producers busy, 2 consumers half
    assert point.voluntary_switches_per_s == pytest.approx(10 / 1e-4)
    assert point.migrations_per_s == pytest.approx(4 / 1e-4)
    assert point.wait_fraction == pytest.approx(0.25)
    assert point.per_event(point.voluntary_switches_per_s) == pytest.approx(0.01)
    reported = advice.curve_point(point)  # as the result carries it
    assert reported.threads == 4 and reported.placement == "unpinned"
    assert reported.events_per_s == pytest.approx(1e7)


def test_an_unmeasured_point_is_empty_not_an_error() -> None:
    lab = Lab(Scripted({}))
    point = lab.point(Config(1, 1))
    assert point.samples == 0 and math.isnan(point.events_per_s)
    assert lab.curve() == ()
