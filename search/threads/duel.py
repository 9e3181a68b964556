"""Paired duels between two configurations, and the verdicts the thread search acts on.

A duel runs the two in the same shuffled rounds, MIN_ROUNDS at a time, until its question is
answered or MAX_DUEL_ROUNDS: a gain counts only when its whole interval sits above 1 and its
estimate clears the margin (stats.MARGIN_FLOOR); "good enough" means within the tolerance of the
best, asked again on fresh rounds before it is final (the best of noisy points is biased upward).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from enum import StrEnum

from hspc_gen.search.stats import MARGIN_FLOOR, MIN_ROUNDS
from hspc_gen.search.threads.measure import Config, Lab, Relative

MAX_DUEL_ROUNDS = 30
"""Most paired rounds one question gets: enough to resolve ~2% under 10% noise."""
SMALL_EFFECT = 3.0
"""Within this many margins of the line a duel decides only after 2 x MIN_ROUNDS rounds: a
bootstrap interval over six rounds is too narrow when one of them carries a heavy-tail sample."""


class Verdict(StrEnum):
    better = "better"
    worse = "worse"
    same = "same"
    unsure = "unsure"


def settled(rel: Relative, line: float = 1.0) -> bool:
    """Enough rounds to trust the interval around a decision at `line`."""
    far = abs(math.log(rel.gain / line)) >= SMALL_EFFECT * MARGIN_FLOOR
    return rel.n >= 2 * MIN_ROUNDS or far


def verdict(rel: Relative, margin: float = MARGIN_FLOOR) -> Verdict:
    if rel.low > 1.0 and rel.gain > 1.0 + margin:
        return Verdict.better
    if rel.high < 1.0 and rel.gain < 1.0 - margin:
        return Verdict.worse
    if rel.low >= 1.0 - margin and rel.high <= 1.0 + margin:
        return Verdict.same
    return Verdict.unsure


class Duels:
    def __init__(self, lab: Lab, tolerance: float) -> None:
        self.lab, self.tolerance = lab, tolerance

    def duel(
        self,
        reference: Config,
        candidate: Config,
        done: Callable[[Relative], bool],
        since: int = 0,
    ) -> Relative:
        """Candidate over reference on the rounds from `since`, run until `done`."""
        rel = self.lab.compare(candidate, reference, since)
        while rel.n < MAX_DUEL_ROUNDS and (rel.n < MIN_ROUNDS or not done(rel)):
            self.lab.run([reference, candidate], MIN_ROUNDS)
            rel = self.lab.compare(candidate, reference, since)
        return rel

    def step(self, reference: Config, candidate: Config) -> tuple[Verdict, Relative]:
        rel = self.duel(
            reference, candidate, lambda r: settled(r) and verdict(r) is not Verdict.unsure
        )
        return verdict(rel), rel

    def within(self, rel: Relative) -> bool:
        """Good enough: the estimate within tolerance of the best, the interval not far off."""
        return rel.gain >= 1.0 - self.tolerance and rel.low >= 1.0 - 2.0 * self.tolerance

    def _clear(self, rel: Relative) -> bool:
        line = 1.0 - self.tolerance
        return settled(rel, line) and (rel.low >= line or rel.high < line)

    def good(self, best: Config, candidate: Config) -> bool:
        if candidate == best:
            return True
        near = self.lab.point(candidate).events_per_s
        if near < (1.0 - 3.0 * self.tolerance) * self.lab.point(best).events_per_s:
            return False  # the unpaired medians are already far apart: no duel needed
        return self.within(self.duel(best, candidate, self._clear))

    def confirmed(self, best: Config, candidate: Config) -> bool:
        """`good`, asked again on rounds the selection of `best` did not see."""
        if candidate == best:
            return True
        since = self.lab.rounds
        fresh = self.duel(best, candidate, self._clear, since)
        if self.within(fresh) or fresh.high < 1.0 - self.tolerance:
            return self.within(fresh)
        # Still straddling the line after MAX_DUEL_ROUNDS fresh rounds: all the rounds decide.
        return self.within(self.lab.compare(candidate, best))
