"""The model: the vocabulary every stage shares, and the typed result a run produces.

This module is the vocabulary (enums, the channel parameters and their limits); `model.result`
and `model.threads` are the result's frozen dataclasses. The model imports nothing else of
hspc_gen, so every stage, and `reports/` in particular, can depend on it alone.

The names here are the names everywhere: app.yaml keys, `--set NAME=VALUE`, Python fields and the
C++ `Tuning` struct all say `padding_bytes`, `buffer_bytes`, `Primitive.pause_spin`, ...
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from enum import StrEnum


class Primitive(StrEnum):
    """How the producer and consumer wait for each other, once per buffer."""

    condvar = "condvar"
    mutex = "mutex"
    spinlock = "spinlock"
    backoff_spin = "backoff_spin"
    pause_spin = "pause_spin"
    futex = "futex"
    hybrid = "hybrid"

    @property
    def blocks(self) -> bool:
        """True when a waiting thread sleeps in the kernel instead of burning its CPU."""
        return self in _BLOCKING

    @property
    def spins(self) -> bool:
        """True when a waiting thread spins first (for spin_ns): the spin budget matters."""
        return self is Primitive.hybrid or not self.blocks


_BLOCKING = frozenset({Primitive.condvar, Primitive.futex, Primitive.hybrid})


class Status(StrEnum):
    """What became of one arm: built and measured (`ok`), or why not, or why a decision left it
    out. Failures are values in the record, never exceptions that stop the run."""

    ok = "ok"
    compile_error = "compile_error"
    timeout = "timeout"  # a sample ran past its deadline: the watchdog aborted it
    crashed = "crashed"  # the benchmark process died (a signal or a non-zero exit)
    wrong_answer = "wrong_answer"  # a sample lost, duplicated or reordered events
    no_samples = "no_samples"  # it ran, but left no sample a decision could use
    misses_latency = "misses_latency"  # events waited longer than constraints.max_latency_us
    skipped = "skipped"  # not run: the budget ran out first


class Objective(StrEnum):
    throughput = "throughput"
    latency = "latency"
    efficiency = "efficiency"


class Effort(StrEnum):
    """How hard the tuner searches, after FFTW's planner levels."""

    estimate = "estimate"
    quick = "quick"
    measure = "measure"
    patient = "patient"
    exhaustive = "exhaustive"


class PinThreads(StrEnum):
    auto = "auto"
    never = "never"
    always = "always"


DEFAULT_SPIN_NS = 2000
"""The spin budget when nothing was calibrated: folly's 2 µs, the value every primitive used
before the host's own was measured (search/measure/calibrate.py)."""


@dataclass(frozen=True)
class ChannelParams:
    """One point of the parameter space: everything the generated header's `kTuning` holds."""

    padding_bytes: int
    stack_offset_bytes: int
    buffers: int
    buffer_bytes: int
    primitive: Primitive
    producer_cpu: int = -1
    consumer_cpu: int = -1
    spin_ns: int = DEFAULT_SPIN_NS  # how long a spinning wait spins before it yields or sleeps
    # Code shape: the bytes of each slot prefetched as it is taken (0: none), and the channel's
    # block on transparent huge pages (1) or small pages (0).
    prefetch_bytes: int = 0
    huge_pages: int = 0

    def replace(self, **changes: object) -> ChannelParams:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def as_dict(self) -> dict[str, int | str]:
        """The `--set` names and values, in declaration order (stable for JSON)."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def identity(self) -> dict[str, int | str]:
        """The values that name the point in ids and hashes: `as_dict`, with the parameters added
        later left out at their defaults, so that an id from before they were searched names the
        same point."""
        values = self.as_dict()
        for name, default in _LATER_DEFAULTS.items():
            if values[name] == default:
                del values[name]
        return values


_LATER_DEFAULTS: dict[str, int] = {"spin_ns": DEFAULT_SPIN_NS, "prefetch_bytes": 0, "huge_pages": 0}


def _plain(value: object) -> int | str:
    if isinstance(value, Primitive):
        return value.value
    assert isinstance(value, int)
    return value


PARAM_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(ChannelParams))


KiB, MiB = 1 << 10, 1 << 20


@dataclass(frozen=True)
class Limit:
    """The domain of one integer channel parameter: what the channel's static_asserts accept
    (runtime/hspc/limits.hpp holds the same numbers; a test compiles it and compares)."""

    low: int
    high: int
    powers_of_two: bool = False  # only powers of two in [low, high], and 0 when low is 0
    bytes: bool = False  # a size: described as "64 KiB" rather than 65536

    def allows(self, value: int) -> bool:
        if not self.low <= value <= self.high:
            return False
        return not self.powers_of_two or value == 0 or value & (value - 1) == 0

    def describe(self) -> str:
        low, high = self._text(self.low), self._text(self.high)
        if self.powers_of_two:
            zero = "0 or " if self.low == 0 else ""
            return f"must be {zero}a power of two up to {high}"
        return f"must be between {low} and {high}"

    def _text(self, value: int) -> str:
        if not self.bytes:
            return str(value)
        for scale, unit in ((MiB, "MiB"), (KiB, "KiB")):
            if value >= scale and value % scale == 0:
                return f"{value // scale} {unit}"
        return f"{value} B"


LIMITS: dict[str, Limit] = {
    "padding_bytes": Limit(0, 512, powers_of_two=True, bytes=True),
    "stack_offset_bytes": Limit(0, 64 * KiB, bytes=True),
    "buffers": Limit(2, 64),
    "buffer_bytes": Limit(64, 16 * MiB, bytes=True),
    "spin_ns": Limit(0, 1_000_000),
    "prefetch_bytes": Limit(0, 64 * KiB, powers_of_two=True, bytes=True),
    "huge_pages": Limit(0, 1),
}
"""One table of the parameter limits: `--set`, the search space and the estimate all read it."""

SEARCH_MIN_BUFFER_BYTES = 256
"""The smallest buffer the search and the estimate propose (the channel accepts 64): below it
the once-per-buffer hand-off costs more than the events it carries."""


def next_power_of_two(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def floor_power_of_two(n: int) -> int:
    return 1 << (n.bit_length() - 1) if n > 0 else 0


def smallest_buffer_memory(event_bytes: int) -> int:
    """The least memory a channel's buffers can take: two buffers of one event each (a power of
    two, at least the channel's smallest buffer). A smaller max_buffer_memory admits no channel."""
    one_event = max(LIMITS["buffer_bytes"].low, next_power_of_two(event_bytes))
    return LIMITS["buffers"].low * one_event


def buffer_floor(event_bytes: int, max_buffer_memory: int) -> int:
    """The smallest buffer the search and the estimate propose: SEARCH_MIN_BUFFER_BYTES and at
    least one event, or less when max_buffer_memory leaves less for two buffers."""
    two_fit = floor_power_of_two(max_buffer_memory // LIMITS["buffers"].low)
    roomy = min(SEARCH_MIN_BUFFER_BYTES, two_fit)
    return max(LIMITS["buffer_bytes"].low, next_power_of_two(event_bytes), roomy)


MAX_THREADS = 1024
"""The most producer or consumer threads app.yaml may ask for, and the thread search considers."""


@dataclass(frozen=True)
class Figure:
    """A measured figure: the median of n values and its 95% bootstrap interval."""

    median: float
    ci95_low: float
    ci95_high: float
    n: int

    def overlaps(self, other: Figure) -> bool:
        """Whether the two 95% intervals share a value: the figures are within the noise of
        each other."""
        return self.ci95_low <= other.ci95_high and other.ci95_low <= self.ci95_high


@dataclass(frozen=True)
class Summary(Figure):
    """Events per second of one arm: the median with its interval, quartiles, and the share of
    samples in which either thread was involuntarily switched out."""

    q1: float
    q3: float
    preempted_fraction: float

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1


@dataclass(frozen=True)
class SpinBudgets:
    """The spin budget each primitive starts from: the hybrid's spin before it sleeps on the
    futex, the spinning primitives' spin before they yield the CPU."""

    sleep_ns: int = DEFAULT_SPIN_NS
    yield_ns: int = DEFAULT_SPIN_NS

    def for_primitive(self, primitive: Primitive) -> int:
        """The budget `primitive` starts from (DEFAULT_SPIN_NS for those that never spin: the
        value is unused there, and the default keeps their ids)."""
        if primitive is Primitive.hybrid:
            return self.sleep_ns
        return self.yield_ns if primitive.spins else DEFAULT_SPIN_NS


UNCALIBRATED = SpinBudgets()
"""The budgets without a calibration: DEFAULT_SPIN_NS for every primitive."""


SPIN_GRAIN_NS = 50
"""Calibrated budgets are rounded to this: finer differences are below the clock's reading cost."""


def spin_budget(cost_ns: float) -> int:
    """Spin for as long as the alternative costs (the 2-competitive rule of spin-then-block):
    `cost_ns` rounded to SPIN_GRAIN_NS, inside the spin_ns limit, never 0 (0 means "never spin");
    DEFAULT_SPIN_NS when the cost was not measured (NaN)."""
    if not math.isfinite(cost_ns):
        return DEFAULT_SPIN_NS
    grains = round(cost_ns / SPIN_GRAIN_NS)
    return min(LIMITS["spin_ns"].high, max(SPIN_GRAIN_NS, grains * SPIN_GRAIN_NS))


@dataclass(frozen=True)
class HostTimings:
    """What waiting costs on this host, measured at the start of a run and cached per host
    fingerprint: the futex wake-up latency (FUTEX_WAKE to the woken thread running, on another
    CPU) and a context switch (two threads on one CPU passing it back and forth by futex)."""

    wake_ns: Figure
    switch_ns: Figure
    busy: bool = False  # measured while other processes used the CPUs

    def budgets(self) -> SpinBudgets:
        """The hybrid spins for what sleeping would cost it (a wake-up); a spinning primitive
        spins for what yielding to a peer on its CPU would cost (a context switch)."""
        return SpinBudgets(spin_budget(self.wake_ns.median), spin_budget(self.switch_ns.median))
