"""The programs the profilers are timed on: the paper's recursive fib, and call-heavy programs of
pyperformance (richards, deltablue, go, chaos, raytrace) with nbody, which makes few calls, as a
control. pyperformance's programs are its own files (`pyperformance.DATA_DIR`), loaded by path;
their inner functions are called directly, never their pyperf main.

Each workload has two sizes: `full`, about 40-120 ms a run unprofiled on a 2-vCPU VM (CPython
3.11), and `smoke`, a few milliseconds, for the tests."""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import pyperformance

Work = Callable[[], object]
SIZES = ("full", "smoke")


@dataclass(frozen=True)
class Workload:
    """A program and its two sizes; prepare(size) loads what it needs and returns one run."""

    name: str
    what: str
    full: int
    smoke: int
    make: Callable[[int], Work]

    def prepare(self, size: str) -> Work:
        return self.make(self.full if size == "full" else self.smoke)


def pyperformance_module(name: str) -> ModuleType:
    """bm_<name>/run_benchmark.py of the installed pyperformance, imported from its path."""
    path = Path(pyperformance.DATA_DIR) / "benchmarks" / f"bm_{name}" / "run_benchmark.py"
    spec = importlib.util.spec_from_file_location(f"bm_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"no pyperformance benchmark at {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def make_fib(n: int) -> Work:
    return partial(fib, n)


def make_richards(iterations: int) -> Work:
    """pyperformance's Richards.run prepends its six tasks to a module-level list it never
    empties, so each run would schedule more tasks than the last: every run here starts from a
    fresh work area, so that runs (and their profiles) are the same."""
    module = pyperformance_module("richards")

    def run() -> object:
        vars(module)["taskWorkArea"] = module.TaskWorkArea()
        return module.Richards().run(iterations)

    return run


def make_deltablue(n: int) -> Work:
    return partial(pyperformance_module("deltablue").delta_blue, n)


def make_go(games: int) -> Work:
    """versus_cpu() plays GAMES random games from one position; GAMES (200 in pyperformance, about
    120 ms here) is the module's global, which computer_move reads at each call."""
    module = pyperformance_module("go")
    vars(module)["GAMES"] = games
    work: Work = module.versus_cpu
    return work


class _BenchFuncCall:
    """Stands where chaos's main() expects a pyperf runner and keeps what it would time: main()
    builds the splines and the Chaosgame, then hands over the bound method and its arguments."""

    def __init__(self) -> None:
        self.metadata: dict[str, Any] = {}
        self.work: Work | None = None

    def bench_func(self, _name: str, func: Callable[..., object], *args: object) -> None:
        self.work = partial(func, *args)


def make_chaos(iterations: int) -> Work:
    module = pyperformance_module("chaos")
    args = argparse.Namespace(
        thickness=module.DEFAULT_THICKNESS,
        width=module.DEFAULT_WIDTH,
        height=module.DEFAULT_HEIGHT,
        iterations=iterations,
        filename=None,
        rng_seed=module.DEFAULT_RNG_SEED,
    )
    call = _BenchFuncCall()
    module.main(call, args)
    assert call.work is not None, "chaos's main() did not hand over a function"
    return call.work


def make_raytrace(side: int) -> Work:
    """One picture of side x side pixels (pyperformance: 100 x 100, about 280 ms here)."""
    return partial(pyperformance_module("raytrace").bench_raytrace, 1, side, side, None)


def make_nbody(iterations: int) -> Work:
    module = pyperformance_module("nbody")
    return partial(module.bench_nbody, 1, module.DEFAULT_REFERENCE, iterations)


WORKLOADS = {
    w.name: w
    for w in (
        Workload("fib", "recursive fib(n), the paper's", 29, 15, make_fib),
        Workload("richards", "pyperformance richards, iterations", 2, 1, make_richards),
        Workload("deltablue", "pyperformance deltablue, n", 2000, 20, make_deltablue),
        Workload("go", "pyperformance go, games", 100, 3, make_go),
        Workload("chaos", "pyperformance chaos, iterations", 5000, 100, make_chaos),
        Workload("raytrace", "pyperformance raytrace, side", 50, 8, make_raytrace),
        Workload("nbody", "pyperformance nbody (few calls), steps", 20000, 200, make_nbody),
    )
}
