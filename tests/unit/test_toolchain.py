"""The real toolchain with the app's own source files compiled into the benchmark."""

from __future__ import annotations

import re
from pathlib import Path

from hspc_gen.model import ChannelParams, Primitive, Status
from hspc_gen.search.records import make_plan
from hspc_gen.search.run import Invocation, run_plan
from hspc_gen.search.strategies.base import make_batch
from hspc_gen.search.toolchain import RealToolchain, app_work
from hspc_gen.target import Workload

COUNT = Path(__file__).resolve().parents[1] / "data" / "app_work" / "count.cpp"


def test_the_apps_own_work_runs_in_every_sample_and_baseline(tmp_path: Path) -> None:
    work = Workload(producer_source=COUNT, consumer_source=COUNT)
    assert [name for name, _ in app_work(work).files] == ["app_work_0.cpp"]  # shared: once
    point = ChannelParams(64, 0, 4, 4096, Primitive.futex)
    batch = make_batch("two", "primitive", [point], point, 6)
    toolchain = RealToolchain("fp", "c++", tmp_path, 2000, event_bytes=8)
    executable = toolchain.executable(batch, work)
    plan = make_plan(
        batch.candidates,
        incumbent=batch.incumbent.id,
        baselines=("producer_alone", "consumer_alone"),
        rounds=2,
        events_per_sample=10_000,
        seed=1,
    )
    result = run_plan(plan, Invocation(executable, work, {batch.incumbent.id: point}))
    assert result.status is Status.ok, result.log
    assert all(s.verified for s in result.samples)
    counts = re.search(r"app_work: produced=(\d+) consumed=(\d+)", result.log)
    assert counts is not None, result.log
    # The candidate and its A/A copy (2 rounds x 10000 events each), plus the producer-alone
    # (producing) and consumer-alone (consuming) baselines: the app's code is in all of them.
    assert int(counts.group(1)) >= 2 * 2 * 10_000 + 2 * 10_000
    assert int(counts.group(2)) >= 2 * 2 * 10_000 + 2 * 10_000


def test_records_of_one_workload_are_never_keys_of_another(tmp_path: Path) -> None:
    point = ChannelParams(64, 0, 4, 4096, Primitive.futex)
    batch = make_batch("two", "primitive", [point], point, 6)
    toolchain = RealToolchain("fp", "c++", tmp_path, 2000, event_bytes=8)
    bare = toolchain(batch, Workload(), ()).key
    worked = toolchain(batch, Workload(producer_ns=40.0, consumer_ns=15.0), ()).key
    assert bare != worked
    assert bare == toolchain(batch, Workload(), ()).key
