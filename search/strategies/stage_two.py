"""Stage Two (the paper's §4): tune the Stage One channel for the application's real work.

With the real producer and consumer plugged in, the paper found that the synchronization primitive
and the buffer size (events are a different size now) mattered most, and processor affinity gave
about 5%. So: every allowed primitive x the buffer sizes around the Stage One best (same buffer
count), then, for a primitive that spins, its spin budget around the one calibrated on the host
(search/measure/calibrate.py), then the winner under each placement, each with the code shapes
(prefetching none or some of each buffer as it is taken, and huge pages where they apply). With
`joint` (exhaustive effort), one batch of primitives x sizes x placements instead, for when
placement and primitive interact (a spinning waiter collapses when its peer shares its CPU), then
the spin budget, then every code shape of the prefetch grid.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hspc_gen.model import ChannelParams, Effort, Primitive
from hspc_gen.search.strategies.base import (
    Batch,
    Outline,
    StepResult,
    best_so_far,
    make_batch,
    make_options,
    option,
    outline_of,
    rounds_option,
)
from hspc_gen.search.strategies.space import Space

NAME = "stage_two"
STAGE = "two"


@dataclass(frozen=True)
class Options:
    rounds: int = rounds_option()
    radius: int = option(2, "buffer sizes within this many powers of two of the start", 0, 8)
    joint: bool = option(False, "one batch of primitives x sizes x placements")


EFFORT: Mapping[Effort, Mapping[str, object]] = {
    Effort.estimate: {"rounds": 0},
    Effort.quick: {"rounds": 12, "radius": 1},
    Effort.measure: {"rounds": 30, "radius": 3},
    Effort.patient: {"rounds": 60, "radius": 4},
    Effort.exhaustive: {"rounds": 60, "radius": 3, "joint": True},
}


def _sizes(space: Space, best: ChannelParams, radius: int) -> tuple[int, ...]:
    around = space.sizes_around(best.buffer_bytes, radius)
    return tuple(s for s in around if space.fits(best.buffers, s)) or (best.buffer_bytes,)


def primitive_points(space: Space, best: ChannelParams, options: Options) -> list[ChannelParams]:
    """Each primitive with its own calibrated spin budget (the best point's, if it is the best's
    primitive), at the buffer sizes around the best."""
    return [
        best.replace(primitive=p, buffer_bytes=s, spin_ns=_spin(space, best, p))
        for p in space.primitives
        for s in _sizes(space, best, options.radius)
    ]


def _spin(space: Space, best: ChannelParams, primitive: Primitive) -> int:
    return best.spin_ns if primitive is best.primitive else space.spin_for(primitive)


def spin_points(space: Space, best: ChannelParams) -> list[ChannelParams]:
    """The spin budgets around the calibrated one, for a primitive that spins."""
    return [best.replace(spin_ns=v) for v in space.spin_values(best.primitive)]


def placement_points(space: Space, best: ChannelParams) -> list[ChannelParams]:
    return [best.replace(producer_cpu=p, consumer_cpu=c) for p, c in space.placements]


def shape_placement_points(space: Space, best: ChannelParams) -> list[ChannelParams]:
    """Each placement with the code shapes: one build and one race for both questions, so that
    the default budget still runs every step."""
    return [q for p in placement_points(space, best) for q in space.code_shapes(p, full=False)]


def joint_points(space: Space, best: ChannelParams, options: Options) -> list[ChannelParams]:
    return [q for p in primitive_points(space, best, options) for q in placement_points(space, p)]


class StageTwo:
    name = NAME

    def __init__(self, space: Space, start: ChannelParams, options: Options) -> None:
        self.space = space
        self.start = start
        self.options = options

    def _steps(self, best: ChannelParams) -> list[tuple[str, list[ChannelParams]]]:
        spin = ("spin", spin_points(self.space, best))
        if self.options.joint:
            joint = joint_points(self.space, best, self.options)
            return [
                ("primitive_placement", joint),
                spin,
                ("code_shape", list(self.space.code_shapes(best))),
            ]
        return [
            ("primitive", primitive_points(self.space, best, self.options)),
            spin,
            ("placement", shape_placement_points(self.space, best)),
        ]

    def outline(self) -> tuple[Outline, ...]:
        if self.options.rounds <= 0:
            return ()
        return outline_of(STAGE, self._steps(self.start), self.start, self.options.rounds)

    def propose(self, history: Sequence[StepResult]) -> Batch | None:
        if self.options.rounds <= 0:
            return None
        done = {r.batch.step for r in history}
        best = best_so_far(self.start, history)
        for step, points in self._steps(best):
            if step in done:
                continue
            batch = make_batch(STAGE, step, points, best, self.options.rounds)
            if len(batch.candidates) > 1:
                return batch
        return None


def create(
    space: Space, start: ChannelParams, effort: Effort, overrides: Mapping[str, object]
) -> StageTwo:
    return StageTwo(space, start, make_options(NAME, Options, EFFORT, effort, overrides))
