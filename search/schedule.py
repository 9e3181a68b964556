"""The search's time plan: every step of the effort, planned before anything is measured.

The strategies outline their steps (how many points each will measure) from the start point; each
step's need is its build plus its race, from the cost model below. When a step starts, it may run
until its share of the search time left: its need over the needs of every step not yet done. A
step that finishes early so hands its time to the ones after it, and one that runs long takes only
its share, so that the last step still runs. What no share can hold is trimmed by the batch stage
(nearest the incumbent first) and reported.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hspc_gen.model import ChannelParams, Effort
from hspc_gen.search.decisions import stats
from hspc_gen.search.measure.build import JOBS
from hspc_gen.search.measure.plan import SAMPLE_SECONDS
from hspc_gen.search.measure.toolchain import points_per_unit
from hspc_gen.search.strategies import registry
from hspc_gen.search.strategies.space import Space

# The cost model, from builds on a 2-vCPU EPYC VM with g++ 12 -O2, ccache off (1 point: 2.8 s;
# 16 points in 2 units: 4.2 s; 32 in 4: 6.2 s; 16 in 16 units: 8.2 s), and runs:
BUILD_SETUP_SECONDS = 3.0  # Meson's set-up, main.cpp (the harness and baselines), the link
UNIT_SECONDS = 0.4  # a variant unit's headers
POINT_SECONDS = 0.2  # each compile-time point in a unit, per sample kind compiled
SAMPLE_OVERHEAD = 1.5  # a sample costs ~1.5x its timed part (set-up, pinning, the JSON line)
SURVIVORS = 6
"""Arms a race is expected to keep after its first chunk (the others shown to cost more)."""


@dataclass(frozen=True)
class StepOutline:
    """A step the search will run: its stage (by index), name, points and most rounds."""

    stage: int
    step: str
    points: int
    rounds: int
    baselines: int
    compiled: int = 0  # distinct compile-time points (0: one per point)

    @property
    def key(self) -> tuple[int, str]:
        return self.stage, self.step

    @property
    def build_points(self) -> int:
        return self.compiled or self.points


def build_seconds(points: int, jobs: int, kinds: int = 1) -> float:
    """Building a batch of `points` compile-time points, each with `kinds` sample kinds, spread
    over `jobs` compilers."""
    per_unit = points_per_unit(points, jobs)
    units = math.ceil(points / per_unit)
    waves = math.ceil(units / max(1, jobs))
    return BUILD_SETUP_SECONDS + waves * (UNIT_SECONDS + per_unit * kinds * POINT_SECONDS)


def sample_seconds(samples: int) -> float:
    return samples * SAMPLE_SECONDS * SAMPLE_OVERHEAD


def race_seconds(arms: int, rounds: int) -> float:
    """A race of `arms` (the baselines and the A/A copy among them) to `rounds`: a first chunk of
    every arm, then the survivors to the last round."""
    first = min(rounds, stats.MIN_ROUNDS)
    rest = max(0, rounds - first)
    return sample_seconds(first * arms + rest * min(arms, SURVIVORS + 3))


def need(outline: StepOutline, jobs: int) -> float:
    """What a step needs to build and race to its last round."""
    arms = outline.points + outline.baselines + 1
    return build_seconds(outline.build_points, jobs) + race_seconds(arms, outline.rounds)


def least(outline: StepOutline, jobs: int) -> float:
    """What a step needs at the least: its build and a first chunk of rounds."""
    arms = outline.points + outline.baselines + 1
    return build_seconds(outline.build_points, jobs) + race_seconds(arms, stats.MIN_ROUNDS)


@dataclass(frozen=True)
class Schedule:
    """The steps in order, and the search's deadline (time.monotonic())."""

    steps: tuple[StepOutline, ...]
    deadline: float
    jobs: int = 1

    def step_deadline(self, step: StepOutline, done: Iterable[tuple[int, str]]) -> float:
        """When `step` must stop: its need's share of the time left, among itself and every
        step not yet done (a step the outline did not foresee is costed as it came), but at
        least what it needs at the least (a build and a first chunk) while the time left holds
        that, so that a small step is not left out for a share it could never fill."""
        finished = {*done, step.key}
        ahead = [step, *(s for s in self.steps if s.key not in finished)]
        now = time.monotonic()
        left = max(0.0, self.deadline - now)
        share = left * need(step, self.jobs) / sum(need(s, self.jobs) for s in ahead)
        return now + min(left, max(share, least(step, self.jobs)))

    def stage_keys(self, stage: int) -> tuple[tuple[int, str], ...]:
        """Every step the outline foresaw in `stage`: all done once the stage ends."""
        return tuple(s.key for s in self.steps if s.stage == stage)

    def planned_seconds(self) -> float:
        return sum(need(s, self.jobs) for s in self.steps)

    def least_seconds(self) -> float:
        return sum(least(s, self.jobs) for s in self.steps)


def plan_steps(
    space: Space,
    start: ChannelParams,
    stages: Sequence[tuple[str, int]],
    effort: Effort,
    deadline: float,
) -> Schedule:
    """Every step of the stages (strategy name, baselines run beside it), from the start point."""
    steps = tuple(
        StepOutline(index, o.step, o.points, o.rounds, baselines, o.compiled)
        for index, (strategy, baselines) in enumerate(stages)
        for o in registry.create(strategy, space, start, effort).outline()
    )
    return Schedule(steps, deadline, JOBS)
