"""What the search exchanges with the build and run stages: candidates, plans, samples, records.

Every type here is a frozen dataclass with a plain-JSON form (`to_dict` / `from_dict`), because the
same objects are written to the record store, replayed by the fake runner and shown in reports.
The store holds two kinds of line, each stamped with SCHEMA_VERSION: a `Record` (the samples of
one arm from one plan) and a `Cut` (where the budget stopped a run).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hspc_gen.model import PARAM_NAMES, ChannelParams, Primitive, Status

BASELINE_ARMS: tuple[str, ...] = (
    "producer_alone",
    "consumer_alone",
    "p0_parallel",
    "optimal",
    "achievable",
    "upper_bound",
)
"""Reference programs timed alongside the candidates (the paper's limit lines and ladder rungs)."""

SCHEMA_VERSION = 2
"""The record store's line format. Version 1 (lines without a version) keyed the work per event
differently and kept budget cuts as fake arms: its lines are reported and measured again."""

AA_PREFIX = "aa:"
"""An A/A arm is a second, independently timed copy of a candidate: `aa:<candidate id>`."""


def aa_arm(candidate_id: str) -> str:
    return AA_PREFIX + candidate_id


def is_baseline(arm: str) -> bool:
    return arm in BASELINE_ARMS


def is_aa(arm: str) -> bool:
    return arm.startswith(AA_PREFIX)


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
    voluntary_switches: int = 0
    """Voluntary context switches of every thread (the thread search's fan-out samples)."""
    wait_ns: float = 0.0
    """Time every thread spent waiting in the channel (the thread search's fan-out samples)."""

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
            voluntary_switches=int(data.get("voluntary_switches", 0)),
            wait_ns=float(data.get("wait_ns", 0.0)),
        )


def params_to_dict(params: ChannelParams) -> dict[str, int | str]:
    return params.as_dict()


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
    )


def candidate_id(params: ChannelParams) -> str:
    """A short id that depends on the parameter values only (stable across runs and hosts)."""
    canonical = json.dumps(params.as_dict(), sort_keys=True, separators=(",", ":"))
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
class Plan:
    """What one benchmark binary runs: blocked rounds, each a seeded permutation of the arms.

    `order[i]` is the arm order of round `first_round + i`; round numbers are global so that the
    chunks of a raced plan pair up. The incumbent is the reference of every paired ratio and also
    gets the A/A copy. Build one with `make_plan`.
    """

    batch: tuple[Candidate, ...]
    baselines: tuple[str, ...]
    rounds: int
    events_per_sample: int
    seed: int
    order: tuple[tuple[str, ...], ...]
    incumbent: str = ""
    first_round: int = 0

    @property
    def candidate_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.batch)

    @property
    def aa(self) -> str:
        return aa_arm(self.incumbent)

    def round_numbers(self) -> range:
        return range(self.first_round, self.first_round + self.rounds)

    def candidate(self, arm: str) -> Candidate:
        for c in self.batch:
            if c.id == arm:
                return c
        raise KeyError(arm)


def make_plan(
    batch: Sequence[Candidate],
    *,
    incumbent: str,
    baselines: Sequence[str],
    rounds: int,
    events_per_sample: int,
    seed: int,
    first_round: int = 0,
    live: Iterable[str] | None = None,
) -> Plan:
    """A plan whose rounds each run every live candidate, the baselines and the A/A copy once.

    The order of round r depends only on (seed, r), so a raced plan cut into chunks orders each
    round exactly as the uncut plan would. `live` restricts the candidates (racing drops losers);
    the incumbent always stays.
    """
    ids = [c.id for c in batch]
    if incumbent not in ids:
        raise ValueError(f"incumbent {incumbent} is not in the batch")
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate candidates in a batch")
    keep = set(ids) if live is None else set(live) | {incumbent}
    arms = [i for i in ids if i in keep] + list(baselines) + [aa_arm(incumbent)]
    order = tuple(_round_order(arms, seed, r) for r in range(first_round, first_round + rounds))
    return Plan(
        batch=tuple(batch),
        baselines=tuple(baselines),
        rounds=rounds,
        events_per_sample=events_per_sample,
        seed=seed,
        order=order,
        incumbent=incumbent,
        first_round=first_round,
    )


def _round_order(arms: Sequence[str], seed: int, round_number: int) -> tuple[str, ...]:
    rng = np.random.default_rng([seed, round_number])
    # Sorting first makes the permutation independent of how the caller listed the arms.
    ordered = sorted(arms)
    return tuple(ordered[i] for i in rng.permutation(len(ordered)))


@dataclass(frozen=True)
class RunResult:
    """What the run stage returns for one plan (TVM style: failures are a status plus a log)."""

    status: Status
    samples: tuple[Sample, ...]
    log: str = ""
    arm_status: Mapping[str, Status] = dataclasses.field(default_factory=dict)
    """Per-arm failures within an otherwise finished run (e.g. one variant's wrong_answer)."""
    replayed: bool = False
    """True when the answer came from the record store (or a recorded cut), not a measurement."""


Runner = Callable[[Plan], RunResult]
"""The run stage as the search sees it: a plan in, its samples (or its failure) out."""


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "samples",
            "schema": SCHEMA_VERSION,
            "first_round": self.first_round,
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
        )


@dataclass(frozen=True)
class Cut:
    """Where the budget stopped a run: a whole batch left out (`plan` None), or one plan of a
    batch not run (its seed and first round). `run` names the budget and effort it belongs to, so
    the same command replays its own cuts exactly while a longer budget is not held to them."""

    key: RecordKey
    run: str
    plan: tuple[int, int] | None = None

    @classmethod
    def of_plan(cls, key: RecordKey, run: str, plan: Plan) -> Cut:
        return cls(key, run, (plan.seed, plan.first_round))

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "cut",
            "schema": SCHEMA_VERSION,
            "key": self.key.to_dict(),
            "run": self.run,
            "plan": None if self.plan is None else list(self.plan),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Cut:
        plan = data["plan"]
        return cls(
            RecordKey.from_dict(data["key"]),
            str(data["run"]),
            None if plan is None else (int(plan[0]), int(plan[1])),
        )


def entry_from_dict(data: Mapping[str, Any]) -> Record | Cut:
    """One line of the record store; ValueError for a line of another format version."""
    version = data.get("schema", 1)
    if version != SCHEMA_VERSION:
        raise ValueError(f"record format {version}, this hspc-gen reads {SCHEMA_VERSION}")
    kinds: dict[str, Callable[[Mapping[str, Any]], Record | Cut]] = {
        "samples": Record.from_dict,
        "cut": Cut.from_dict,
    }
    return kinds[str(data["kind"])](data)


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


def records_from_run(key: RecordKey, plan: Plan, result: RunResult) -> tuple[Record, ...]:
    """Split a run's samples into one record per arm of the plan, in a stable (sorted) order."""
    by_arm: dict[str, list[Sample]] = {}
    for s in result.samples:
        by_arm.setdefault(s.arm, []).append(s)
    arms = sorted({a for rnd in plan.order for a in rnd} | set(by_arm))
    ids = set(plan.candidate_ids)
    out = []
    for arm in arms:
        status = result.arm_status.get(arm, result.status)
        out.append(
            Record(
                key=key,
                arm=arm,
                status=status,
                samples=tuple(sorted(by_arm.get(arm, []), key=lambda s: s.round)),
                candidate=plan.candidate(arm) if arm in ids else None,
                seed=plan.seed,
                events_per_sample=plan.events_per_sample,
                first_round=plan.first_round,
                log=result.log if status is not Status.ok else "",
            )
        )
    return tuple(out)
