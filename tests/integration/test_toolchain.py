"""The real toolchain: render, build and run as three steps, with the app's own source files
compiled into the benchmark."""

from __future__ import annotations

import re
from pathlib import Path

from hspc_gen.batch_project import BatchProjects
from hspc_gen.model import ChannelParams, Primitive, Status
from hspc_gen.model.workload import Workload
from hspc_gen.render import AppWork
from hspc_gen.search.measure.plan import make_plan
from hspc_gen.search.measure.toolchain import RealToolchain
from hspc_gen.search.strategies.base import make_batch

COUNT = Path(__file__).resolve().parents[1] / "data" / "app_work" / "count.cpp"
POINT = ChannelParams(64, 0, 4, 4096, Primitive.futex)


def toolchain(cache: Path) -> RealToolchain:
    return RealToolchain("fp", "c++", cache, event_bytes=8, renderer=BatchProjects())


def test_the_apps_own_work_runs_in_every_sample_and_baseline(tmp_path: Path) -> None:
    work = Workload(producer_source=COUNT, consumer_source=COUNT)
    assert [name for name, _ in AppWork.of(work).files] == ["app_work_0.cpp"]  # shared: once
    batch = make_batch("two", "primitive", [POINT], POINT, 6)
    chain = toolchain(tmp_path)
    prepared = chain.prepare(batch, work)
    built = chain.build(prepared)
    assert built.status is Status.ok and built.executable is not None, built.log
    plan = make_plan(
        batch.candidates,
        incumbent=batch.incumbent.id,
        baselines=("producer_alone", "consumer_alone"),
        rounds=2,
        events_per_sample=10_000,
        seed=1,
    )
    result = chain.run(built, prepared, plan)
    assert result.status is Status.ok, result.log
    assert all(s.verified for s in result.samples)
    # Each sample says how long its threads waited for a CPU, where the kernel tells.
    told = Path("/proc/thread-self/schedstat").exists()
    assert all(s.delay_ns >= 0 if told else s.delay_ns == -1 for s in result.samples)
    counts = re.search(r"app_work: produced=(\d+) consumed=(\d+)", result.log)
    assert counts is not None, result.log
    # The candidate and its A/A copy (2 rounds x 10000 events each), plus the producer-alone
    # (producing) and consumer-alone (consuming) baselines: the app's code is in all of them.
    assert int(counts.group(1)) >= 2 * 2 * 10_000 + 2 * 10_000
    assert int(counts.group(2)) >= 2 * 2 * 10_000 + 2 * 10_000


def test_preparing_builds_nothing_and_keys_records_by_their_work(tmp_path: Path) -> None:
    batch = make_batch("two", "primitive", [POINT], POINT, 6)
    chain = toolchain(tmp_path)
    bare = chain.prepare(batch, Workload()).key
    worked = chain.prepare(batch, Workload(producer_ns=40.0, consumer_ns=15.0)).key
    assert bare != worked
    assert bare == chain.prepare(batch, Workload()).key
    assert not (tmp_path / "builds").exists()  # the key comes from the rendered sources alone


def test_a_record_is_keyed_by_the_headers_the_apps_sources_include(tmp_path: Path) -> None:
    source, header = tmp_path / "work.cpp", tmp_path / "lib" / "work.hpp"
    header.parent.mkdir()
    header.write_text("constexpr int kWork = 1;\n", encoding="utf-8")
    source.write_text('#include "lib/work.hpp"\n', encoding="utf-8")
    batch = make_batch("two", "primitive", [POINT], POINT, 6)
    chain, work = toolchain(tmp_path / "cache"), Workload(consumer_source=source)
    before = chain.prepare(batch, work).key
    header.write_text("constexpr int kWork = 2;\n", encoding="utf-8")
    assert chain.prepare(batch, work).key != before  # the same source, other work


def test_a_build_that_fails_is_a_status_and_every_plan_answers_with_it(tmp_path: Path) -> None:
    broken = tmp_path / "broken.cpp"
    broken.write_text("this is not C++\n", encoding="utf-8")
    batch = make_batch("two", "primitive", [POINT], POINT, 6)
    chain = toolchain(tmp_path / "cache")
    prepared = chain.prepare(batch, Workload(consumer_source=broken))
    built = chain.build(prepared)
    assert built.status is Status.compile_error and built.executable is None
    plan = make_plan(batch.candidates, incumbent=batch.incumbent.id, baselines=(),
                     rounds=1, events_per_sample=1000, seed=1)  # fmt: skip
    result = chain.run(built, prepared, plan)
    assert result.status is Status.compile_error
    assert "error" in result.log  # the compiler's own words reach the record


def test_a_sample_that_dies_in_the_users_code_is_named_with_the_side_and_left_out(
    tmp_path: Path,
) -> None:
    work = Workload(consumer_source=COUNT.parent / "crash_late_consumer.cpp")
    other = POINT.replace(buffers=8)
    batch = make_batch("two", "primitive", [POINT, other], POINT, 6)
    chain = toolchain(tmp_path)
    prepared = chain.prepare(batch, work)
    built = chain.build(prepared)
    assert built.executable is not None, built.log
    # 120000 events a sample: the user's consumer dies in the third sample it consumes.
    plan = make_plan(batch.candidates, incumbent=batch.incumbent.id, baselines=(),
                     rounds=2, events_per_sample=120_000, seed=3)  # fmt: skip
    result = chain.run(built, prepared, plan)
    (culprit,) = result.arm_status
    assert result.arm_status[culprit] is Status.crashed
    assert result.causes[culprit] == (
        "fatal signal SIGSEGV in the user's consumer code (hspc_consume)"
    )


def test_a_point_that_does_not_compile_is_left_out_alone_though_it_shared_a_unit(
    tmp_path: Path,
) -> None:
    # buffers=65 breaks the channel's static_assert; its unit-mates must still be measured.
    points = [POINT.replace(buffers=n) for n in (2, 3, 8, 65)]
    batch = make_batch("one", "buffers", points, POINT, 6)
    chain = toolchain(tmp_path)
    prepared = chain.prepare(batch, Workload())
    assert prepared.kinds == ("throughput",)
    ids = tuple(c.id for c in batch.candidates)
    units = set(chain.project(batch, Workload(), ids, prepared.kinds).variants.values())
    assert len(units) < len(ids)  # the broken point shares a unit
    built = chain.build(prepared)
    assert built.status is Status.ok and built.executable is not None, built.log
    broken = next(c.id for c in batch.candidates if c.params.buffers == 65)
    assert set(built.failed) == {broken}
    assert "Buffers must be in [2, 64]" in built.failed[broken]
