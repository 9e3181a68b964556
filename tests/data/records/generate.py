"""Generate the recordings the fake runner replays, from a seeded model of this machine's noise.

    .venv/bin/python tests/data/records/generate.py      (rewrites the .jsonl and truth.json here)

The landscapes are planted (not physics): each dataset has one best point, clear of its neighbours
by 15% or more (about twice the A/A noise floor at 30 rounds), so a test can say "the search found
it". The noise is this machine's, as measured on the shared 2-vCPU KVM guest (measurement.md):
- a per-round factor every arm of a round shares (a neighbour's build slows the whole round);
- per-sample noise that spreads identical code by about ±15-18% across paired rounds;
- preemption: an involuntary context switch in a sample. Blocking primitives lose a little; a
  spinning waiter whose peer was switched out spins for the rest of the peer's slice, so spin
  samples with a switch run 3-7x slower (the heavy tail);
- migrations of unpinned threads, counted but harmless here;
- one broken variant (spinlock at 256 B) that is fastest but fails verification in some samples.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))

import fake_runner as fr
from hspc_gen.model import ChannelParams, Primitive, Status
from hspc_gen.search.records.samples import Candidate, Record, RecordKey, Sample, aa_arm
from hspc_gen.search.records.samples import candidate_id as cid
from hspc_gen.search.records.store import RecordStore, store_file_name
from hspc_gen.search.strategies import exhaustive, stage_two

SEED = 20070326
ROUND_SIGMA = 0.04
BUSY_ROUND_P, BUSY_ROUND_SLOWDOWN = 0.10, (1.10, 1.40)
OWN_SIGMA = {False: 0.065, True: 0.08}  # by "spins"
PREEMPT_P = {False: 0.15, True: 0.08}
PREEMPT_SLOWDOWN = {False: (1.02, 1.25), True: (3.0, 7.0)}
MIGRATION_P = 0.05
BROKEN = ChannelParams(128, 32768, 4, 256, Primitive.spinlock)
BROKEN_UNVERIFIED_P = 0.2


def _is_broken(p: ChannelParams) -> bool:
    """The broken variant fails under every placement."""
    return p.replace(producer_cpu=-1, consumer_cpu=-1) == BROKEN


@dataclass(frozen=True)
class Truth:
    ns: float
    producer_util: float
    consumer_util: float
    spins: bool = False
    pinned: bool = False

    @property
    def cpu_ns(self) -> float:
        return self.ns * (self.producer_util + self.consumer_util)


def _rng(*parts: str) -> np.random.Generator:
    digest = hashlib.sha256("/".join(parts).encode()).digest()
    return np.random.default_rng([SEED, int.from_bytes(digest[:8], "little")])


def round_factors(dataset: str) -> np.ndarray:
    rng = _rng(dataset, "rounds")
    shared = np.exp(rng.normal(0.0, ROUND_SIGMA, fr.RECORDED_ROUNDS))
    busy = rng.random(fr.RECORDED_ROUNDS) < BUSY_ROUND_P
    return np.asarray(shared * np.where(busy, rng.uniform(*BUSY_ROUND_SLOWDOWN), 1.0))


def stream(arm: str, t: Truth, rounds: np.ndarray, unverified_p: float = 0.0) -> tuple[Sample, ...]:
    rng = _rng(arm)
    out = []
    for r, shared in enumerate(rounds):
        base = (
            fr.EVENTS_PER_SAMPLE * t.ns * shared * float(np.exp(rng.normal(0, OWN_SIGMA[t.spins])))
        )
        preempted = rng.random() < PREEMPT_P[t.spins]
        wall = base * (rng.uniform(*PREEMPT_SLOWDOWN[t.spins]) if preempted else 1.0)
        victim = int(rng.integers(0, 2)) if preempted else -1
        # A spinning consumer burns its CPU for the whole wall time, switched-out peer or not.
        consumer_cpu = wall * 0.99 if t.spins else base * t.consumer_util
        out.append(
            Sample(
                arm=arm,
                round=r,
                events=fr.EVENTS_PER_SAMPLE,
                wall_ns=float(round(wall)),
                cpu_ns_producer=float(round(base * t.producer_util)),
                cpu_ns_consumer=float(round(consumer_cpu)),
                nivcsw_producer=int(victim == 0),
                nivcsw_consumer=int(victim == 1),
                migrations=int(not t.pinned and rng.random() < MIGRATION_P),
                verified=bool(rng.random() >= unverified_p),
            )
        )
    return tuple(out)


def stage_one_truth(p: ChannelParams) -> Truth:
    pad = {0: 1.35, 64: 1.15, 128: 1.0}[p.padding_bytes]
    if p.padding_bytes == 0 and p.buffer_bytes <= 512:
        pad += 0.05  # more hand-offs, more false sharing: padding and buffers interact a little
    stack = {0: 1.15, 32768: 1.0, 65536: 1.15}[p.stack_offset_bytes]
    grid = 1 + 0.18 * abs(np.log2(p.buffer_bytes / 1024)) + 0.4 * abs(np.log2(p.buffers / 4))
    return Truth(35.0 * pad * stack * float(grid), producer_util=0.9, consumer_util=0.6)


PRIMITIVE_FACTOR = {
    Primitive.pause_spin: 1.00,
    Primitive.backoff_spin: 1.12,
    Primitive.hybrid: 1.15,
    Primitive.spinlock: 1.20,
    Primitive.futex: 1.25,
    Primitive.condvar: 1.35,
    Primitive.mutex: 1.40,
}
SPINS = {Primitive.pause_spin, Primitive.backoff_spin, Primitive.spinlock}


def stage_two_truth(p: ChannelParams) -> Truth:
    spins = p.primitive in SPINS
    best_size = 512 if spins else 1024
    size = 1 + 0.10 * abs(float(np.log2(p.buffer_bytes / best_size)))
    pinned = p.producer_cpu >= 0
    place = (0.92 if spins else 0.98) if pinned else 1.0
    ns = 45.0 * PRIMITIVE_FACTOR[p.primitive] * size * place
    if _is_broken(p):
        ns = 36.0
    consumer = 0.99 if spins else 0.55
    return Truth(ns, 0.95, consumer, spins=spins, pinned=pinned)


BASELINES = {
    "stage_one": {
        "producer_alone": Truth(20.0, 0.99, 0.0),
        "consumer_alone": Truth(15.0, 0.0, 0.99),
    },
    "stage_two": {
        "producer_alone": Truth(32.0, 0.99, 0.0),
        "consumer_alone": Truth(22.0, 0.0, 0.99),
    },
}


def dataset_records(
    name: str,
    key: RecordKey,
    points: tuple[ChannelParams, ...],
    model: Callable[[ChannelParams], Truth],
    aa_points: tuple[ChannelParams, ...],
) -> tuple[list[Record], dict[str, dict[str, float]]]:
    rounds = round_factors(name)
    records, table = [], {}
    for p in points:
        t, arm = model(p), cid(p)
        bad = BROKEN_UNVERIFIED_P if _is_broken(p) else 0.0
        cand = Candidate(p, stage=name.removeprefix("stage_"), step="model")
        records.append(_record(key, arm, stream(arm, t, rounds, bad), cand))
        table[arm] = {"ns": t.ns, "cpu_ns": t.cpu_ns}
    for p in aa_points:
        arm = aa_arm(cid(p))
        records.append(_record(key, arm, stream(arm, model(p), rounds)))
    for arm, t in BASELINES[name].items():
        records.append(_record(key, arm, stream(f"{name}/{arm}", t, rounds)))
    return records, table


def _record(
    key: RecordKey, arm: str, samples: tuple[Sample, ...], candidate: Candidate | None = None
) -> Record:
    fixed = tuple(Sample(**{**s.to_dict(), "arm": arm}) for s in samples)
    return Record(
        key, arm, Status.ok, fixed, candidate, seed=SEED, events_per_sample=fr.EVENTS_PER_SAMPLE
    )


def main() -> None:
    one = fr.stage_one_space()
    start1 = one.start()
    points1 = exhaustive.grid(one, start1, ("padding", "stack_offset", "buffers"))
    aa1 = tuple(
        p for p in points1 if (p.buffers, p.buffer_bytes) == (start1.buffers, start1.buffer_bytes)
    )
    recs1, truth1 = dataset_records("stage_one", fr.STAGE_ONE_KEY, points1, stage_one_truth, aa1)

    two = fr.stage_two_space()
    start2 = ChannelParams(128, 32768, 4, 1024, Primitive.condvar)
    points2 = tuple(stage_two.joint_points(two, start2, stage_two.Options(radius=3)))
    aa2 = tuple(p for p in points2 if p.producer_cpu < 0)
    recs2, truth2 = dataset_records("stage_two", fr.STAGE_TWO_KEY, points2, stage_two_truth, aa2)

    path = fr.RECORDS_DIR / store_file_name(fr.FINGERPRINT)
    path.unlink(missing_ok=True)
    store = RecordStore(fr.RECORDS_DIR, fr.FINGERPRINT)
    store.extend(sorted(recs1, key=lambda r: r.arm) + sorted(recs2, key=lambda r: r.arm))

    broken = sorted(cid(p) for p in points2 if _is_broken(p))

    def best(table: dict[str, dict[str, float]], field: str) -> str:
        return min((a for a in table if a not in broken), key=lambda a: table[a][field])

    planted = {
        "stage_one": {"throughput": best(truth1, "ns")},
        "stage_two": {
            "throughput": best(truth2, "ns"),
            "efficiency": best(truth2, "cpu_ns"),
            "broken": ",".join(broken),
        },
    }
    body = {"stage_one": truth1, "stage_two": truth2, "planted": planted}
    fr.TRUTH_FILE.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{path}: {len(store.records())} records; {fr.TRUTH_FILE}")


if __name__ == "__main__":
    main()
