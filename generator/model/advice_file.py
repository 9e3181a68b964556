"""The thread advice and the pool's parameters as hspc-result.json holds them (written by
reports/threads.py and reports/result.py), read back into the model's types for
model/result_file.py."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hspc_gen.model import Status
from hspc_gen.model.pool import PoolChoice, PoolTuning
from hspc_gen.model.threads import (
    Capacity,
    CurvePoint,
    PlacementTrial,
    ThreadAdvice,
    ThreadEstimate,
    ThreadEvidence,
    ThreadFailure,
    VersusBest,
)

Doc = Mapping[str, Any]

NOT_KEPT = ThreadAdvice(0, 0, 0, (), (), pinned=False)
"""The estimated advice, which the document does not keep (its recommendation is null: the
header holds the estimate): no threads, not measured."""


def _number(value: object) -> float:
    return math.nan if value is None else float(value)  # type: ignore[arg-type]


def thread_advice(data: Doc | None) -> ThreadAdvice | ThreadFailure:
    """The document's recommendation: measured advice, why it could not be measured, or (null)
    an estimate the document does not keep."""
    if data is None:
        return NOT_KEPT
    if "error" in data:
        return ThreadFailure(Status(data["status"]), str(data["error"]))
    evidence, cpus, work = data.get("evidence"), data["cpus"], data.get("work_ns_per_event")
    return ThreadAdvice(
        producers=int(data["producers"]),
        consumers=int(data["consumers"]),
        consumers_per_producer=int(data["consumers_per_producer"]),
        producer_cpus=tuple(int(c) for c in cpus["producers"]),
        consumer_cpus=tuple(int(c) for c in cpus["consumers"]),
        pinned=bool(data["pinned"]),
        placement=str(data["placement"]),
        taskset=str(data.get("taskset") or ""),
        omp_places=str(data.get("omp_places") or ""),
        evidence=None if evidence is None else _evidence(evidence),
        work_ns=None if work is None else (float(work["producer"]), float(work["consumer"])),
    )


def _evidence(data: Doc) -> ThreadEvidence:
    c, e, resolution = data["capacity"], data["estimate"], data.get("resolution")
    quota = c.get("cpu_quota")
    return ThreadEvidence(
        capacity=Capacity(
            cpus=int(c["cpus"]),
            cores=int(c["cores"]),
            threads_per_core=int(c["threads_per_core"]),
            packages=int(c["packages"]),
            llc_groups=int(c["llc_groups"]),
            cpu_quota=None if quota is None else float(quota),
            core_equivalents=float(c["core_equivalents"]),
            virtual=bool(c["virtual"]),
        ),
        estimate=ThreadEstimate(
            int(e["producers"]), int(e["consumers_per_producer"]), int(e["threads"])
        ),
        tolerance=float(data["tolerance"]),
        margin=float(data["margin"]),
        termination=str(data["termination"]),
        curve=tuple(_point(p) for p in data["curve"]),
        placements=tuple(_trial(t) for t in data.get("placements") or ()),
        rounds=int(data["rounds"]),
        oversubscription=data.get("oversubscription"),
        resolution=None if resolution is None else float(resolution),
        judged=_judged(data.get("equally_good")),
    )


def _judged(listed: list[Doc] | None) -> frozenset[tuple[int, int]] | None:
    """The counts the run judged equally good, as the document lists them: judging again from
    its rounded intervals could tip a count at the line over it."""
    if listed is None:
        return None
    return frozenset((int(g["producers"]), int(g["consumers"])) for g in listed)


def _point(data: Doc) -> CurvePoint:
    low, high = data.get("ci95") or (None, None)
    best = data.get("vs_best")
    return CurvePoint(
        producers=int(data["producers"]),
        consumers=int(data["consumers"]),
        placement=str(data["placement"]),
        events_per_s=_number(data["events_per_s"]),
        ci95_low=_number(low),
        ci95_high=_number(high),
        samples=int(data["samples"]),
        cpu_utilisation=_number(data.get("cpu_utilisation")),
        voluntary_switches_per_s=_number(data.get("voluntary_switches_per_s")),
        migrations_per_s=_number(data.get("migrations_per_s")),
        wait_fraction=_number(data.get("wait_fraction")),
        vs_best=None
        if best is None
        else VersusBest(
            float(best["gain"]), float(best["ci95"][0]), float(best["ci95"][1]), int(best["rounds"])
        ),
    )


def _trial(data: Doc) -> PlacementTrial:
    return PlacementTrial(
        placement=str(data["placement"]),
        producer_cpus=tuple(int(c) for c in data["cpus"]["producers"]),
        consumer_cpus=tuple(int(c) for c in data["cpus"]["consumers"]),
        gain=float(data["gain_over_unpinned"]),
        low=float(data["ci95"][0]),
        high=float(data["ci95"][1]),
    )


def pool_tuning(data: Doc) -> PoolTuning:
    """The pool's parameters, each with its value and why (PoolTuning's fields by name)."""
    options = data["options"]

    def choice(name: str) -> PoolChoice:
        return PoolChoice(int(options[name]["value"]), str(options[name]["why"]))

    return PoolTuning(
        min_consumers=choice("min_consumers"),
        max_consumers=choice("max_consumers"),
        start_consumers=choice("start_consumers"),
        interval_ns=choice("interval_ns"),
        grow_wait_ns=choice("grow_wait_ns"),
        grow_intervals=choice("grow_intervals"),
        basis=str(data["basis"]),
    )
