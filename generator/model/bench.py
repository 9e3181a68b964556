"""What `hspc-gen bench` measured: the tuned channel beside the host's peer queues and the limit
lines, one row per contender, each with its rate and its speed paired against the tuned channel."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from hspc_gen.model import ChannelParams, Figure, Status


class Role(StrEnum):
    """What a row is: the tuned channel (its calls), a peer queue, or a limit line."""

    tuned = "tuned"
    peer = "peer"
    line = "line"


@dataclass(frozen=True)
class Contender:
    """One row's identity: its id (the C++ variant or baseline kind), what it is, in words."""

    id: str
    role: Role
    label: str


@dataclass(frozen=True)
class BenchRow:
    """One contender measured: events/s (median, 95% bootstrap interval over the rounds) and its
    speed over the reference row, paired by round (None for the reference itself, or when it
    did not run). A row that failed carries its status and cause instead of figures."""

    contender: Contender
    status: Status
    rate: Figure | None = None
    vs_reference: Figure | None = None
    cause: str = ""
    unresolved: str = ""
    """Why the row's figures are not given although it ran: it measured surely faster than the
    slower side alone (its paired ratio's interval above 1, which cannot be), in the rounds
    asked for and again with as many more."""
    at_bound: str = ""
    """What was measured when the row's paired ratio to the slower side alone came out above 1
    but its interval did not: as fast as that side within the noise, not faster."""


@dataclass(frozen=True)
class BenchReport:
    target: str
    fingerprint: str
    event_bytes: int
    channel: ChannelParams
    header: str  # the header file the tuned rows compiled
    cxxflags: str
    compiler: str
    rounds: int
    reference: str  # the row the others are paired against
    rows: tuple[BenchRow, ...]
    missing: tuple[str, ...] = ()  # peers this host's build could not include
    remeasured: tuple[str, ...] = ()  # rows measured past the bound in the rounds asked for,
    # for which as many rounds more were run (`rounds` counts them all)
