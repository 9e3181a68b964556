"""The thread search run on a curve host (recorded_curves): as a whole (`searched_advice`), and as
the real runs take it, its plan held to the time they left it (`session_advice`, on the `SHARES`
of the issue's runs)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hspc_gen.model import PinThreads
from hspc_gen.model.shape import TopologyShape
from hspc_gen.model.threads import SweepPoint, ThreadAdvice
from hspc_gen.model.workload import Workload
from hspc_gen.search.records.samples import RecordKey
from hspc_gen.search.records.store import RecordStore
from hspc_gen.search.threads import advice
from hspc_gen.search.threads.recommend import recommend
from hspc_gen.search.threads.recorded import Budget
from hspc_gen.search.threads.session import Recording, ThreadInputs, recommend_on
from hspc_gen.search.threads.sweep import sweep
from recorded_curves import Curve, CurveHost, random_curve


def _host(
    shape: TopologyShape, curve: Curve | None, seed: int, noise: float, cpus: int
) -> CurveHost:
    if curve is None:  # a random curve, with a channel whose waits sleep or spin
        workload = ("spinning_consumer", "sleeping_consumer")[seed % 2]
        return CurveHost(shape, random_curve(seed, cpus), workload, noise=noise, seed=seed)
    return CurveHost(
        shape, curve.throughput, curve.workload, noise=noise, seed=seed, spread=curve.spread
    )


def searched_advice(
    shape: TopologyShape, curve: Curve | None, seed: int, noise: float, cpus: int = 0
) -> ThreadAdvice:
    host = _host(shape, curve, seed, noise, cpus)
    return advice.advice(recommend(shape, host.probe(), host.measure))


KEY = RecordKey("fp", "threads-curve", "c++", "-O2")
SHARES = {"main": 8.0, "sweep": 30.0}
"""Seconds the thread step had in the issue's real runs, about: what a 40 s main job left it
after the channel search, and `threads --sweep --budget 30s` (half of it kept for the sweep)."""


def session_advice(
    shape: TopologyShape,
    curve: Curve | None,
    seed: int,
    noise: float,
    *,
    path: str,
    cpus: int = 0,
) -> tuple[ThreadAdvice, tuple[SweepPoint, ...]]:
    """The search as the real runs take it (session.py): the pair's cost probe, the pace, a plan
    sized by the time left (so a short budget leaves out settling and placement, or ends at
    `budget`), every call recorded; for `sweep`, as `threads --sweep` does, half the budget
    kept for the sweep and the sweep measured after it."""
    host, share = _host(shape, curve, seed, noise, cpus), SHARES[path]
    with tempfile.TemporaryDirectory() as tmp:
        budget = Budget(deadline=host.clock() + share, run="curve", clock=host.clock)
        bench = Recording(RecordStore(Path(tmp), "fp"), budget, KEY, host.run).bench(shape)
        inputs = ThreadInputs(Workload(), "auto", "auto", PinThreads.auto, shape)
        reserve = share / 2 if path == "sweep" else 0.0
        rec = recommend_on(inputs, bench, reserve=reserve)
        points = sweep(bench.measure, shape, bench.cost, rec.config(), reserve) if reserve else ()
    return advice.advice(rec, bench.cost), points
