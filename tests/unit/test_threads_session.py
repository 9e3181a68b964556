"""hspc_gen.search.threads.session on simulated hosts of 16, 64 and 128 CPUs (issue 23): the
default search, through the same path as a real run (the pair's cost probe, the pace, the plan
sized by the time left, every call recorded and held to the budget on the simulated clock),
ends by its own rule within its share and answers within 5% of the simulated optimum; a
replay measures nothing and answers the same."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from hspc_gen.model import PinThreads
from hspc_gen.model.workload import Workload
from hspc_gen.search.records.samples import RecordKey
from hspc_gen.search.records.store import RecordStore
from hspc_gen.search.threads.capacity import MAX_SAMPLE_THREADS
from hspc_gen.search.threads.counts import BUDGET
from hspc_gen.search.threads.measure import BudgetSpentError
from hspc_gen.search.threads.plan import FULL
from hspc_gen.search.threads.recommend import Recommendation
from hspc_gen.search.threads.recorded import Budget
from hspc_gen.search.threads.session import Recording, ThreadInputs, recommend_on
from threadsim.hosts import MACHINES, Machine
from threadsim.simulator import (
    MANY_CORE_WORKLOADS,
    GroundTruth,
    SimulatedHost,
    count_grid,
)

KEY = RecordKey("fp", "threads-sim", "c++", "-O2")
SHARE = 15.0
"""Seconds the thread step gets: about what a default 120 s run leaves it after its build."""
NOISE = 0.08
MACHINE = {m.name: m for m in MACHINES}
WORKLOAD = {w.name: w for w in MANY_CORE_WORKLOADS}
CASES = ("cpu_bound", "blocking_3", "lock_limited", "consumer_heavy", "sleeping_consumer")


def host(machine: Machine, workload: str, seed: int) -> SimulatedHost:
    return SimulatedHost(machine.shape, WORKLOAD[workload], noise=NOISE, seed=seed, machine=machine)


@functools.cache
def truth(machine: str, workload: str) -> GroundTruth:
    """The best unpinned count the harness can run (noise-free: the seed does not matter)."""
    sim = host(MACHINE[machine], workload, 0)
    return sim.ground_truth(count_grid(MAX_SAMPLE_THREADS, 3))


def search(
    sim: SimulatedHost, tmp: Path, share: float = SHARE, replay: bool = False
) -> Recommendation:
    store = RecordStore(tmp, "fp")
    budget = Budget(deadline=sim.clock() + share, run="sim", clock=sim.clock)
    run = None if replay else sim.run
    bench = Recording(store, budget, KEY, run).bench(sim.shape)
    inputs = ThreadInputs(Workload(), "auto", "auto", PinThreads.auto, sim.shape)
    return recommend_on(inputs, bench)


@pytest.mark.parametrize("workload", CASES)
@pytest.mark.parametrize("machine", list(MACHINE))
def test_the_search_ends_by_its_own_rule_within_its_share_near_the_optimum(
    machine: str, workload: str, tmp_path: Path
) -> None:
    for seed in (1, 2):
        sim = host(MACHINE[machine], workload, seed)
        rec = search(sim, tmp_path / str(seed))
        best = truth(machine, workload)
        reached = sim.true_throughput(rec.config()) / best.best_events_per_s
        assert rec.termination != BUDGET, f"seed {seed}: cut by the budget"
        assert sim.clock() <= SHARE, f"seed {seed}: {sim.clock():.1f} s of {SHARE} s"
        assert reached >= 0.95, f"seed {seed}: {rec.config().label} reaches {reached:.3f}"
        if rec.threads > MACHINE[machine].cpus:
            assert rec.evidence.oversubscription is not None


def test_more_threads_than_cpus_only_where_threads_sleep(tmp_path: Path) -> None:
    """The 16-CPU guest: a consumer that sleeps in the channel leaves CPU time that more
    groups fill, and the evidence says so; one that spins keeps the search within the CPUs."""
    vm = MACHINE["16vcpu-guest-hidden-smt"]
    sleeps = search(host(vm, "sleeping_consumer", 1), tmp_path / "sleeps")
    spins = search(host(vm, "spinning_consumer", 1), tmp_path / "spins")
    assert sleeps.threads > 16 and sleeps.evidence.oversubscription is not None
    assert "idle" in sleeps.evidence.oversubscription
    assert spins.threads <= 16 and spins.evidence.oversubscription is None


def test_its_cost_grows_with_log_cpus(tmp_path: Path) -> None:
    """Samples the whole search took, 16 against 128 CPUs: more, but nowhere near eight times."""
    taken = {}
    for name in ("16cpu-2s-smt2", "128cpu-2s-smt2"):
        rec = search(host(MACHINE[name], "cpu_bound", 1), tmp_path / name)
        taken[name] = sum(p.samples for p in rec.evidence.curve)
    assert taken["128cpu-2s-smt2"] < 2 * taken["16cpu-2s-smt2"]


def test_a_short_share_holds_the_plan_lower_and_its_replay_keeps_it(tmp_path: Path) -> None:
    sim = host(MACHINE["64cpu-2s-smt2"], "cpu_bound", 3)
    cold = search(sim, tmp_path, share=4.0)
    assert cold.termination != BUDGET and sim.clock() <= 4.0
    assert cold.evidence.resolution is not None and cold.evidence.resolution > FULL.resolution
    again = search(host(MACHINE["64cpu-2s-smt2"], "cpu_bound", 3), tmp_path, 60.0, replay=True)
    assert again == cold  # the rung recorded: a replay with more time plans the same


def test_a_share_too_short_stops_at_the_budget_with_what_it_measured(tmp_path: Path) -> None:
    """Time for the pair and the coarse grid's pilot round only: the answer comes from that
    round and says the budget stopped it; time for not even the pilot: the estimate stays."""
    sim = host(MACHINE["16cpu-2s-smt2"], "cpu_bound", 1)
    rec = search(sim, tmp_path / "pilot", share=0.4)
    assert rec.termination == BUDGET and sim.clock() <= 0.4
    assert rec.evidence.curve and max(p.samples for p in rec.evidence.curve) == 1
    with pytest.raises(BudgetSpentError):
        search(host(MACHINE["16cpu-2s-smt2"], "cpu_bound", 1), tmp_path / "none", share=0.1)
