"""What the search asks of the run stage, and what it answers: a `Plan` of blocked, seeded
rounds in, a `RunResult` (samples, or a failure as a status) out."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hspc_gen.model import Status
from hspc_gen.search.records.samples import (
    Candidate,
    Record,
    RecordKey,
    Sample,
    aa_arm,
    latency_arm,
)

SAMPLE_SECONDS = 0.015
"""Samples are sized to last about this long (equal work per sample, from a probe)."""


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
    sample_seconds: float = SAMPLE_SECONDS
    """How long one sample should last: what the run stage's watchdog measures a hang against."""

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
    sample_seconds: float = SAMPLE_SECONDS,
    latency: bool = False,
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
    if latency:  # each candidate's push-to-pop time under a paced load, beside its throughput
        arms += [latency_arm(i) for i in ids if i in keep]
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
        sample_seconds=sample_seconds,
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
    busy: bool = False
    """Other processes used the machine while it ran (`search.measure.load`)."""
    remeasured: bool = False
    """Measured although recorded: the record was taken beside other load, and this run began
    on a quiet machine."""
    causes: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Why an arm failed, in the harness's words (the signal, the hang, the exit(), and which
    side's code was running), for every arm in `arm_status` that it could name."""


Runner = Callable[[Plan], RunResult]
"""The run stage as the search sees it: a plan in, its samples (or its failure) out."""


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
                log=result.causes.get(arm, result.log) if status is not Status.ok else "",
                busy=result.busy,
            )
        )
    return tuple(out)
