"""The host's communication structure as measured: how long one cache line takes to go from one
CPU to another and back, and how fast a buffer-sized block moves, per pair of CPUs (the matrix);
the classes the pairs fall into; and where they disagree with what sysfs declares.

The relations sysfs declares between two CPUs, nearest first (`RELATIONS`); a measured class is
named after the relation of its pairs where the two agree:
    smt_sibling   hardware threads of one core
    shared_l2     two cores sharing an L2
    shared_l3     two cores sharing the last-level cache beyond L2, but no L2
    other_l3      one package and NUMA node, no shared cache beyond L1/L2
    other_socket  another package or NUMA node
    same_package  one package where sysfs describes no caches at all
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

RELATIONS = ("smt_sibling", "shared_l2", "shared_l3", "same_package", "other_l3", "other_socket")
MATRIX_FORMAT = "hspc-gen topology matrix"
MATRIX_VERSION = 1
PAIR_COLUMNS = (
    "a",
    "b",
    "round_trip_ns",
    "round_trip_q1",
    "round_trip_q3",
    "block_ns",
    "block_q1",
    "block_q3",
    "check",
)
"""A matrix document's pair rows, in this order (rows, not objects: a third of the bytes)."""


@dataclass(frozen=True)
class PairTiming:
    """One pair measured: the thread on `a` starts the round trips and writes the block, the one
    on `b` answers and reads it. Medians over the probe's samples, with their quartiles."""

    a: int
    b: int
    round_trip_ns: float
    round_trip_q1: float
    round_trip_q3: float
    block_ns: float  # b's time to read the whole block a wrote
    block_q1: float
    block_q3: float
    check: bool = False  # measured to check the classes the other pairs formed (many CPUs)

    @property
    def cpus(self) -> tuple[int, int]:
        return (self.a, self.b)

    def row(self) -> list[Any]:
        return [getattr(self, name) for name in PAIR_COLUMNS]


@dataclass(frozen=True)
class Matrix:
    """Every pair measured on one host (a < b, unordered: the round trip is the same both ways),
    and those the probe had to skip, with why."""

    cpus: tuple[int, ...]  # the CPUs the measurement could use
    pairs: tuple[PairTiming, ...]  # sorted by (a, b)
    block_bytes: int
    samples: int = 0  # per pair and figure
    round_trips: int = 0  # per round-trip sample
    skipped: tuple[tuple[int, int, str], ...] = ()
    busy: bool = False  # other processes used the CPUs meanwhile: a quiet run measures again
    seconds: float = 0.0  # what building nothing and measuring took
    source: str = ""  # where a recorded matrix comes from, for a person
    repeats: tuple[tuple[int, int, float], ...] = ()  # pairs measured again: their second median

    def pair(self, a: int, b: int) -> PairTiming | None:
        low, high = min(a, b), max(a, b)
        return next((p for p in self.pairs if (p.a, p.b) == (low, high)), None)

    def transfer_gbps(self, pair: PairTiming) -> float:
        """The block's bytes over b's time to read them, in GB/s (bytes per ns)."""
        return self.block_bytes / pair.block_ns if pair.block_ns > 0 else math.nan

    def restricted(self, cpus: Iterable[int]) -> Matrix:
        """The pairs among `cpus` only: what a process with fewer CPUs allowed may use."""
        keep = set(cpus) & set(self.cpus)
        return Matrix(
            tuple(sorted(keep)),
            tuple(p for p in self.pairs if p.a in keep and p.b in keep),
            self.block_bytes,
            self.samples,
            self.round_trips,
            tuple(s for s in self.skipped if s[0] in keep and s[1] in keep),
            self.busy,
            self.seconds,
            self.source,
            tuple(r for r in self.repeats if r[0] in keep and r[1] in keep),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": MATRIX_FORMAT,
            "version": MATRIX_VERSION,
            "source": self.source,
            "cpus": list(self.cpus),
            "block_bytes": self.block_bytes,
            "samples": self.samples,
            "round_trips": self.round_trips,
            "busy": self.busy,
            "seconds": self.seconds,
            "columns": list(PAIR_COLUMNS),
            "pairs": [p.row() for p in self.pairs],
            "skipped": [list(s) for s in self.skipped],
            "repeats": [list(r) for r in self.repeats],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Matrix:
        """A matrix document; ValueError, KeyError or TypeError when it is not one."""
        if data.get("format") != MATRIX_FORMAT or data.get("version") != MATRIX_VERSION:
            raise ValueError(
                f"not a {MATRIX_FORMAT} of version {MATRIX_VERSION} (format"
                f" {data.get('format')!r}, version {data.get('version')!r})"
            )
        if tuple(data["columns"]) != PAIR_COLUMNS:
            raise ValueError(f"its pair columns are {data['columns']}, not {list(PAIR_COLUMNS)}")
        cpus = tuple(sorted(int(c) for c in data["cpus"]))
        pairs = tuple(sorted((_pair(row, set(cpus)) for row in data["pairs"]), key=_pair_key))
        skipped = tuple((int(a), int(b), str(why)) for a, b, why in data.get("skipped", ()))
        repeats = tuple((int(a), int(b), float(t)) for a, b, t in data.get("repeats", ()))
        return cls(
            cpus,
            pairs,
            int(data["block_bytes"]),
            int(data.get("samples", 0)),
            int(data.get("round_trips", 0)),
            skipped,
            bool(data.get("busy", False)),
            float(data.get("seconds", 0.0)),
            str(data.get("source", "")),
            repeats,
        )


def _pair_key(pair: PairTiming) -> tuple[int, int]:
    return (pair.a, pair.b)


def _pair(row: Any, cpus: set[int]) -> PairTiming:
    if len(row) != len(PAIR_COLUMNS):
        raise ValueError(f"a pair row of {len(row)} values: {row!r}")
    a, b = int(row[0]), int(row[1])
    if not a < b or a not in cpus or b not in cpus:
        raise ValueError(f"pair ({a}, {b}) is not two of its CPUs, the lower first")
    trip, trip_q1, trip_q3, block, block_q1, block_q3 = (float(v) for v in row[2:8])
    if not all(math.isfinite(v) and v > 0 for v in (trip, trip_q1, trip_q3, block)):
        raise ValueError(f"pair ({a}, {b}) has a time that is not a positive number: {row!r}")
    return PairTiming(a, b, trip, trip_q1, trip_q3, block, block_q1, block_q3, bool(row[8]))


@dataclass(frozen=True)
class LatencyClass:
    """Pairs whose round trips lie together, apart from the other classes' by a multiple."""

    name: str  # a relation of RELATIONS, or one derived from it (`shared_l3_far`)
    round_trip_ns: float  # the median of its pairs' medians
    round_trip_range: tuple[float, float]  # its fastest and slowest pair's median
    transfer_gbps: float  # the median of its pairs' block transfer rates
    pairs: tuple[tuple[int, int], ...]
    representative: tuple[int, int]  # the pair nearest its median: (producer_cpu, consumer_cpu)
    sysfs: tuple[tuple[str, int], ...]  # what sysfs calls its pairs, with how many of each
    checked: int = 0  # pairs measured to check the class (many CPUs), predicted in it
    confirmed: int = 0  # of those, how many measured in it

    @property
    def agrees(self) -> bool:
        """Whether sysfs calls every pair of the class what the class is named."""
        return self.sysfs == ((self.name, len(self.pairs)),)


class DisagreementKind(StrEnum):
    split_level = "split_level"  # one sysfs relation measured as two or more classes
    merged = "merged"  # two sysfs relations measured alike
    order = "order"  # a relation sysfs says is nearer measures slower
    sibling_latency = "sibling_latency"  # pairs not declared siblings measure like siblings
    moved = "moved"  # a pair measured twice landed in another class: the host moves its CPUs


@dataclass(frozen=True)
class Disagreement:
    kind: DisagreementKind
    relation: str  # what sysfs says of the pairs
    measured: str  # the class they measured in
    pairs: tuple[tuple[int, int], ...]  # the pairs concerned (a few, as examples)
    count: int  # how many pairs in all
    text: str  # the disagreement for a person, in one sentence


@dataclass(frozen=True)
class Topology:
    """The measured classes of one matrix on one host, fastest first."""

    matrix: Matrix
    classes: tuple[LatencyClass, ...]
    disagreements: tuple[Disagreement, ...]
    kind: tuple[str, ...]  # HSPC's CMP / SMP / SMT, from the measured classes
    sysfs_kind: tuple[str, ...]  # the same from sysfs alone


class TopologyStatus(StrEnum):
    measured = "measured"  # by this run
    stored = "stored"  # by an earlier run (the record store) or imported with wisdom
    recorded = "recorded"  # a recorded matrix file (--matrix), for a recorded sysfs tree
    not_measured = "not_measured"  # not asked to (--effort estimate, a recorded tree)
    failed = "failed"  # the probe could not be built or run: sysfs alone


@dataclass(frozen=True)
class TopologyOutcome:
    """What the run knows of the host's measured structure: the topology, or why it has none
    (then everything rests on sysfs alone)."""

    status: TopologyStatus
    topology: Topology | None
    note: str = ""


@dataclass(frozen=True)
class RepresentativePair:
    """One measured class's representative placement for a producer/consumer pair."""

    name: str  # the class
    producer_cpu: int
    consumer_cpu: int
    round_trip_ns: float  # the class's median


@dataclass(frozen=True)
class ProbeHost:
    """The host as the topology probe takes it (search.measure.topology), built by the host's own
    modules (topology.plan.probe_host): the measuring never reads a Host."""

    fingerprint: str
    cpus: tuple[int, ...]  # the allowed CPUs
    first_round: tuple[tuple[int, int], ...]  # the pairs measured first (topology.plan)
    source: str  # where a matrix is measured, for a person reading a recorded one
    classify: Callable[[Matrix], Topology]  # a matrix's classes, with what sysfs declares
    relation: Callable[[int, int], str]  # what sysfs declares between two CPUs (RELATIONS)
