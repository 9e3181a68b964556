"""hspc_gen.search.threads.recorded and the thread session's failure paths: the thread search's
calls recorded in the record store, replayed exactly, and failures as values."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

import fake_runner as fr
from hspc_gen.cli.main import TerminatedError
from hspc_gen.model import ChannelParams, Effort, Objective, PinThreads, Primitive, Status
from hspc_gen.model.result import RunInfo, TuneResult
from hspc_gen.model.shape import TopologyShape
from hspc_gen.model.threads import ThreadFailure
from hspc_gen.model.workload import Workload
from hspc_gen.pipeline import INTERNAL_ERROR, threads_for
from hspc_gen.reports import outcome
from hspc_gen.search.batch import Machinery
from hspc_gen.search.measure.build import BuildResult
from hspc_gen.search.measure.toolchain import Prepared
from hspc_gen.search.records.samples import RecordKey, Sample
from hspc_gen.search.records.store import RecordStore
from hspc_gen.search.strategies.base import Batch
from hspc_gen.search.threads import session
from hspc_gen.search.threads.harness import MeasureFailedError
from hspc_gen.search.threads.measure import BudgetSpentError, Config, ThreadSample
from hspc_gen.search.threads.pace import Pace
from hspc_gen.search.threads.recorded import (
    Budget,
    NotRecordedError,
    RecordedMeasure,
)
from hspc_gen.search.threads.session import (
    BUDGET_SPENT,
    ThreadInputs,
    ThreadRun,
    recommend_threads,
)
from hspc_gen.search.tune import Settings, StageSpec

KEY = RecordKey("fp", "threads-test", "c++", "-O2")
CONFIGS = [Config(1, 1), Config(2, 2, "compact", (1, 2), (3, 4))]


class Harness:
    """A stand-in harness: `rounds` samples per configuration (fewer with `short`), counted."""

    def __init__(self, short: bool = False) -> None:
        self.calls: list[int] = []
        self.events: list[dict[Config, int]] = []
        self.short = short

    def __call__(
        self, configs: Sequence[Config], rounds: int, call: int, events: Mapping[Config, int]
    ) -> Mapping[Config, Sequence[ThreadSample]]:
        self.calls.append(call)
        self.events.append(dict(events))
        made = rounds - 1 if self.short else rounds
        return {c: [self.sample(c, r, call, events[c]) for r in range(made)] for c in configs}

    @staticmethod
    def sample(config: Config, rnd: int, call: int, events: int) -> ThreadSample:
        moved = events * config.producers
        wall = 100.0 * moved * (1 + 0.1 * rnd + 0.01 * call) / config.producers
        sample = Sample(f"t{config.producers}", rnd, moved, wall, wall, wall / 2, 1, 0, 2, True)
        return ThreadSample(sample, voluntary_switches=3 + rnd, wait_ns=wall / 5)


def measure(
    store: RecordStore, harness: Harness | None, budget: Budget | None = None
) -> RecordedMeasure:
    spent = budget or Budget()
    return RecordedMeasure(store, KEY, "threads", pace(), seed=5, run=harness, budget=spent)


def pace() -> Pace:
    """Sized as if a pair moved 10k events/s (200 in 20 ms); Harness then shows 10 M/s."""
    return Pace(200, 0.02, pair_rate=1e4, saturation=4.0, min_events=50, max_events=10**6)


def test_calls_are_recorded_and_a_replay_sees_exactly_what_the_cold_run_saw(
    tmp_path: Path,
) -> None:
    harness = Harness()
    cold = measure(RecordStore(tmp_path, "fp"), harness)
    first, second = cold(CONFIGS, 4), cold(CONFIGS[:1], 3)
    assert harness.calls == [0, 1]
    # The first call sized from the cost model (a pair's events per producer up to the CPUs'
    # saturation), the second from what the first measured.
    assert harness.events[0] == {CONFIGS[0]: 200, CONFIGS[1]: 200}
    assert harness.events[1] != harness.events[0]
    warm = measure(RecordStore(tmp_path, "fp"), None)  # a replay: nothing may be measured
    assert warm(CONFIGS, 4) == first and warm(CONFIGS[:1], 3) == second
    (sample, *_) = first[CONFIGS[1]]
    assert sample.sample.arm == "threads/0/2p2c@compact:1+2+3+4"
    assert (sample.voluntary_switches, sample.wait_ns) == (3, sample.sample.wall_ns / 5)
    with pytest.raises(NotRecordedError):
        warm(CONFIGS, 4)  # a third call was never measured


def test_a_call_that_leaves_rounds_unmeasured_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    short = measure(RecordStore(tmp_path, "fp"), Harness(short=True))
    with pytest.raises(MeasureFailedError) as failed:
        short(CONFIGS, 4)
    assert failed.value.status is Status.no_samples


class FailingBuild(fr.SimulatedToolchain):
    def build(self, prepared: Prepared) -> BuildResult:
        return BuildResult(Status.compile_error, None, "src", log="work.cpp:3: error: nope")


CHANNEL = ChannelParams(64, 0, 4, 4096, Primitive.futex)
INPUTS = ThreadInputs(
    Workload(), "auto", "auto", PinThreads.auto, TopologyShape.uniform(cores_per_package=2)
)


def test_a_thread_search_whose_build_fails_is_a_thread_failure(tmp_path: Path) -> None:
    store = RecordStore(tmp_path, "fp")
    found = recommend_threads(CHANNEL, INPUTS, ThreadRun(FailingBuild(), store))
    assert found == ThreadFailure(Status.compile_error, "work.cpp:3: error: nope")


def test_a_search_whose_build_does_not_fit_is_cut_and_the_same_command_stops_there(
    tmp_path: Path,
) -> None:
    toolchain = fr.SimulatedToolchain()
    spent = Budget(deadline=time.monotonic(), run="quick:45s")
    found = recommend_threads(
        CHANNEL, INPUTS, ThreadRun(toolchain, RecordStore(tmp_path, "fp"), spent)
    )
    assert found == ThreadFailure(Status.skipped, BUDGET_SPENT)
    # Replayed, the run before it is quicker and leaves time for the build: it must not use it,
    # or the same records would give another header.
    ample = dataclasses.replace(spent, deadline=time.monotonic() + 600)
    again = recommend_threads(
        CHANNEL, INPUTS, ThreadRun(toolchain, RecordStore(tmp_path, "fp"), ample)
    )
    assert again == found and toolchain.builds == 0


def test_a_call_past_the_budget_is_cut_recorded_and_replayed_as_cut(tmp_path: Path) -> None:
    harness = Harness()
    budget = Budget(deadline=time.monotonic() + 60, run="measure:120s")
    cold = measure(RecordStore(tmp_path, "fp"), harness, budget)
    cold(CONFIGS, 4)  # fits: measured
    spent = dataclasses.replace(budget, deadline=time.monotonic())
    cold.budget = spent
    with pytest.raises(BudgetSpentError):
        cold(CONFIGS, 4)
    assert harness.calls == [0]
    warm = measure(RecordStore(tmp_path, "fp"), None, budget)
    warm(CONFIGS, 4)
    with pytest.raises(BudgetSpentError):  # the same command stops where the first run did
        warm(CONFIGS, 4)


class RaisingToolchain(fr.SimulatedToolchain):
    """A defect of hspc-gen's own inside the thread step (what the zero-event sample was)."""

    def prepare(self, batch: Batch, workload: Workload, kinds: tuple[str, ...] = ()) -> Prepared:
        raise ZeroDivisionError("float division by zero")


def test_an_error_of_the_tools_own_in_the_thread_step_is_a_failure_the_run_reports(
    tmp_path: Path,
) -> None:
    """The channel's search is finished when the thread step runs: whatever fails there, the
    run still writes its header and reports, and ends saying what failed (exit status 1)."""
    machinery = Machinery(RecordStore(tmp_path, "fp"), RaisingToolchain())
    stages = (StageSpec("stage_two", Workload(), ()),)
    settings = Settings(Objective.throughput, Effort.quick, 7, math.inf, True, stages)
    found = threads_for(CHANNEL, INPUTS, machinery, settings)
    assert isinstance(found, ThreadFailure) and found.status is Status.crashed
    assert found.error.startswith(INTERNAL_ERROR) and "ZeroDivisionError" in found.error
    run = RunInfo("t", 8, Objective.throughput, Effort.quick, 60.0, 30.0, {}, "CPU", "fp", "0")
    said = outcome.threads_unmet(TuneResult(run, CHANNEL, None, found))
    assert said is not None and said.startswith("the thread search failed (crashed: ")
    budget = ThreadFailure(Status.skipped, BUDGET_SPENT)  # the budget is not a failure
    assert outcome.threads_unmet(TuneResult(run, CHANNEL, None, budget)) is None


@pytest.mark.parametrize("stop", [KeyboardInterrupt, TerminatedError])
def test_a_signal_in_the_thread_step_ends_the_run_and_is_no_failure_of_its_own(
    tmp_path: Path, stop: type[BaseException]
) -> None:
    """SIGINT or SIGTERM while the thread counts are measured: the run stops (130, 143), not
    "the thread search failed" with exit 1."""

    class Stopped(fr.SimulatedToolchain):
        def prepare(
            self, batch: Batch, workload: Workload, kinds: tuple[str, ...] = ()
        ) -> Prepared:
            raise stop

    machinery = Machinery(RecordStore(tmp_path, "fp"), Stopped())
    stages = (StageSpec("stage_two", Workload(), ()),)
    settings = Settings(Objective.throughput, Effort.quick, 7, math.inf, True, stages)
    with pytest.raises(stop):
        threads_for(CHANNEL, INPUTS, machinery, settings)


def test_the_pair_s_sleep_beyond_its_cpu_time_is_read_from_its_least_disturbed_sample() -> None:
    """Blocking work shows as wall time the slower side spent off its CPU; a sample stretched
    by noise shows more of it, so the least stretched one says how much."""

    def pair(round_: int, wall: float) -> ThreadSample:
        return ThreadSample(Sample("t1", round_, 1000, wall, 1e6, 2e5, 0, 0, 0, True), 0, 0.0)

    cost = session._cost([pair(0, 3.3e6), pair(1, 3.0e6), pair(2, 4.5e6)])
    assert cost.wait_ratio == pytest.approx(2.0)  # 3 us of wall for 1 us of the producer's CPU
    assert session._cost([pair(0, 0.9e6)]).wait_ratio == 0.0  # never below nothing
