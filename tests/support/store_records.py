"""Records for the record store's tests: a key (`KEY`), a candidate's parameters (`PARAMS`) and a
record of simulated samples (`record`); test_store's writer process, killed mid-append, imports
them too."""

from __future__ import annotations

import fake_runner as fr
from hspc_gen.model import ChannelParams, Primitive, Status
from hspc_gen.search.records.samples import Candidate, Record, RecordKey

KEY = RecordKey("host-abc123", "src-1", "g++ 12.2.0", "-O2 -march=native")
PARAMS = ChannelParams(128, 4096, 4, 2048, Primitive.futex, 0, 1)


def record(
    arm: str = "c0", key: RecordKey = KEY, n: int = 3, latency: float | None = None
) -> Record:
    sim = fr.Simulated(seed=len(arm))
    samples = tuple(sim.samples(arm, 25.0, n, fr.Cost(latency_ns=latency)))
    cand = Candidate(PARAMS, "two", "placement")
    return Record(
        key, arm, Status.ok, samples, cand, seed=42, events_per_sample=fr.EVENTS_PER_SAMPLE
    )
