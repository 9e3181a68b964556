"""Exhaustive: every point of a grid, to check what the staged searches find.

The grid is the product of the swept parameters (the others stay at the start point). It is
measured in batches of at most `max_batch` candidates, each holding the start point as a common
reference; when there is more than one batch, a final batch races the batches' winners against
each other, so the answer comes from one paired comparison, like any other strategy's.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hspc_gen.errors import UserError
from hspc_gen.model import ChannelParams, Effort, Primitive
from hspc_gen.search.strategies.base import (
    Batch,
    Outline,
    StepResult,
    make_batch,
    make_options,
    option,
    rounds_option,
)
from hspc_gen.search.strategies.space import Space

NAME = "exhaustive"
STAGE = "exhaustive"
FINAL_STEP = "final"
AXES: tuple[str, ...] = ("padding", "stack_offset", "buffers", "primitive", "placement")
DIMENSIONS: tuple[str, ...] = (*AXES, "spin", "code_shape")
"""What `sweep` may name; `buffers` is the buffers x buffer_bytes grid under the memory bound,
`spin` each primitive's spin budgets (swept with the primitive: they depend on it), `code_shape`
every prefetch depth with and without huge pages (swept at each point: they depend on its
buffers)."""


@dataclass(frozen=True)
class Options:
    rounds: int = rounds_option()
    sweep: tuple[str, ...] = option(
        ("padding", "stack_offset", "buffers"), f"parameters to sweep, of {', '.join(DIMENSIONS)}"
    )
    max_batch: int = option(64, "most candidates in one batch (one benchmark binary)", 2, 4096)


EFFORT: Mapping[Effort, Mapping[str, object]] = {
    Effort.estimate: {"rounds": 0},
    Effort.quick: {"rounds": 12},
    Effort.measure: {"rounds": 30},
    Effort.patient: {"rounds": 60},
    # The ground truth for checking --effort measure: every buffers x buffer_bytes point of the
    # memory bound under every allowed primitive (the paper's two decisive parameters, §4), with
    # the work plugged in; padding and stack offset stay at the start (their sweeps are Stage One's
    # and can be added with the `sweep` option).
    Effort.exhaustive: {"rounds": 60, "sweep": ("buffers", "primitive")},
}


Changes = dict[str, object]


def _values(space: Space, start: ChannelParams, dim: str, sweep: Sequence[str]) -> list[Changes]:
    """The changes along one dimension, as dicts of field -> value (one value when not swept)."""
    if dim == "padding":
        vals = space.padding_values() if dim in sweep else (start.padding_bytes,)
        return [{"padding_bytes": v} for v in vals]
    if dim == "stack_offset":
        vals = space.stack_offset_values() if dim in sweep else (start.stack_offset_bytes,)
        return [{"stack_offset_bytes": v} for v in vals]
    if dim == "buffers":
        pairs = space.grid() if dim in sweep else ((start.buffers, start.buffer_bytes),)
        return [{"buffers": n, "buffer_bytes": s} for n, s in pairs]
    if dim == "primitive":
        prims = space.primitives if dim in sweep else (start.primitive,)
        return [
            {"primitive": p, "spin_ns": v} for p in prims for v in _spins(space, start, p, sweep)
        ]
    places = space.placements if dim in sweep else ((start.producer_cpu, start.consumer_cpu),)
    return [{"producer_cpu": p, "consumer_cpu": c} for p, c in places]


def _spins(
    space: Space, start: ChannelParams, primitive: Primitive, sweep: Sequence[str]
) -> tuple[int, ...]:
    """The start's spin budget for its own primitive, the calibrated one for another; with
    `spin` swept, every budget `space.spin_values` tries."""
    if "spin" in sweep:
        return space.spin_values(primitive)
    return (start.spin_ns if primitive is start.primitive else space.spin_for(primitive),)


def _shapes(space: Space, point: ChannelParams, sweep: Sequence[str]) -> list[ChannelParams]:
    """The point itself, or with `code_shape` swept each of its code-shape variants."""
    return list(space.code_shapes(point)) if "code_shape" in sweep else [point]


def grid(space: Space, start: ChannelParams, sweep: Sequence[str]) -> tuple[ChannelParams, ...]:
    """Every point of the swept product inside the space, in a stable order."""
    axes = [_values(space, start, dim, sweep) for dim in AXES]
    points = []
    for combo in itertools.product(*axes):
        changes: Changes = {}
        for part in combo:
            changes.update(part)
        points += _shapes(space, start.replace(**changes), sweep)
    return tuple(dict.fromkeys(p for p in points if space.contains(p)))


class Exhaustive:
    name = NAME

    def __init__(self, space: Space, start: ChannelParams, options: Options) -> None:
        unknown = set(options.sweep) - set(DIMENSIONS)
        if unknown or options.max_batch < 2:
            raise UserError(
                f"strategy {NAME}: sweep must name some of {', '.join(DIMENSIONS)} and max_batch"
                f" must be at least 2 (got sweep={options.sweep}, max_batch={options.max_batch})"
            )
        self.space = space
        self.start = start
        self.options = options
        others = [p for p in grid(space, start, options.sweep) if p != start]
        size = options.max_batch - 1
        self.chunks = [others[i : i + size] for i in range(0, len(others), size)]
        if len(self.chunks) > size:
            # The final batch holds one winner per chunk and must fit in one binary too.
            raise UserError(
                f"strategy {NAME}: {len(others) + 1} points need more than {size} batches of"
                f" {options.max_batch}; sweep fewer parameters or raise max_batch"
            )

    def outline(self) -> tuple[Outline, ...]:
        if self.options.rounds <= 0 or not self.chunks:
            return ()
        rounds = self.options.rounds
        sweeps = [Outline(f"sweep-{i + 1}", len(c) + 1, rounds) for i, c in enumerate(self.chunks)]
        final = [Outline(FINAL_STEP, len(self.chunks) + 1, rounds)] if len(self.chunks) > 1 else []
        return (*sweeps, *final)

    def propose(self, history: Sequence[StepResult]) -> Batch | None:
        if self.options.rounds <= 0 or not self.chunks:
            return None
        n = len(history)
        if n < len(self.chunks):
            return make_batch(
                STAGE, f"sweep-{n + 1}", self.chunks[n], self.start, self.options.rounds
            )
        if n == len(self.chunks) and len(self.chunks) > 1:
            winners = [w for r in history if (w := r.winner()) is not None]
            final = make_batch(STAGE, FINAL_STEP, winners, self.start, self.options.rounds)
            # When every sweep kept the start point there is nothing left to race.
            return final if len(final.candidates) > 1 else None
        return None


def create(
    space: Space, start: ChannelParams, effort: Effort, overrides: Mapping[str, object]
) -> Exhaustive:
    return Exhaustive(space, start, make_options(NAME, Options, EFFORT, effort, overrides))
