"""The thread-count search on this host, for real: the tuned channel's benchmark binary measures
per-event costs (producer alone, consumer alone), then thread configurations, and the noise-aware
Thread Reinforcer (`recommend`) or an exhaustive sweep reads the measurements."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hspc_gen import __version__
from hspc_gen.emit import json_text, write_atomic
from hspc_gen.host import Host
from hspc_gen.model import ChannelParams
from hspc_gen.search import stats
from hspc_gen.search.strategies.base import make_batch
from hspc_gen.search.threads.capacity import TopologyShape, WorkCost
from hspc_gen.search.threads.harness import HarnessMeasure
from hspc_gen.search.threads.measure import Config, ThreadSample
from hspc_gen.search.threads.recommend import Recommendation, recommend
from hspc_gen.search.toolchain import RealToolchain
from hspc_gen.target import Target

THREAD_SEED = 5  # apart from the channel search's seeds
THREAD_SAMPLE_SECONDS = 0.02
COST_ROUNDS = 5
SWEEP_ROUNDS = 10
THREAD_MIN_EVENTS, THREAD_MAX_EVENTS = 20_000, 20_000_000


@dataclass(frozen=True)
class Bench:
    """The tuned channel's benchmark binary and what a sample should carry."""

    measure: HarnessMeasure
    cost: WorkCost
    shape: TopologyShape


def _events(cost: WorkCost) -> int:
    per_event_ns = max(cost.producer_ns, cost.consumer_ns, 1.0)
    return int(
        min(THREAD_MAX_EVENTS, max(THREAD_MIN_EVENTS, THREAD_SAMPLE_SECONDS * 1e9 / per_event_ns))
    )


def prepare(target: Target, host: Host, winner: ChannelParams, toolchain: RealToolchain) -> Bench:
    """Build (or reuse) the winner's binary and measure one pair's per-event costs."""
    work = target.workload
    batch = make_batch("threads", "threads", [winner], winner, 1)
    executable = toolchain.executable(batch, work)
    variant = batch.incumbent.id
    probe = HarnessMeasure(executable, variant, work, THREAD_MIN_EVENTS, THREAD_SEED)
    cost = _measure_cost(probe)
    measure = HarnessMeasure(executable, variant, work, _events(cost), THREAD_SEED)
    return Bench(measure, cost, TopologyShape.from_host(host))


def _measure_cost(probe: HarnessMeasure) -> WorkCost:
    """Per-event CPU time of each side, from the pair's own samples (work plus the channel)."""
    samples = probe([Config(1, 1)], COST_ROUNDS)[Config(1, 1)]
    producer = float(np.median([s.sample.cpu_ns_producer / s.sample.events for s in samples]))
    consumer = float(np.median([s.sample.cpu_ns_consumer / s.sample.events for s in samples]))
    floor = 1.0  # ns: a side that does nothing still costs something to move an event
    return WorkCost(max(producer, floor), max(consumer, floor))


def recommend_threads(target: Target, bench: Bench) -> Recommendation:
    return recommend(
        bench.shape,
        bench.cost,
        bench.measure,
        producers=target.threads.producers,
        consumers=target.threads.consumers,
        pin=target.constraints.pin_threads,
    )


@dataclass(frozen=True)
class SweepPoint:
    config: Config
    events_per_s: stats.Figure
    recommended: bool


def sweep(bench: Bench, recommended: Config | None, max_groups: int) -> tuple[SweepPoint, ...]:
    """Every producer count 1..max_groups (each with the cost's consumers per producer), and the
    recommendation, in the same interleaved rounds: the ground truth to check it against."""
    k = bench.cost.consumers_per_producer()
    configs = [Config(n, n * k) for n in range(1, max_groups + 1)]
    if recommended is not None and recommended not in configs:
        configs.append(recommended)
    measured = bench.measure(configs, SWEEP_ROUNDS)
    return tuple(SweepPoint(c, _rate(measured[c]), c == recommended) for c in configs)


def _rate(samples: Sequence[ThreadSample]) -> stats.Figure:
    rates = [s.sample.events_per_second for s in samples]
    if not rates:
        return stats.Figure(math.nan, math.nan, math.nan, 0)
    values = np.array(rates, dtype=float)
    low, high = stats.bootstrap_interval(values, stats.median)
    return stats.Figure(float(np.median(values)), low, high, len(rates))


def default_max_groups(host: Host) -> int:
    """Groups of one producer and its consumers up to one per usable CPU (twice the CPUs in
    threads: oversubscription is part of the curve), and at least three, so even a small host
    shows a point past its peak."""
    return max(3, len(host.allowed_cpus))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _wisdom_path(cache_dir: Path, key: dict[str, object]) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return cache_dir / "threads" / f"{digest}.json"


def recommendation_for(
    target: Target, host: Host, winner: ChannelParams, toolchain: RealToolchain
) -> dict[str, object]:
    """The measured recommendation for the tuned channel, as JSON; kept like FFTW's wisdom under
    the cache, keyed by everything it depends on, so a re-run with the same inputs reuses it
    (and writes the same header) instead of measuring again."""
    w = target.workload
    key: dict[str, object] = {
        "fingerprint": host.fingerprint,
        "channel": winner.as_dict(),
        "workload": target.workload.model_dump(mode="json"),
        "threads": target.threads.model_dump(mode="json"),
        "pin_threads": str(target.constraints.pin_threads),
        "event_bytes": target.event.size,
        "version": __version__,
        # What the fingerprint leaves out but the search depends on: where we may run, and the
        # app's own code as it is now.
        "allowed_cpus": list(host.allowed_cpus),
        "cpu_quota": host.cpu_quota,
        "sources": [_digest(p) for p in (w.producer_source, w.consumer_source) if p],
    }
    path = _wisdom_path(toolchain.cache_dir, key)
    if path.exists():
        cached: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
        return cached
    bench = prepare(target, host, winner, toolchain)
    advice = recommend_threads(target, bench)
    body = advice_json(advice, bench)
    write_atomic(path, json_text(body))
    return body


def advice_json(advice: Recommendation, bench: Bench) -> dict[str, object]:
    """The recommendation's JSON with the per-event work it started from."""
    body = advice.to_json()
    cost = bench.cost
    body["work_ns_per_event"] = {"producer": cost.producer_ns, "consumer": cost.consumer_ns}
    return body
