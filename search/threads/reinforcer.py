"""Thread Reinforcer, made noise-aware: ramp the count, stop at the knee or past the peak, refine.

The ramp walks a geometric grid of counts up from half the first estimate, each step a paired
duel (duel.py) between the best count so far and the next one. It stops past the peak (the next
count loses beyond the margin), at the knee (PATIENCE steps in a row without a gain), or when a
step without a gain trips one of Thread Reinforcer's profile guards (guards.py), which then
stands in for the patience. A gain is never cut short by a guard: the throughput measured directly
outranks what the profile suggests. If the very first step loses, the peak lies below the start
and the ramp walks down. Then refine.py refines the bracket and probes down, and knee.py settles
on the smallest good count. When the budget ends a call (BudgetSpentError), the search answers
from what it measured (the smallest count already shown good against the best so far, else that
best), and says so (BUDGET).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from hspc_gen.search.stats import MIN_ROUNDS
from hspc_gen.search.threads.axis import Axis
from hspc_gen.search.threads.duel import Duels, Verdict
from hspc_gen.search.threads.guards import guard
from hspc_gen.search.threads.measure import BudgetSpentError, Config, Lab
from hspc_gen.search.threads.refine import refine_peak, smallest_good

STRONG_GAIN = 0.15
"""A step gaining this much with calm guards jumps two grid points (Thread Reinforcer's T_step)."""
PATIENCE = 2
"""Steps in a row without a gain that make a knee (one flat step can be noise on a slow rise)."""
TOLERANCE = 0.03
VM_TOLERANCE = 0.05
"""The smallest count within this share of the best is recommended (5% on a shared VM)."""
MAX_STEPS = 40
BUDGET = "budget"
"""The termination of a search the budget stopped: its answer is the best count measured."""


@dataclass(frozen=True)
class CountResult:
    chosen: Config
    best: Config
    termination: str
    tolerance: float


class Ramp:
    def __init__(self, duels: Duels, axis: Axis, cores: int) -> None:
        self.duels, self.axis, self.cores = duels, axis, cores
        self.grid = axis.grid()
        self.best = self.grid.index(axis.first())

    def _cfg(self, index: int) -> Config:
        return self.axis.config(self.grid[index])

    def _guard(self, before: int, after: int) -> str | None:
        lab = self.duels.lab
        return guard(lab.point(self._cfg(before)), lab.point(self._cfg(after)), self.cores)

    def climb(self) -> tuple[Config, str]:
        """Ramp up from the start; if the very first step up loses, walk down instead. The
        best index so far is kept in `self.best`, so a search the budget stops can answer."""
        start = self.grid.index(self.axis.first())
        self.best = start
        tried, misses, stride = start, 0, 1
        for _ in range(MAX_STEPS):
            if tried + 1 >= len(self.grid):
                return self._cfg(self.best), "max_threads"
            nxt = min(tried + stride, len(self.grid) - 1)
            v, rel = self.duels.step(self._cfg(self.best), self._cfg(nxt))
            stop = self._guard(tried, nxt)
            if v is Verdict.worse:
                if tried == start:
                    self.descend()
                return self._cfg(self.best), "peak"
            tried, stride = nxt, 1
            if v is Verdict.better:
                self.best, misses = nxt, 0
                stride = 2 if stop is None and rel.gain >= 1.0 + STRONG_GAIN else 1
                continue
            misses += 1
            if stop is not None or misses >= PATIENCE:
                return self._cfg(self.best), stop or "knee"
        return self._cfg(self.best), "max_steps"

    def descend(self) -> None:
        """The peak lies below the start: walk down while the smaller count is not worse."""
        misses = 0
        for i in range(self.best - 1, -1, -1):
            v, _ = self.duels.step(self._cfg(self.best), self._cfg(i))
            if v is Verdict.worse:
                break
            if v is Verdict.better:
                self.best, misses = i, 0
                continue
            misses += 1
            if misses >= PATIENCE:
                break


def _search(duels: Duels, axis: Axis, cores: int) -> CountResult:
    ramp = Ramp(duels, axis, cores)
    try:
        best, termination = ramp.climb()
    except BudgetSpentError:
        if not duels.lab.measured():
            raise  # nothing measured: the estimated advice stays
        return _stopped(ramp, ramp._cfg(ramp.best))
    try:
        chosen, best = smallest_good(duels, axis, ramp.grid, refine_peak(duels, axis, best))
    except BudgetSpentError:
        return _stopped(ramp, best)
    return CountResult(chosen, best, termination, duels.tolerance)


def _stopped(ramp: Ramp, best: Config) -> CountResult:
    """The answer of a search the budget stopped, without measuring more: the smallest count of
    the axis already shown good against the best in rounds both ran, else the best."""
    duels, counts = ramp.duels, {ramp.axis.config(n) for n in ramp.grid}
    shown = [
        c
        for c in duels.lab.measured()
        if c in counts and c.threads < best.threads and _shown_good(duels, best, c)
    ]
    chosen = min(shown, key=lambda c: (c.threads, c)) if shown else best
    return CountResult(chosen, best, BUDGET, duels.tolerance)


def _shown_good(duels: Duels, best: Config, candidate: Config) -> bool:
    rel = duels.lab.compare(candidate, best)
    return rel.n >= MIN_ROUNDS and duels.within(rel)


def search_count(lab: Lab, axes: Sequence[Axis], cores: int, virtual: bool) -> CountResult:
    """The recommended counts, and why the ramp stopped. Several axes are several consumer
    ratios (the consumers per producer rounded up and down): each is searched, and the answer
    with the fewest threads that is good against the better of their bests wins."""
    tolerance = VM_TOLERANCE if virtual else TOLERANCE
    if all(axis.low == axis.high for axis in axes):
        fixed = axes[0].config(axes[0].low)
        return CountResult(fixed, fixed, "fixed", tolerance)
    duels = Duels(lab, tolerance)
    results = [_search(duels, axis, cores) for axis in axes]
    if any(r.termination == BUDGET for r in results):
        return dataclasses.replace(results[0], termination=BUDGET)
    try:
        return _fewest_good(duels, results)
    except BudgetSpentError:
        return dataclasses.replace(results[0], termination=BUDGET)


def _fewest_good(duels: Duels, results: Sequence[CountResult]) -> CountResult:
    """Of the axes' answers, the one with the fewest threads that is good against the better
    of their bests."""
    top = results[0]
    for other in results[1:]:
        if duels.step(top.best, other.best)[1].gain > 1.0:
            top = other
    for result in sorted(results, key=lambda r: (r.chosen.threads, r.chosen)):
        if duels.good(top.best, result.chosen) and duels.confirmed(top.best, result.chosen):
            return CountResult(result.chosen, top.best, result.termination, duels.tolerance)
    return top
