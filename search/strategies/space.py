"""The parameter space: typed parameters, their grids, the constraints, and the start point.

`Space.from_target` takes plain values (not the target or host objects) so that it depends on no
other stage's insides: the pipeline adapts its Target and Host into these arguments.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hspc_gen.errors import UserError
from hspc_gen.model import (
    LIMITS,
    SPIN_GRAIN_NS,
    UNCALIBRATED,
    ChannelParams,
    MiB,
    PinThreads,
    Primitive,
    SpinBudgets,
    buffer_floor,
    floor_power_of_two,
    smallest_buffer_memory,
)
from hspc_gen.search.strategies.placements import (
    SIBLING_CLASS,
    UNPINNED_CPUS,
    HostShape,
    placements,
)

# The grids the search walks, inside the parameter limits (model.LIMITS).
PADDING_GRID: tuple[int, ...] = (0, 64, 128, 256, LIMITS["padding_bytes"].high)
STACK_OFFSET_STEP = 4096
"""The smallest stack offset tried: the paper's 4 KiB aliasing window."""
BUFFER_COUNTS: tuple[int, ...] = (2, 3, 4, 8, 16, 32, LIMITS["buffers"].high)
START_BUFFERS = 3
"""The paper's p5 triple buffering: both sides busy while one buffer is in flight."""
START_BUFFER_BYTES = 4096
SPIN_FACTORS: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)
PREFETCH_GRID: tuple[int, ...] = (0, 1024, 4096, 16384)
"""The prefetch depths (the bytes of a slot prefetched as it is taken) an exhaustive search
tries, each at most the buffer: past a few KiB the lines arrive before the loop needs them."""
PREFETCH_SHORT: tuple[int, ...] = (0, 4096)
"""The depths the default search tries: none, and a page."""
HUGE_PAGE_BYTES = 2 * MiB
"""The smallest block huge pages can back (runtime/hspc/limits.hpp: kHugePageBytes)."""
"""The spin budgets tried, as multiples of the calibrated one: the wait costs are medians of a
noisy host, and the best budget also depends on how long the peer takes to publish."""


@dataclass(frozen=True)
class PowerOfTwo:
    """Powers of two from `low` to `high` inclusive, optionally preceded by 0."""

    low: int
    high: int
    with_zero: bool = False

    def values(self) -> tuple[int, ...]:
        out = [0] if self.with_zero else []
        v = self.low
        while v <= self.high:
            out.append(v)
            v *= 2
        return tuple(out)


@dataclass(frozen=True)
class Choice:
    """An explicit list of integer values, in preference order."""

    options: tuple[int, ...]

    def values(self) -> tuple[int, ...]:
        return self.options


@dataclass(frozen=True)
class IntRange:
    low: int
    high: int
    step: int = 1

    def values(self) -> tuple[int, ...]:
        return tuple(range(self.low, self.high + 1, self.step))


Parameter = PowerOfTwo | Choice | IntRange


@dataclass(frozen=True)
class Space:
    """All the points the search may propose, and the rule that says which are allowed."""

    event_bytes: int
    primitives: tuple[Primitive, ...]
    max_buffer_memory: int
    pin_threads: PinThreads
    host: HostShape
    padding_bytes: Parameter
    stack_offset_bytes: Parameter
    buffers: Parameter
    buffer_bytes: Parameter
    placements: tuple[tuple[int, int], ...]
    spin: SpinBudgets = UNCALIBRATED  # the calibrated budgets each primitive starts from
    spin_fixed: int | None = None  # spin_ns as `--set` fixed it
    prefetch_fixed: int | None = None  # prefetch_bytes as `--set` fixed it
    huge_pages_fixed: int | None = None  # huge_pages as `--set` fixed it

    @classmethod
    def from_target(
        cls,
        *,
        event_bytes: int,
        primitives: Iterable[Primitive],
        max_buffer_memory: int,
        pin_threads: PinThreads,
        host: HostShape,
        spin: SpinBudgets = UNCALIBRATED,
    ) -> Space:
        prims = tuple(dict.fromkeys(primitives))
        if event_bytes < 1:
            raise UserError(f"event_bytes must be at least 1, not {event_bytes}")
        if not prims:
            raise UserError("no synchronization primitive is allowed: allow at least one")
        low = buffer_floor(event_bytes, max_buffer_memory)
        high = floor_power_of_two(max_buffer_memory // min(BUFFER_COUNTS))
        if high < low:
            raise UserError(
                f"max_buffer_memory {max_buffer_memory} B cannot hold {min(BUFFER_COUNTS)} buffers"
                f" of one {event_bytes} B event; allow at least"
                f" {smallest_buffer_memory(event_bytes)} B"
            )
        return cls(
            event_bytes=event_bytes,
            primitives=prims,
            max_buffer_memory=max_buffer_memory,
            pin_threads=pin_threads,
            host=host,
            padding_bytes=Choice(PADDING_GRID),
            stack_offset_bytes=PowerOfTwo(
                STACK_OFFSET_STEP, LIMITS["stack_offset_bytes"].high, with_zero=True
            ),
            buffers=Choice(BUFFER_COUNTS),
            buffer_bytes=PowerOfTwo(low, high),
            placements=placements(host, pin_threads),
            spin=spin,
        )

    def narrowed(self, fixed: Mapping[str, int | Primitive]) -> Space:
        """The space with the parameters `--set` fixed, each to its one value."""

        def one(name: str, current: Parameter) -> Parameter:
            return Choice((int(fixed[name]),)) if name in fixed else current

        placement = (int(fixed.get("producer_cpu", -1)), int(fixed.get("consumer_cpu", -1)))
        pinned = "producer_cpu" in fixed or "consumer_cpu" in fixed
        primitive = fixed.get("primitive")
        return dataclasses.replace(
            self,
            padding_bytes=one("padding_bytes", self.padding_bytes),
            stack_offset_bytes=one("stack_offset_bytes", self.stack_offset_bytes),
            buffers=one("buffers", self.buffers),
            buffer_bytes=one("buffer_bytes", self.buffer_bytes),
            primitives=(Primitive(str(primitive)),) if primitive is not None else self.primitives,
            placements=(placement,) if pinned else self.placements,
            spin_fixed=int(fixed["spin_ns"]) if "spin_ns" in fixed else None,
            prefetch_fixed=int(fixed["prefetch_bytes"]) if "prefetch_bytes" in fixed else None,
            huge_pages_fixed=int(fixed["huge_pages"]) if "huge_pages" in fixed else None,
        )

    def padding_values(self) -> tuple[int, ...]:
        return self.padding_bytes.values()

    def stack_offset_values(self) -> tuple[int, ...]:
        return self.stack_offset_bytes.values()

    def buffer_counts(self) -> tuple[int, ...]:
        return self.buffers.values()

    def buffer_sizes(self) -> tuple[int, ...]:
        return self.buffer_bytes.values()

    def spin_for(self, primitive: Primitive) -> int:
        """The spin budget `primitive` starts from: the fixed one, or the calibrated one."""
        return (
            self.spin_fixed if self.spin_fixed is not None else self.spin.for_primitive(primitive)
        )

    def spin_values(self, primitive: Primitive) -> tuple[int, ...]:
        """The spin budgets worth trying with `primitive`, ascending: SPIN_FACTORS around its
        calibrated budget, and 0 (yield at once) for the spinning ones; one value for those
        that never spin, or when `--set` fixed it."""
        start = self.spin_for(primitive)
        if self.spin_fixed is not None or not primitive.spins:
            return (start,)
        high = LIMITS["spin_ns"].high
        grains = {max(1, round(start * f / SPIN_GRAIN_NS)) * SPIN_GRAIN_NS for f in SPIN_FACTORS}
        never = {0} if primitive is not Primitive.hybrid else set()  # hybrid at 0 is the futex
        return tuple(sorted(v for v in grains | never if v <= high))

    def prefetch_values(self, params: ChannelParams, full: bool = True) -> tuple[int, ...]:
        """The prefetch depths worth trying at `params`: PREFETCH_GRID (or PREFETCH_SHORT) up to
        its buffer size, or the one `--set` fixed."""
        if self.prefetch_fixed is not None:
            return (self.prefetch_fixed,)
        grid = PREFETCH_GRID if full else PREFETCH_SHORT
        return tuple(v for v in grid if v <= params.buffer_bytes)

    def huge_pages_values(self, params: ChannelParams) -> tuple[int, ...]:
        """Huge pages off, and on where they apply: the host offers transparent huge pages and
        the buffers fill at least one (elsewhere the variant declines: only 0 is proposed)."""
        if self.huge_pages_fixed is not None:
            return (self.huge_pages_fixed,)
        big = params.buffers * params.buffer_bytes >= HUGE_PAGE_BYTES
        return (0, 1) if self.host.huge_pages and big else (0,)

    def code_shapes(self, params: ChannelParams, full: bool = True) -> tuple[ChannelParams, ...]:
        """`params` in each code shape: each prefetch depth (`full`: the whole grid, else none and
        one), with and without huge pages where they apply."""
        return tuple(
            params.replace(prefetch_bytes=d, huge_pages=h)
            for d in self.prefetch_values(params, full)
            for h in self.huge_pages_values(params)
        )

    def fits(self, buffers: int, buffer_bytes: int) -> bool:
        """The memory bound, and each buffer holding at least one event."""
        return buffers * buffer_bytes <= self.max_buffer_memory and buffer_bytes >= self.event_bytes

    def violations(self, params: ChannelParams) -> tuple[str, ...]:
        """Why `params` is outside the space (empty when it is inside)."""
        checks = [
            (params.padding_bytes in self.padding_values(), "padding_bytes"),
            (params.stack_offset_bytes in self.stack_offset_values(), "stack_offset_bytes"),
            (params.buffers in self.buffer_counts(), "buffers"),
            (params.buffer_bytes in self.buffer_sizes(), "buffer_bytes"),
            (params.primitive in self.primitives, "primitive"),
            ((params.producer_cpu, params.consumer_cpu) in self.placements, "placement"),
            (self.spin_fixed in (None, params.spin_ns), "spin_ns"),
            (
                self._allowed("prefetch_bytes", params.prefetch_bytes, self.prefetch_fixed),
                "prefetch_bytes",
            ),
            (self._allowed("huge_pages", params.huge_pages, self.huge_pages_fixed), "huge_pages"),
            (self.fits(params.buffers, params.buffer_bytes), "buffers * buffer_bytes"),
        ]
        return tuple(name for ok, name in checks if not ok)

    @staticmethod
    def _allowed(name: str, value: int, fixed: int | None) -> bool:
        return LIMITS[name].allows(value) and fixed in (None, value)

    def contains(self, params: ChannelParams) -> bool:
        return not self.violations(params)

    def start(self) -> ChannelParams:
        """The point every search starts from, and the `estimate` effort's answer.

        Cache-line padding, no stack offset, triple buffering of 4 KiB buffers (clamped into the
        space), the first allowed primitive, and the first placement (unpinned unless forbidden).
        """
        line = self.host.cache_line_bytes
        pads = self.padding_values()
        padding = line if line in pads else min(pads, key=lambda p: (abs(p - line), p))
        sizes = [s for s in self.buffer_sizes() if self.fits(START_BUFFERS, s)]
        size = min(sizes or self.buffer_sizes(), key=lambda s: (abs(s - START_BUFFER_BYTES), s))
        buffers = START_BUFFERS if self.fits(START_BUFFERS, size) else min(self.buffer_counts())
        producer, consumer = self.placements[0]
        return ChannelParams(
            padding_bytes=padding,
            stack_offset_bytes=0,
            buffers=buffers,
            buffer_bytes=size,
            primitive=self.primitives[0],
            producer_cpu=producer,
            consumer_cpu=consumer,
            spin_ns=self.spin_for(self.primitives[0]),
            prefetch_bytes=self.prefetch_fixed or 0,
            huge_pages=self.huge_pages_fixed or 0,
        )

    def measurement_pair(self) -> tuple[int, int]:
        """Where the search measures its candidates while placement is not the question: the
        first pinned placement that is not two SMT siblings (two cores sharing a cache, the
        paper's CMP placement), so every candidate of a step runs on the same two CPUs rather
        than wherever the scheduler puts it that sample; on a host that moves its CPUs about,
        the typical pair (HostShape.typical_pair). Unpinned when pinning is not allowed or
        there is no such pair."""

        def siblings(pair: tuple[int, int]) -> bool:
            declared = frozenset(pair) in {frozenset(p) for p in self.host.sibling_pairs}
            return declared or self.host.class_of(*pair) == SIBLING_CLASS

        pinned = [p for p in self.placements if p != UNPINNED_CPUS and not siblings(p)]
        typical = self.host.typical_pair
        if typical is not None and typical in pinned:  # a host that moves its CPUs
            return typical
        return pinned[0] if pinned else UNPINNED_CPUS

    def placement_name(self, params: ChannelParams) -> str:
        """What the placement is, in words: unpinned, the measured class it represents, or
        pinned (a placement of sysfs's or of `--set`)."""
        where = (params.producer_cpu, params.consumer_cpu)
        if where == UNPINNED_CPUS:
            return "unpinned"
        return self.host.class_of(*where) or "pinned"

    def measured_at(self, params: ChannelParams) -> ChannelParams:
        """`params` pinned to the measurement pair, if it is unpinned (a placement the search
        was given stays where it is)."""
        if (params.producer_cpu, params.consumer_cpu) != UNPINNED_CPUS:
            return params
        producer, consumer = self.measurement_pair()
        return params.replace(producer_cpu=producer, consumer_cpu=consumer)

    def grid(self) -> tuple[tuple[int, int], ...]:
        """Every allowed (buffers, buffer_bytes) pair, fewest and smallest first."""
        return tuple(
            (n, s) for n in self.buffer_counts() for s in self.buffer_sizes() if self.fits(n, s)
        )

    def sizes_around(self, buffer_bytes: int, radius: int) -> tuple[int, ...]:
        """The buffer sizes within `radius` powers of two of `buffer_bytes`, inside the space."""
        sizes = self.buffer_sizes()
        if buffer_bytes not in sizes:
            return tuple(s for s in sizes if s == buffer_bytes)
        i = sizes.index(buffer_bytes)
        return sizes[max(0, i - radius) : i + radius + 1]
