"""threads.consumers: adaptive: the generated ConsumerPool's controller parameters as hspc-gen
chose them for the host (the header's kPoolTuning), each with its reason."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Basis:
    """One figure a choice rests on: its value and where it came from, in words."""

    value: float
    source: str  # "the futex wake-up measured on this host", "app.yaml's consumer_ns (estimate)"
    measured: bool


@dataclass(frozen=True)
class PoolChoice:
    """One PoolOptions field: the value written into kPoolTuning, and why."""

    value: int
    why: str


@dataclass(frozen=True)
class PoolTuning:
    """The PoolOptions fields hspc-gen sets (named as in C++); the others keep the runtime's
    defaults. `basis` says whether they rest on measurements or on the estimate."""

    min_consumers: PoolChoice
    max_consumers: PoolChoice  # 0: the CPUs the process may use at run time
    start_consumers: PoolChoice
    interval_ns: PoolChoice
    grow_wait_ns: PoolChoice
    grow_intervals: PoolChoice
    basis: str  # "measured", "estimated" or "partly measured"

    def choices(self) -> tuple[tuple[str, PoolChoice], ...]:
        """(field name, choice) in PoolOptions' declaration order."""
        return (
            ("min_consumers", self.min_consumers),
            ("max_consumers", self.max_consumers),
            ("start_consumers", self.start_consumers),
            ("interval_ns", self.interval_ns),
            ("grow_wait_ns", self.grow_wait_ns),
            ("grow_intervals", self.grow_intervals),
        )
