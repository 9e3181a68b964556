"""The real Measure's plan and parsing, and the thread kinds of the real binary for every code
shape of the channel."""

from __future__ import annotations

from pathlib import Path

import pytest

from hspc_gen.batch_project import BatchProjects
from hspc_gen.model import ChannelParams, Primitive, Status
from hspc_gen.model.workload import Workload
from hspc_gen.search.measure.harness import NO_EVENTS, WRONG_ANSWER, parse_samples
from hspc_gen.search.measure.toolchain import THREAD_KINDS, RealToolchain
from hspc_gen.search.records.samples import candidate_id
from hspc_gen.search.strategies.base import make_batch
from hspc_gen.search.threads.harness import HarnessMeasure, MeasureFailedError, by_config
from hspc_gen.search.threads.measure import Config

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


def failing_entry(name: str, events: float, verified: int = 1) -> dict[str, object]:
    return {
        "name": name, "run_name": name, "run_type": "iteration", "real_time": 1e6,
        "time_unit": "ns", "events": events, "cpu_ns_producer": 5e5, "cpu_ns_consumer": 0,
        "nivcsw_producer": 0, "nivcsw_consumer": 0, "migrations": 0, "verified": verified,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("entry", "status", "cause"),
    [
        (failing_entry("r1/t1", 0, verified=0), Status.no_samples, NO_EVENTS),
        (failing_entry("r1/t1", 1e5, verified=0), Status.wrong_answer, WRONG_ANSWER),
    ],
)
def test_a_sample_that_moved_nothing_or_failed_its_check_fails_the_call(
    entry: dict[str, object], status: Status, cause: str
) -> None:
    """What the harness says of such a sample is a failure of the configuration that ran it;
    it never reaches the search's statistics (where one that moved nothing divided by zero)."""
    configs = [Config(1, 1), Config(2, 4)]
    document = {"benchmarks": [failing_entry("r0/t0", 1e5), failing_entry("r0/t1", 2e5), entry]}
    parsed = parse_samples(document)
    assert parsed.failed == {"t1": status} and parsed.cause("t1") == cause
    assert all(s.events > 0 for s in parsed.samples)
    with pytest.raises(MeasureFailedError) as failed:
        by_config(document, configs, "hspc_harness: r1/t1: NO EVENTS (the sample moved nothing)")
    assert failed.value.status is status
    assert failed.value.log.startswith(f"2p4c: {cause}\nhspc_harness: r1/t1")


SHAPED = ChannelParams(64, 4096, 4, 4096, Primitive.hybrid, prefetch_bytes=256, huge_pages=1)


@pytest.mark.parametrize(
    ("channel", "bound"),
    [(SHAPED, 0), (ChannelParams(64, 0, 4, 1024, Primitive.futex, prefetch_bytes=64), 50_000)],
)
def test_every_code_shape_runs_the_thread_kinds_for_real(
    tmp_path: Path, channel: ChannelParams, bound: int
) -> None:
    """The thread search's binary, built for a channel with prefetch and huge pages (the code
    shape the harness once declined, so that every sample moved nothing) or a latency bound
    (whose fan-out cuts buffers by the clock): every configuration moves its events, verified."""
    chain = RealToolchain(
        "fp", "c++", tmp_path, event_bytes=8, renderer=BatchProjects(), max_latency_ns=bound
    )
    prepared = chain.prepare(make_batch("threads", "threads", [channel], channel, 1), WORK,
                             THREAD_KINDS)  # fmt: skip
    built = chain.build(prepared)
    assert built.executable is not None, built.log
    harness = HarnessMeasure(built.executable, candidate_id(channel), WORK, seed=3)
    configs = [Config(1, 1), Config(1, 3), Config(2, 2)]
    got = harness.measure(configs, rounds=2, call=0, events=dict.fromkeys(configs, 20_000))
    for config in configs:
        assert [s.sample.round for s in got[config]] == [0, 1]
        assert all(s.sample.verified for s in got[config])
        assert all(s.sample.events == 20_000 * config.producers for s in got[config])
