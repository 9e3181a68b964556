"""The thread search's plan, sized by the CPUs and the budget before the search proper starts.

The search (counts.py) measures a coarse geometric grid of counts at once (factor COARSE_STEP,
from one group to the axis's top: log2 of the CPUs points), then refines the peak in
`peak_levels` levels (each halving the step in log terms: √2, then 2^(1/4)) and the knee, where the
smallest good count lies, in `knee_levels` levels (each splitting its bracket in four: 2^(1/4),
then 2^(1/16), about 4%), runs the few counts nearest the tolerance line again beside the best
(`settle_rounds`, so that their intervals can show them good), and then placement races its
candidates. Only the coarse grid grows with the host, as log(CPUs); the levels are fixed.

The plan is chosen once the coarse grid's first (pilot) round has measured every count of it: its
samples were sized from the cost model, every later one from what the pilot measured (pace.py),
so the rest of the coarse grid is costed at each count's own pace (a count under contention runs
long samples) and the levels at the pace of the counts near the top. The plan picks the fullest
rung of a ladder that fits the seconds given: fewer placement rounds first, then fewer rounds per
count, then no placement, then no settling, then a coarser resolution, then the coarse grid
alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hspc_gen.search.threads.axis import Axis
from hspc_gen.search.threads.measure import Config

COARSE_STEP = 2.0
PILOT_ROUNDS = 1
"""The coarse grid's first round sizes every later sample from what it measured."""
KNEE_POINTS = 3
"""Counts a knee level adds inside its bracket (splitting it in four, geometrically)."""
SETTLE_POINTS = 3
"""Counts near the tolerance line the settling call runs again beside the best, at most."""
PAIRING_CALLS = 3
"""Calls that may run the best count within the CPUs beside a best past them (within.py), each
for the settling rounds; the plan counts one (each call after it moved the best, rarely)."""
PLAN_SHARE = 0.85
"""Of the seconds given, what the plan may fill: a count slower than predicted, a longer call."""
CALL_START_SECONDS = 0.1
PLACEMENT_CALL_ROUNDS = 12
"""Rounds of one placement call (placement.PLACEMENT_ROUNDS)."""
PLACEMENTS = 3
"""Pinned candidates placement may race against unpinned, at most (compact, spread, siblings)."""


@dataclass(frozen=True)
class Plan:
    """One rung of the ladder: how many levels, and rounds per phase."""

    level: int  # its rung: 1 the smallest, len(LADDER) the fullest
    coarse_rounds: int
    peak_levels: int
    peak_rounds: int
    knee_levels: int
    knee_rounds: int
    settle_rounds: int  # the counts near the line, again beside the best (0: not)
    placement_rounds: int  # most rounds the placement race may run (0: none)

    @property
    def resolution(self) -> float:
        """The step between neighbouring counts the knee is resolved to (1.044: 4.4%)."""
        return float(COARSE_STEP ** ((KNEE_POINTS + 1.0) ** -self.knee_levels)) - 1.0


LADDER: tuple[Plan, ...] = (
    Plan(1, 6, 0, 6, 0, 6, 0, 0),  # the coarse grid alone
    Plan(2, 6, 1, 6, 1, 6, 0, 0),
    Plan(3, 6, 2, 6, 2, 6, 0, 0),
    Plan(4, 6, 2, 6, 2, 6, 12, 0),
    Plan(5, 6, 2, 6, 2, 6, 12, 12),
    Plan(6, 8, 3, 8, 2, 8, 16, 12),
    Plan(7, 8, 3, 8, 2, 8, 16, 24),
)
FULL = LADDER[-1]


Seconds = Callable[[Sequence[Config], int], float]
"""What a call of these configurations for this many rounds takes (the pace's prediction)."""


def coarse_counts(axis: Axis, cpus: int) -> tuple[int, ...]:
    """The axis's counts at COARSE_STEP from its start, up and down, with both ends and the most
    that fit the CPUs (the search stays within them unless idle time says otherwise)."""
    fits = [n for n in range(axis.low, axis.high + 1) if axis.config(n).threads <= cpus]
    return tuple(sorted({*axis.grid(COARSE_STEP), *fits[-1:]}))


def level_samples(plan: Plan, axes: int) -> int:
    """The samples `plan` is costed at after its coarse grid, with `axes` knees: each phase's
    most, and one pairing call (within.py; a call that moved the best may run another)."""
    peak = plan.peak_levels * 3 * plan.peak_rounds  # the best and a probe either side
    knee = axes * plan.knee_levels * (KNEE_POINTS + 3) * plan.knee_rounds  # the best, its bracket
    settle = (SETTLE_POINTS + 2) * plan.settle_rounds  # the best and a rival
    settle += 2 * plan.settle_rounds  # a best past the CPUs and the best within them
    race = (PLACEMENTS + 1) * plan.placement_rounds
    return peak + knee + settle + race


def calls(plan: Plan, axes: int) -> int:
    races = math.ceil(plan.placement_rounds / PLACEMENT_CALL_ROUNDS)
    pairing = 1 if plan.settle_rounds else 0
    return 2 + plan.peak_levels + axes * plan.knee_levels + races + pairing


@dataclass(frozen=True)
class Planner:
    """Chooses the plan once the coarse grid's pilot round has shown each count's pace: the
    fullest rung (at most `ceiling`, the rung an earlier run of this command was held to, so a
    replay keeps it) whose calls fit `seconds`, counted from the search's start. `hold` records
    a rung below the full one, for that replay."""

    seconds: float = math.inf
    call_seconds: Seconds = lambda _configs, _rounds: 0.0
    ceiling: int | None = None
    hold: Callable[[Plan], None] = lambda _plan: None

    def plan(self, coarse: Sequence[Config], reference: Config, axes: int, spent: float) -> Plan:
        """The plan for the search whose coarse grid is `coarse`, its pilot round measured in
        `spent` seconds, and whose later samples run at about `reference`'s pace."""
        room = (self.seconds - spent) * PLAN_SHARE
        per_round, per_sample = self.call_seconds(coarse, 1), self.call_seconds([reference], 1)
        chosen = LADDER[0]
        for plan in reversed(LADDER[: self.ceiling or FULL.level]):
            need = per_round * (plan.coarse_rounds - PILOT_ROUNDS)
            need += per_sample * level_samples(plan, axes) + CALL_START_SECONDS * calls(plan, axes)
            if need <= room:
                chosen = plan
                break
        self.hold(chosen)
        return chosen
