"""What the search measures and keeps: candidates, samples, and the record store's entries
(the plans that produce them are `search.measure.plan`'s).

Every type here is a frozen dataclass with a plain-JSON form (`to_dict` / `from_dict`): the same
objects are written to the record store and replayed, by a re-run and by the tests' fake runner.
The search's kinds of store line, each stamped with STORE_SCHEMA: a `Record` (the samples of one arm
from one plan), a `Cut` (where the budget stopped a run) and a `MatrixRecord` (the host's CPU pairs
measured by the topology probe); `search.records.entries` holds the other kinds and reads a line.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hspc_gen.model import DEFAULT_SPIN_NS, PARAM_NAMES, ChannelParams, Primitive, Status
from hspc_gen.model.topology import Matrix

if TYPE_CHECKING:  # only for the annotation of Cut.of_plan: search.measure.plan imports this module
    from hspc_gen.search.measure.plan import Plan

BASELINE_ARMS: tuple[str, ...] = (
    "producer_alone",
    "consumer_alone",
    "p0_parallel",
    "optimal",
    "achievable",
    "upper_bound",
)
"""Reference programs timed alongside the candidates (the paper's limit lines and ladder rungs)."""

STORE_SCHEMA = 2
"""The record store's one schema version, of every kind of line (search.records.entries says which
versions this hspc-gen reads); a wisdom file carries it as its own version."""

AA_PREFIX = "aa:"
"""An A/A arm is a second, independently timed copy of a candidate: `aa:<candidate id>`."""


def aa_arm(candidate_id: str) -> str:
    return AA_PREFIX + candidate_id


def is_baseline(arm: str) -> bool:
    return arm in BASELINE_ARMS


def is_aa(arm: str) -> bool:
    return arm.startswith(AA_PREFIX)


LATENCY_PREFIX = "lat:"
"""A latency arm times a candidate's push-to-pop time under a paced load, with no flush per
event (what an application sees): `lat:<candidate id>`, the harness's `paced` kind."""


def latency_arm(candidate_id: str) -> str:
    return LATENCY_PREFIX + candidate_id


def is_latency(arm: str) -> bool:
    return arm.startswith(LATENCY_PREFIX)


def base_of(arm: str) -> str:
    """The candidate an A/A copy or a latency arm is of (the arm itself otherwise)."""
    return arm.removeprefix(AA_PREFIX).removeprefix(LATENCY_PREFIX)


DISTURBED_DELAY_SHARE = 0.05
"""A sample whose threads spent more than this share of its wall time runnable but not running
is disturbed. Undisturbed samples on a quiet 2-vCPU VM wait 0-3% (a timer tick, a kernel
thread); a neighbour's time slice takes 10-20% of a 15 ms sample."""


@dataclass(frozen=True)
class Sample:
    """One timed run of one arm (a candidate, a baseline or an A/A copy) in one round."""

    arm: str
    round: int
    events: int
    wall_ns: float
    cpu_ns_producer: float
    cpu_ns_consumer: float
    nivcsw_producer: int
    nivcsw_consumer: int
    migrations: int
    verified: bool
    latency_ns: float | None = None
    """Median hand-off latency within the sample, when the harness measured it."""
    latency_p99_ns: float | None = None
    """Its 99th percentile (the latency kinds only)."""
    voluntary_switches: int = 0
    """Voluntary context switches of every thread (the thread search's fan-out samples)."""
    wait_ns: float = 0.0
    """Time every thread spent waiting in the channel (the thread search's fan-out samples)."""
    delay_ns: float = -1.0
    """Time the threads spent runnable but not running (waiting for a CPU), summed; -1 when the
    kernel does not expose it (or the record is older)."""

    def __post_init__(self) -> None:
        # A sample that moved nothing or took no time measured nothing: the harness's parser
        # makes it its arm's failure (harness.parse_samples), and a stored one is unreadable.
        if self.events <= 0 or not self.wall_ns > 0:
            said = f"{self.events} events in {self.wall_ns} ns"
            raise ValueError(f"a sample of {self.arm} moved {said}")

    @property
    def disturbed(self) -> bool:
        """Whether the threads waited for a CPU long enough to make this a different measurement
        (another process ran in their place); unknown counts as undisturbed."""
        return self.delay_ns > DISTURBED_DELAY_SHARE * self.wall_ns

    @property
    def events_per_second(self) -> float:
        return self.events * 1e9 / self.wall_ns

    @property
    def ns_per_event(self) -> float:
        return self.wall_ns / self.events

    @property
    def cpu_ns_per_event(self) -> float:
        """CPU time of both threads per event: a spinning waiter's burnt CPU counts here."""
        return (self.cpu_ns_producer + self.cpu_ns_consumer) / self.events

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Sample:
        latency = data.get("latency_ns")
        return cls(
            arm=str(data["arm"]),
            round=int(data["round"]),
            events=int(data["events"]),
            wall_ns=float(data["wall_ns"]),
            cpu_ns_producer=float(data["cpu_ns_producer"]),
            cpu_ns_consumer=float(data["cpu_ns_consumer"]),
            nivcsw_producer=int(data["nivcsw_producer"]),
            nivcsw_consumer=int(data["nivcsw_consumer"]),
            migrations=int(data["migrations"]),
            verified=bool(data["verified"]),
            latency_ns=None if latency is None else float(latency),
            latency_p99_ns=_optional(data.get("latency_p99_ns")),
            voluntary_switches=int(data.get("voluntary_switches", 0)),
            wait_ns=float(data.get("wait_ns", 0.0)),
            delay_ns=float(data.get("delay_ns", -1.0)),
        )


def _optional(value: Any) -> float | None:
    return None if value is None else float(value)


def params_from_dict(data: Mapping[str, Any]) -> ChannelParams:
    unknown = set(data) - set(PARAM_NAMES)
    if unknown:
        raise ValueError(f"unknown channel parameters: {sorted(unknown)}")
    return ChannelParams(
        padding_bytes=int(data["padding_bytes"]),
        stack_offset_bytes=int(data["stack_offset_bytes"]),
        buffers=int(data["buffers"]),
        buffer_bytes=int(data["buffer_bytes"]),
        primitive=Primitive(data["primitive"]),
        producer_cpu=int(data.get("producer_cpu", -1)),
        consumer_cpu=int(data.get("consumer_cpu", -1)),
        spin_ns=int(data.get("spin_ns", DEFAULT_SPIN_NS)),
        prefetch_bytes=int(data.get("prefetch_bytes", 0)),
        huge_pages=int(data.get("huge_pages", 0)),
    )


def candidate_id(params: ChannelParams) -> str:
    """A short id that depends on the parameter values only (stable across runs and hosts)."""
    canonical = json.dumps(params.identity(), sort_keys=True, separators=(",", ":"))
    return "c" + hashlib.sha1(canonical.encode(), usedforsecurity=False).hexdigest()[:10]


@dataclass(frozen=True)
class Candidate:
    """One point of the space, proposed by a strategy at one step of one stage."""

    params: ChannelParams
    stage: str
    step: str

    @property
    def id(self) -> str:
        return candidate_id(self.params)

    def to_dict(self) -> dict[str, Any]:
        return {"params": self.params.as_dict(), "stage": self.stage, "step": self.step}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Candidate:
        return cls(
            params=params_from_dict(data["params"]),
            stage=str(data["stage"]),
            step=str(data["step"]),
        )


@dataclass(frozen=True)
class RecordKey:
    """What a stored measurement is valid for (FFTW wisdom: anything else is stale)."""

    fingerprint: str
    source_hash: str
    compiler: str
    flags: str

    def to_dict(self) -> dict[str, str]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RecordKey:
        return cls(
            fingerprint=str(data["fingerprint"]),
            source_hash=str(data["source_hash"]),
            compiler=str(data["compiler"]),
            flags=str(data["flags"]),
        )


@dataclass(frozen=True)
class Record:
    """The samples of one arm from one plan: the unit of the append-only store.

    `candidate` is None for baselines and A/A arms. `seed` and `first_round` say which plan (and
    so which random order) produced the samples, so a run can be replayed exactly.
    """

    key: RecordKey
    arm: str
    status: Status
    samples: tuple[Sample, ...]
    candidate: Candidate | None = None
    seed: int = 0
    events_per_sample: int = 0
    log: str = ""
    first_round: int = 0  # the plan's first round: a failure belongs to its own chunk only
    busy: bool = False  # measured beside other load: a quiet run measures it again

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "samples",
            "schema": STORE_SCHEMA,
            "first_round": self.first_round,
            "busy": self.busy,
            "key": self.key.to_dict(),
            "arm": self.arm,
            "status": self.status.value,
            "candidate": None if self.candidate is None else self.candidate.to_dict(),
            "seed": self.seed,
            "events_per_sample": self.events_per_sample,
            "log": self.log,
            "samples": samples_to_columns(self.samples),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Record:
        cand = data.get("candidate")
        return cls(
            key=RecordKey.from_dict(data["key"]),
            arm=str(data["arm"]),
            status=Status(data["status"]),
            samples=samples_from_columns(str(data["arm"]), data["samples"]),
            candidate=None if cand is None else Candidate.from_dict(cand),
            seed=int(data.get("seed", 0)),
            events_per_sample=int(data.get("events_per_sample", 0)),
            log=str(data.get("log", "")),
            first_round=int(data.get("first_round", 0)),
            busy=bool(data.get("busy", False)),
        )


@dataclass(frozen=True)
class Cut:
    """Where the budget stopped a run: a whole batch left out (`plan` None), one plan of a batch
    not run (its seed and first round), or a batch trimmed to its `keep` candidates nearest the
    incumbent so that it fits. `run` names the budget and effort it belongs to, so the same
    command replays its own cuts exactly while a longer budget is not held to them."""

    key: RecordKey
    run: str
    plan: tuple[int, int] | None = None
    keep: int | None = None

    @classmethod
    def of_plan(cls, key: RecordKey, run: str, plan: Plan) -> Cut:
        return cls(key, run, (plan.seed, plan.first_round))

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "cut",
            "schema": STORE_SCHEMA,
            "key": self.key.to_dict(),
            "run": self.run,
            "plan": None if self.plan is None else list(self.plan),
            "keep": self.keep,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Cut:
        plan = data["plan"]
        keep = data.get("keep")
        return cls(
            RecordKey.from_dict(data["key"]),
            str(data["run"]),
            None if plan is None else (int(plan[0]), int(plan[1])),
            None if keep is None else int(keep),
        )


@dataclass(frozen=True)
class MatrixRecord:
    """The host's CPU pairs as the topology probe measured them (search.measure.topology): its
    key names the probe's source, compiler and flags, so that a changed probe measures again."""

    key: RecordKey
    matrix: Matrix

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "matrix",
            "schema": STORE_SCHEMA,
            "key": self.key.to_dict(),
            "matrix": self.matrix.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MatrixRecord:
        return cls(RecordKey.from_dict(data["key"]), Matrix.from_dict(data["matrix"]))


_SAMPLE_COLUMNS = tuple(f.name for f in dataclasses.fields(Sample) if f.name != "arm")


def samples_to_columns(samples: Sequence[Sample]) -> dict[str, list[Any]]:
    """One list per field (the arm is the record's): a third of the size of one object each."""
    return {name: [getattr(s, name) for s in samples] for name in _SAMPLE_COLUMNS}


def samples_from_columns(arm: str, columns: Mapping[str, Sequence[Any]]) -> tuple[Sample, ...]:
    lengths = {len(columns[name]) for name in _SAMPLE_COLUMNS if name in columns}
    if len(lengths) > 1:
        raise ValueError(f"sample columns of {arm} differ in length: {sorted(lengths)}")
    count = lengths.pop() if lengths else 0
    rows = (
        {"arm": arm, **{name: columns[name][i] for name in _SAMPLE_COLUMNS if name in columns}}
        for i in range(count)
    )
    return tuple(Sample.from_dict(row) for row in rows)
