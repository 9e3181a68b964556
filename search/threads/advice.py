"""The thread search's recommendation as the model's `ThreadAdvice`: what leaves the search."""

from __future__ import annotations

from hspc_gen.model.threads import (
    CurvePoint,
    PlacementTrial,
    ThreadAdvice,
    ThreadEstimate,
    ThreadEvidence,
    VersusBest,
)
from hspc_gen.search.threads import placement
from hspc_gen.search.threads.capacity import WorkCost
from hspc_gen.search.threads.measure import Point
from hspc_gen.search.threads.recommend import Evidence, Recommendation


def curve_point(point: Point) -> CurvePoint:
    return CurvePoint(
        producers=point.config.producers,
        consumers=point.config.consumers,
        placement=point.config.placement,
        events_per_s=point.events_per_s,
        ci95_low=point.ci95_low,
        ci95_high=point.ci95_high,
        samples=point.samples,
        cpu_utilisation=point.cpu_utilisation,
        voluntary_switches_per_s=point.voluntary_switches_per_s,
        migrations_per_s=point.migrations_per_s,
        wait_fraction=point.wait_fraction,
        vs_best=None if (v := point.vs_best) is None else VersusBest(v.gain, v.low, v.high, v.n),
    )


def trial(measured: placement.PlacementTrial) -> PlacementTrial:
    config = measured.config
    return PlacementTrial(
        config.placement,
        config.producer_cpus,
        config.consumer_cpus,
        measured.gain,
        measured.low,
        measured.high,
    )


def evidence(found: Evidence) -> ThreadEvidence:
    est = found.estimate
    return ThreadEvidence(
        capacity=found.capacity,
        estimate=ThreadEstimate(est.producers, est.consumers_per_producer, est.threads),
        tolerance=found.tolerance,
        margin=found.margin,
        termination=found.termination,
        curve=tuple(curve_point(p) for p in found.curve),
        placements=tuple(trial(t) for t in found.placements),
        rounds=found.rounds,
        oversubscription=found.oversubscription,
        resolution=found.resolution,
    )


def advice(rec: Recommendation, cost: WorkCost | None = None) -> ThreadAdvice:
    """The measured recommendation, with the per-event work it started from."""
    return ThreadAdvice(
        producers=rec.producers,
        consumers=rec.consumers,
        consumers_per_producer=rec.consumers_per_producer,
        producer_cpus=rec.producer_cpus,
        consumer_cpus=rec.consumer_cpus,
        pinned=rec.pinned,
        placement=rec.placement,
        taskset=rec.taskset,
        omp_places=rec.omp_places,
        evidence=evidence(rec.evidence),
        work_ns=None if cost is None else (cost.producer_ns, cost.consumer_ns),
    )
