"""Thread curves as simulated hosts: those recorded on real hosts (tests/data/threads/curves.json)
and seeded random ones.

A `CurveHost` is the simulator (its shared, own and heavy-tail noise, pairing by round, OS
metrics, clock) with each count's noise-free throughput read off a curve instead of the cost
model: a recorded count as recorded, another one interpolated by thread count between the
recorded counts of its shape (consumers per producer), else of any shape. A pinned placement
keeps the simulator's ratio to the same counts unpinned.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hspc_gen.host.machine import read_host
from hspc_gen.model.shape import TopologyShape
from hspc_gen.search.threads.measure import Config
from threadsim.physics import Operating
from threadsim.simulator import MANY_CORE_WORKLOADS, SimulatedHost

DATA = Path(__file__).resolve().parents[1] / "data"
CURVES_FILE = DATA / "threads" / "curves.json"

Throughput = Callable[[Config], float]
"""Noise-free events/s of an unpinned count."""


@dataclass(frozen=True)
class Curve:
    name: str
    sysfs: str  # the host's recorded tree under tests/data/sysfs
    workload: str  # the simulator's workload whose CPU use and waits go with the curve
    points: Mapping[tuple[int, int], float]  # (producers, consumers) -> events/s
    spread: Mapping[tuple[int, int], float] = dataclasses.field(default_factory=dict)
    """Counts whose samples scatter more than the host's noise (a log-normal sigma of their
    own, as the simulator's placement noise): a best with a wide interval."""

    def shape(self) -> TopologyShape:
        return read_host(DATA / "sysfs" / self.sysfs / "sys").topology_shape()

    def throughput(self, config: Config) -> float:
        counts = (config.producers, config.consumers)
        if counts in self.points:
            return self.points[counts]
        ratio = config.consumers / config.producers
        same = {c: x for c, x in self.points.items() if math.isclose(c[1] / c[0], ratio)}
        return _interpolated(same or self.points, config.threads)


def _interpolated(points: Mapping[tuple[int, int], float], threads: int) -> float:
    """Linear in the thread count between the nearest recorded counts; flat past the ends."""
    by_threads: dict[int, list[float]] = {}
    for (producers, consumers), rate in points.items():
        by_threads.setdefault(producers + consumers, []).append(rate)
    xs = sorted(by_threads)
    ys = [float(np.mean(by_threads[x])) for x in xs]
    at = bisect.bisect_left(xs, threads)
    if at == 0 or at == len(xs):
        return ys[min(at, len(xs) - 1)]
    x0, x1, y0, y1 = xs[at - 1], xs[at], ys[at - 1], ys[at]
    return y0 + (y1 - y0) * (threads - x0) / (x1 - x0)


def recorded_curves() -> tuple[Curve, ...]:
    document = json.loads(CURVES_FILE.read_text(encoding="utf-8"))
    return tuple(
        Curve(
            name,
            entry["sysfs"],
            entry["workload"],
            {(int(p), int(c)): float(x) for p, c, x in entry["points"]},
            {(int(p), int(c)): float(x) for p, c, x in entry.get("spread", ())},
        )
        for name, entry in sorted(document.items())
    )


def random_curve(seed: int, cpus: int) -> Throughput:
    """A curve of any shape the rule must hold on: a rise to a peak somewhere between 2 and 4x
    the CPUs' threads, a plateau or a fall after it, a preferred consumer ratio, and bumps of a
    few percent on every count (flat stretches where many counts are equally good)."""
    rng = np.random.default_rng([seed, cpus])
    peak = float(rng.uniform(2, 4 * cpus))
    rise, fall = float(rng.uniform(0.3, 1.2)), float(rng.choice([0.0, 0.0, 0.1, 0.5]))
    best_ratio, ratio_cost = int(rng.integers(1, 4)), float(rng.uniform(0.0, 0.1))
    bump = float(rng.choice([0.0, 0.01, 0.03, 0.08]))

    def throughput(config: Config) -> float:
        t = config.threads
        level = math.pow(min(t, peak) / peak, rise) / (1.0 + fall * max(0.0, t / peak - 1.0))
        ratio = config.consumers / config.producers
        own = np.random.default_rng([seed, config.producers, config.consumers])
        wobble = math.exp(float(own.normal(0.0, bump))) if bump else 1.0
        return 1e8 * level * wobble / (1.0 + ratio_cost * abs(ratio - best_ratio))

    return throughput


class CurveHost(SimulatedHost):
    """The simulator with a curve's throughput in place of the cost model's."""

    def __init__(
        self,
        shape: TopologyShape,
        throughput: Throughput,
        workload: str,
        *,
        noise: float,
        seed: int,
        spread: Mapping[tuple[int, int], float] | None = None,
    ) -> None:
        physics = next(w for w in MANY_CORE_WORKLOADS if w.name == workload)
        super().__init__(shape, physics, noise=noise, seed=seed)
        self._throughput = throughput
        self._own_spread = dict(spread or {})

    def _spread(self, config: Config) -> float:
        wide = self._own_spread.get((config.producers, config.consumers), 0.0)
        return super()._spread(config) + (0.0 if config.pinned else wide)

    def operating(self, config: Config) -> Operating:
        modelled, unpinned = super().operating(config), super().operating(config.counts())
        placed = modelled.events_per_s / unpinned.events_per_s
        return dataclasses.replace(
            modelled, events_per_s=self._throughput(config.counts()) * placed
        )
