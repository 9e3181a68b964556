"""hspc_gen.search.threads.sweep and `threads --sweep --budget` on simulated hosts: the ground
truth measured within its seconds (rounds first, then counts, thinned), stopped between calls at
the budget, and the whole command, recommendation and sweep, within the budget + 10%."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest

import fake_runner as fr
from hspc_gen.model import ChannelParams, PinThreads, Primitive
from hspc_gen.model.threads import ThreadAdvice
from hspc_gen.model.workload import Workload
from hspc_gen.search.records.samples import RecordKey
from hspc_gen.search.records.store import RecordStore
from hspc_gen.search.threads.measure import Config
from hspc_gen.search.threads.recorded import Budget, Run
from hspc_gen.search.threads.session import (
    Recording,
    ThreadInputs,
    ThreadRun,
    recommend_on,
    sweep_threads,
)
from hspc_gen.search.threads.sweep import SWEEP_ROUNDS, default_max_groups, sweep
from threadsim.hosts import MACHINES
from threadsim.simulator import MANY_CORE_WORKLOADS, SimulatedHost

KEY = RecordKey("fp", "threads-sweep", "c++", "-O2")
MACHINE = {m.name: m for m in MACHINES}
WORKLOAD = {w.name: w for w in MANY_CORE_WORKLOADS}


def host(machine: str, workload: str, seed: int = 1) -> SimulatedHost:
    m = MACHINE[machine]
    return SimulatedHost(m.shape, WORKLOAD[workload], noise=0.08, seed=seed, machine=m)


def points(sim: SimulatedHost, tmp: Path, seconds: float) -> tuple[int, list[Config]]:
    """The sweep after the recommendation (whose measurements pace it), on `seconds` more."""
    budget = Budget(run="sim", clock=sim.clock)
    bench = Recording(RecordStore(tmp, "fp"), budget, KEY, sim.run).bench(sim.shape)
    inputs = ThreadInputs(Workload(), "auto", "auto", PinThreads.auto, sim.shape)
    advised = recommend_on(inputs, bench).config()
    start = sim.clock()
    bench.measure.budget = Budget(deadline=start + seconds, run="sim", clock=sim.clock)
    found = sweep(bench.measure, sim.shape, bench.cost, advised, seconds)
    assert sim.clock() - start <= 1.1 * seconds
    assert any(p.recommended for p in found)
    return max(p.rate.n for p in found), [Config(p.producers, p.consumers) for p in found]


def test_unbounded_every_count_runs_every_round(tmp_path: Path) -> None:
    sim = host("16cpu-2s-smt2", "cpu_bound")
    rounds, configs = points(sim, tmp_path, math.inf)
    assert rounds == SWEEP_ROUNDS
    every = [Config(n, n) for n in range(1, default_max_groups(sim.shape) + 1)]
    assert configs[: len(every)] == every  # and the advice, when it is pinned


@pytest.mark.parametrize("seconds", [12.0, 4.0])
def test_a_budget_takes_rounds_then_counts_and_is_kept(tmp_path: Path, seconds: float) -> None:
    sim = host("128cpu-2s-smt2", "lock_limited")
    rounds, configs = points(sim, tmp_path, seconds)
    assert rounds < SWEEP_ROUNDS or len(configs) < default_max_groups(sim.shape)
    assert Config(1, 1) in configs


def machine_run(sim: SimulatedHost) -> Callable[[Path, str, Workload], Run]:
    """What ThreadRun runs a built binary's samples with: here, the simulated host."""

    def run(_executable: Path, _variant: str, _workload: Workload) -> Run:
        return sim.run

    return run


@pytest.mark.parametrize(
    ("machine", "workload"),
    [
        ("16cpu-2s-smt2", "sleeping_consumer"),
        ("16vcpu-guest-hidden-smt", "cpu_bound"),
        ("64cpu-2s-smt2", "blocking_3"),
        ("128cpu-2s-smt2", "lock_limited"),
        ("128cpu-2s-smt2", "consumer_heavy"),
    ],
)
def test_threads_sweep_with_a_budget_ends_within_it(
    machine: str, workload: str, tmp_path: Path
) -> None:
    """`hspc-gen threads --sweep --budget 20s`, as the pipeline runs it: the recommendation on
    what the sweep's share leaves, then the sweep on its share, on a simulated host."""
    for budget_seconds in (20.0, 8.0):
        sim = host(machine, workload)
        budget = Budget(
            deadline=budget_seconds, run=f"threads-sweep:{budget_seconds:g}s", clock=sim.clock
        )
        where = ThreadRun(
            fr.SimulatedToolchain(), RecordStore(tmp_path, "fp"), budget, machine_run(sim)
        )
        inputs = ThreadInputs(Workload(), "auto", "auto", PinThreads.auto, sim.shape)
        channel = ChannelParams(64, 0, 4, 4096, Primitive.futex)
        advice, curve = sweep_threads(channel, inputs, where, budget_seconds)
        assert isinstance(advice, ThreadAdvice) and advice.evidence is not None
        assert advice.evidence.termination != "budget"
        assert curve and any(p.recommended for p in curve)
        assert sim.clock() <= 1.1 * budget_seconds, f"{sim.clock():.1f} s of {budget_seconds} s"
