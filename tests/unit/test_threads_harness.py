"""The real Measure's plan and parsing, without running a binary (the end-to-end run of
`hspc-gen threads` exercises the binary)."""

from __future__ import annotations

from pathlib import Path

from hspc_gen.search.threads.harness import HarnessMeasure, by_config
from hspc_gen.search.threads.measure import Config
from hspc_gen.target import Workload

WORK = Workload(producer_ns=40.0, consumer_ns=15.0)


def measure() -> HarnessMeasure:
    return HarnessMeasure(Path("/nonexistent"), "cabc", WORK, seed=3)


def test_every_round_runs_every_configuration_once_in_a_seeded_order() -> None:
    configs = [Config(1, 1), Config(2, 2), Config(1, 2, "compact", (1,), (2, 3))]
    events = dict.fromkeys(configs, 100000)
    text = measure().plan(configs, rounds=4, call=0, events=events)
    assert text == measure().plan(configs, rounds=4, call=0, events=events)
    assert text != measure().plan(configs, rounds=4, call=1, events=events)  # its own order
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert len(lines) == 12
    for r in range(4):
        names = sorted(line.split()[0] for line in lines if line.startswith(f"r{r}/"))
        assert names == [f"r{r}/t0", f"r{r}/t1", f"r{r}/t2"]
    pinned = next(line for line in lines if line.split()[0].endswith("/t2"))
    assert "producers=1 consumers=2" in pinned and pinned.endswith("cpus=1+2+3")
    assert "producer_ns=40 consumer_ns=15" in pinned
    assert all(" fanout cabc 100000 1 - " in line for line in lines)


def test_each_configuration_moves_the_events_per_producer_it_was_sized_to() -> None:
    few, many = Config(1, 1), Config(64, 64)
    text = measure().plan([few, many], rounds=1, call=0, events={few: 200000, many: 20000})
    lines = {line.split()[0].split("/")[1]: line for line in text.splitlines()[1:]}
    assert " fanout cabc 200000 1 - producers=1 " in lines["t0"]
    assert " fanout cabc 20000 1 - producers=64 " in lines["t1"]


def test_samples_map_back_to_their_configurations_with_the_os_counters() -> None:
    configs = [Config(1, 1), Config(2, 2)]

    def entry(name: str, events: float) -> dict[str, object]:
        return {
            "name": name, "run_name": name, "run_type": "iteration", "real_time": 1e6,
            "time_unit": "ns", "events": events, "cpu_ns_producer": 5e5, "cpu_ns_consumer": 4e5,
            "nivcsw_producer": 1, "nivcsw_consumer": 0, "nvcsw_producer": 3, "nvcsw_consumer": 4,
            "migrations": 2, "verified": 1, "wait_ns": 1234.0,
        }  # fmt: skip

    later = {**entry("r1/t0", 1e5), "wait_ns": 99.0}
    document = {"benchmarks": [entry("r0/t1", 2e5), entry("r0/t0", 1e5), later]}
    got = by_config(document, configs)
    assert [(s.sample.round, s.wait_ns) for s in got[Config(1, 1)]] == [(0, 1234.0), (1, 99.0)]
    (two,) = got[Config(2, 2)]
    assert two.sample.events == 200000 and two.voluntary_switches == 7 and two.wait_ns == 1234.0
    assert two.sample.events_per_second == 2e8  # 200000 events in 1 ms
