"""Every kind of line the record store holds, and the one schema version they share.

`search.records.samples` defines the search's kinds (a `Record` of samples, a `Cut`, a
`MatrixRecord`); this module adds the measured facts that had JSON caches of their own, and
`hspc-gen bench`'s rounds, so that one store, one key scheme (`RecordKey`) and one schema version
hold them all, and wisdom moves them as lines like any other:
- `CalibrationRecord`: the host's waiting costs (search.measure.calibrate). Its key names the
  host and the program that timed them, not the compiler: the costs are the kernel's and CPUs'.
- `UserCodeRecord`: the user's code's cost per event (search.measure.preflight), keyed by the
  host and the code's digest (the files, the sides, the event size, the smoke harness).
- `RoundRecord`: one round of `hspc-gen bench`, each contender's sample or failure
  (search.records.contest_rounds), keyed by the host, the contest's sources and how they were run,
  the compiler and the user's flags.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hspc_gen.model import Status
from hspc_gen.search.records.samples import (
    STORE_SCHEMA,
    Cut,
    MatrixRecord,
    Record,
    RecordKey,
    Sample,
)

READ_SCHEMAS = (STORE_SCHEMA,)
"""The schema versions this hspc-gen reads. Version 1 (lines without a version) keyed the work
per event differently and kept budget cuts as fake arms: its lines are reported and measured
again. Version 2 is still this one: the kinds added since (calibration, user_code, round) are
new lines that the previous version skips and reports, and nothing a version 2 line said
changed meaning, so the number stays."""


@dataclass(frozen=True)
class CalibrationRecord:
    """The host's futex wake-up latency and context switch, every sample (ns)."""

    key: RecordKey
    wake_ns: tuple[float, ...]
    switch_ns: tuple[float, ...]
    busy: bool  # measured beside other load: a quiet run measures it again

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "calibration",
            "schema": STORE_SCHEMA,
            "key": self.key.to_dict(),
            "wake_ns": list(self.wake_ns),
            "switch_ns": list(self.switch_ns),
            "busy": self.busy,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CalibrationRecord:
        return cls(
            RecordKey.from_dict(data["key"]),
            floats(data["wake_ns"]),
            floats(data["switch_ns"]),
            strict_bool(data["busy"]),
        )


@dataclass(frozen=True)
class UserCodeRecord:
    """What the user's code costs alone per event, each side (0 for a side it does not have)."""

    key: RecordKey
    producer_ns: float
    consumer_ns: float
    busy: bool = False  # measured beside other load: a quiet run measures it again

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "user_code",
            "schema": STORE_SCHEMA,
            "key": self.key.to_dict(),
            "producer_ns": self.producer_ns,
            "consumer_ns": self.consumer_ns,
            "busy": self.busy,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UserCodeRecord:
        return cls(
            RecordKey.from_dict(data["key"]),
            float(data["producer_ns"]),
            float(data["consumer_ns"]),
            strict_bool(data["busy"]),
        )


@dataclass(frozen=True)
class ArmRound:
    """One contender in one bench round: its sample, or why it has none."""

    arm: str
    events: int  # per sample, as the round's plan sized it
    status: Status
    sample: Sample | None = None
    cause: str = ""

    def to_dict(self) -> dict[str, Any]:
        sample = None if self.sample is None else dataclasses.asdict(self.sample)
        return {
            "arm": self.arm,
            "events": self.events,
            "status": self.status.value,
            "sample": sample,
            "cause": self.cause,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ArmRound:
        sample = data.get("sample")
        return cls(
            str(data["arm"]),
            int(data["events"]),
            Status(data["status"]),
            None if sample is None else Sample.from_dict(sample),
            str(data.get("cause", "")),
        )


@dataclass(frozen=True)
class RoundRecord:
    """One round of `hspc-gen bench`: every contender's result, sorted by contender."""

    key: RecordKey
    round: int
    arms: tuple[ArmRound, ...]
    busy: bool = False  # measured beside other load: a quiet run measures it again

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "round",
            "schema": STORE_SCHEMA,
            "key": self.key.to_dict(),
            "round": self.round,
            "arms": [a.to_dict() for a in self.arms],
            "busy": self.busy,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RoundRecord:
        arms = tuple(ArmRound.from_dict(a) for a in data["arms"])
        busy = strict_bool(data.get("busy", False))
        return cls(RecordKey.from_dict(data["key"]), int(data["round"]), arms, busy)

    @property
    def plan(self) -> tuple[tuple[str, int], ...]:
        """What the round ran: each contender and its events per sample."""
        return tuple((a.arm, a.events) for a in self.arms)


Entry = Record | Cut | MatrixRecord | CalibrationRecord | UserCodeRecord | RoundRecord

KINDS: Mapping[str, Callable[[Mapping[str, Any]], Entry]] = {
    "samples": Record.from_dict,
    "cut": Cut.from_dict,
    "matrix": MatrixRecord.from_dict,
    "calibration": CalibrationRecord.from_dict,
    "user_code": UserCodeRecord.from_dict,
    "round": RoundRecord.from_dict,
}


def entry_from_dict(data: Mapping[str, Any]) -> Entry:
    """One line of the record store; ValueError for a line of another schema version or kind."""
    version = data.get("schema", 1)
    if version not in READ_SCHEMAS:
        readable = " and ".join(map(str, READ_SCHEMAS))
        raise ValueError(f"record format {version}, this hspc-gen reads {readable}")
    kind = str(data["kind"])
    if kind not in KINDS:
        raise ValueError(f"a record of kind {kind!r}, which this hspc-gen does not know")
    return KINDS[kind](data)


def slot(entry: Entry) -> tuple[object, ...]:
    """What an entry measured or cut: two entries of one slot answer the same question."""
    if isinstance(entry, Record):
        key = (entry.key, entry.arm, entry.seed, entry.first_round, entry.events_per_sample)
        return ("samples", *key)
    if isinstance(entry, Cut):
        return ("cut", entry.key, entry.run, entry.plan)
    if isinstance(entry, RoundRecord):
        return ("round", entry.key, entry.round, entry.plan)
    return (type(entry).__name__, entry.key)


def floats(values: Any) -> tuple[float, ...]:
    if not isinstance(values, list):
        raise TypeError(f"{values!r} is not a list of timings")
    return tuple(float(v) for v in values)


def strict_bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"busy is {value!r}, not true or false")
    return value
