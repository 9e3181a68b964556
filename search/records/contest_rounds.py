"""`hspc-gen bench`'s rounds as records: each round, every contender's sample or failure, kept in
the host's record store (`RoundRecord`) under the contest's key.

A re-run with the same inputs (host, contest sources and flags, compiler, work, CPUs) replays
the rounds recorded instead of measuring them, as the search replays its plans, and so writes
the same hspc-bench.json; asked for more rounds than were recorded, it replays those and runs
only the rest (`rounds` then `record`). A round is replayed only when it ran the same contenders
with the same events per sample: the probe round is replayed too, so the events it sizes agree.
Rounds measured beside other load are kept as such, and a run that starts on a quiet machine
measures them again (as the search does with its samples).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hspc_gen.model import Status
from hspc_gen.search.records.entries import ArmRound, RoundRecord
from hspc_gen.search.records.samples import RecordKey, Sample
from hspc_gen.search.records.store import RecordStore

Failed = Mapping[str, tuple[Status, str]]  # arm -> status, cause


def round_key(fingerprint: str, compiler: str, cxxflags: str, *inputs: str) -> RecordKey:
    """What a round is valid for: the host, the compiler and the user's flags, and a digest of
    `inputs` (the contest's source hash, and how its plan lines run: the work and the CPUs)."""
    digest = hashlib.sha256("\0".join(inputs).encode()).hexdigest()[:16]
    return RecordKey(fingerprint, digest, compiler, cxxflags)


@dataclass(frozen=True)
class Replayed:
    """The recorded rounds from `first` on, in order, and what they hold."""

    first: int
    records: tuple[RoundRecord, ...]

    @property
    def count(self) -> int:
        return len(self.records)

    @property
    def samples(self) -> tuple[Sample, ...]:
        return tuple(a.sample for r in self.records for a in r.arms if a.sample is not None)

    @property
    def failed(self) -> dict[str, tuple[Status, str]]:
        """Each contender that failed in a recorded round, as it first failed."""
        failed: dict[str, tuple[Status, str]] = {}
        for arm in (a for r in self.records for a in r.arms if a.status is not Status.ok):
            failed.setdefault(arm.arm, (arm.status, arm.cause))
        return failed


def rounds(
    store: RecordStore,
    key: RecordKey,
    events: Mapping[str, int],
    first: int,
    count: int,
    *,
    quiet: bool = False,
) -> Replayed:
    """The rounds `first`.. (at most `count`) recorded under `key` with the contenders and
    events of `events`, up to the first one missing; of a round recorded twice, the latest. A
    `quiet` run takes no round measured beside other load: from there on it measures again."""
    plan = tuple(sorted(events.items()))
    usable = (r for r in store.keyed(RoundRecord, key) if not (quiet and r.busy))
    latest = {r.round: r for r in usable if r.plan == plan}
    found: list[RoundRecord] = []
    for number in range(first, first + count):
        if number not in latest:
            break
        found.append(latest[number])
    return Replayed(first, tuple(found))


def record(  # noqa: PLR0917 (one round's plan and outcome, as the contest has them)
    store: RecordStore,
    key: RecordKey,
    events: Mapping[str, int],
    first: int,
    count: int,
    samples: Sequence[Sample],
    failed: Failed,
    *,
    busy: bool = False,
) -> tuple[RoundRecord, ...]:
    """Append rounds `first`.. as records: every contender of `events`, with its sample of the
    round, or its failure (a failure names every round it ran in), and whether other load ran
    beside them."""
    by_round = {(s.round, s.arm): s for s in samples}
    made = []
    for number in range(first, first + count):
        arms = tuple(
            _arm_round(arm, n, failed.get(arm), by_round.get((number, arm)))
            for arm, n in sorted(events.items())
        )
        made.append(RoundRecord(key, number, arms, busy))
    for made_round in made:
        store.append(made_round)
    return tuple(made)


def _arm_round(
    arm: str, events: int, failure: tuple[Status, str] | None, sample: Sample | None
) -> ArmRound:
    if failure is not None:
        return ArmRound(arm, events, failure[0], cause=failure[1])
    return ArmRound(arm, events, Status.ok, sample)
