"""The shared vocabulary of the pipeline: enums and frozen dataclasses the stages exchange.

The names here are the names everywhere: app.yaml keys, `--set NAME=VALUE`, Python fields and the
C++ `Tuning` struct all say `padding_bytes`, `buffer_bytes`, `Primitive.pause_spin`, ...
"""

from __future__ import annotations

import dataclasses
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


_BLOCKING = frozenset({Primitive.condvar, Primitive.futex, Primitive.hybrid})


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

    def replace(self, **changes: object) -> ChannelParams:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def as_dict(self) -> dict[str, int | str]:
        """The `--set` names and values, in declaration order (stable for hashing and JSON)."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}


def _plain(value: object) -> int | str:
    if isinstance(value, Primitive):
        return value.value
    assert isinstance(value, int)
    return value


PARAM_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(ChannelParams))
