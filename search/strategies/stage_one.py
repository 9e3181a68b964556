"""Stage One (the paper's §3.5, Figure 2): padding, then stack offset, then the buffer grid.

Each loop holds everything else at the best point so far: padding values with the start point's
stack offset and buffers; stack offsets with the best padding; then every buffers x buffer_bytes
pair the memory bound allows, with the best padding and stack offset. The paper's justification:
padding and stack offset only need to cross a cache line or an aliasing boundary, so they can be
found independently, and far more cheaply than by sweeping the product.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from hspc_gen.model import ChannelParams, Effort
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

NAME = "stage_one"
STAGE = "one"


@dataclass(frozen=True)
class Options:
    rounds: int = rounds_option()
    size_stride: int = option(
        1, "take every n-th buffer size of the grid (2 thins it by half)", 1, 8
    )
    buffer_counts: tuple[int, ...] = option((), "buffer counts to try (empty: all of the space's)")


EFFORT: Mapping[Effort, Mapping[str, object]] = {
    Effort.estimate: {"rounds": 0},
    Effort.quick: {"rounds": 12, "size_stride": 3, "buffer_counts": (2, 4, 16)},
    # The full grid of the memory bound: a unit compiles eight points (search.schedule).
    Effort.measure: {"rounds": 30},
    Effort.patient: {"rounds": 60},
    Effort.exhaustive: {"rounds": 60},
}


def padding_points(space: Space, best: ChannelParams, options: Options) -> list[ChannelParams]:
    return [best.replace(padding_bytes=p) for p in space.padding_values()]


def stack_points(space: Space, best: ChannelParams, options: Options) -> list[ChannelParams]:
    return [best.replace(stack_offset_bytes=s) for s in space.stack_offset_values()]


def grid_points(space: Space, best: ChannelParams, options: Options) -> list[ChannelParams]:
    counts = options.buffer_counts or space.buffer_counts()
    sizes = space.buffer_sizes()[:: max(1, options.size_stride)]
    return [
        best.replace(buffers=n, buffer_bytes=s)
        for n in counts
        for s in sizes
        if n in space.buffer_counts() and space.fits(n, s)
    ]


Step = Callable[[Space, ChannelParams, Options], list[ChannelParams]]
STEPS: tuple[tuple[str, Step], ...] = (
    ("padding", padding_points),
    ("stack_offset", stack_points),
    ("buffers", grid_points),
)


class StageOne:
    name = NAME

    def __init__(self, space: Space, start: ChannelParams, options: Options) -> None:
        self.space = space
        self.start = start
        self.options = options

    def outline(self) -> tuple[Outline, ...]:
        if self.options.rounds <= 0:
            return ()
        steps = [(step, points(self.space, self.start, self.options)) for step, points in STEPS]
        return outline_of(STAGE, steps, self.start, self.options.rounds)

    def propose(self, history: Sequence[StepResult]) -> Batch | None:
        if self.options.rounds <= 0:
            return None
        done = {r.batch.step for r in history}
        best = best_so_far(self.start, history)
        for step, points in STEPS:
            if step in done:
                continue
            batch = make_batch(
                STAGE, step, points(self.space, best, self.options), best, self.options.rounds
            )
            # A step with nothing to compare (a one-value parameter) is skipped, not measured.
            if len(batch.candidates) > 1:
                return batch
        return None


def create(
    space: Space, start: ChannelParams, effort: Effort, overrides: Mapping[str, object]
) -> StageOne:
    return StageOne(space, start, make_options(NAME, Options, EFFORT, effort, overrides))
