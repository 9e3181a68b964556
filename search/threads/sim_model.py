"""The physics of the simulated host: a configuration's noise-free operating point.

Each producer group runs at the pace of its slower side (the faster side waits in the channel);
every thread computes its per-event work plus a hand-off whose cost grows with the distance to its
partner, and sleeps wait_ratio of its compute on blocking work. The compute speed of a thread
comes from the CPUs: a core to itself, SMT_YIELD more for a busy sibling pair, time-slicing with
an oversubscription cost beyond the CPUs, the cgroup quota as a cap on CPU time. The groups then
contend as the Universal Scalability Law says: X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1)).
Speed and load depend on each other; the operating point is their fixed point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hspc_gen.search.threads.capacity import SMT_YIELD, TopologyShape
from hspc_gen.search.threads.measure import Config

# Hand-off cost relative to two cores sharing a last-level cache (the guide's cache-line transfer
# latencies: siblings 4-10 ns, same L3 16-51, across L3 84-154, across sockets 108-197).
SIBLING_HANDOFF = 0.25
CROSS_LLC_HANDOFF = 3.0
CROSS_SOCKET_HANDOFF = 4.0
OVERSUBSCRIPTION_COST = 0.04
"""Speed lost per extra runnable thread per CPU (switches, cache refills)."""
IMBALANCE = 0.97
"""Oversubscribed by a non-multiple of the CPUs, some threads share more (Bogner et al.)."""
SHUFFLE = 0.98
"""Fewer runnable threads than cores: the OS keeps moving them (Bogner et al.: pinning won 1.4%)."""
THROTTLE_COST = 0.05
"""Most speed lost to CFS throttling beyond the quota: a throttled thread stalls its partner."""
CPU0_SPEED = 0.95
"""CPU 0 takes most interrupts: avoiding it won 2-4% (Bogner et al.)."""
_ITERATIONS = 400


@dataclass(frozen=True)
class SimWorkload:
    """One case of the workload matrix: per-event work and how the groups contend."""

    name: str
    producer_ns: float
    consumer_ns: float
    wait_ratio: float = 0.0  # blocking time per unit of compute, both sides
    sigma: float = 0.01  # USL contention (an application lock the groups share)
    kappa: float = 0.0002  # USL coherency (shared data bouncing between caches)
    handoff_ns: float = 5.0  # per event, partners sharing a last-level cache


@dataclass(frozen=True)
class Operating:
    events_per_s: float
    producer_cpus: float  # CPU seconds per second spent by all producers
    consumer_cpus: float
    runnable: float  # threads wanting a CPU, on average
    idle_fraction: float  # share of thread time waiting in the channel or on the shared lock


def usl_factor(w: SimWorkload, groups: int) -> float:
    return 1.0 + w.sigma * (groups - 1) + w.kappa * groups * (groups - 1)


def operating_point(shape: TopologyShape, w: SimWorkload, config: Config) -> Operating:
    if config.pinned:
        return _pinned(shape, w, config)
    return _unpinned(shape, w, config)


def _spread_handoff(shape: TopologyShape, threads: int) -> float:
    """Unpinned, the OS spreads threads over the caches and packages, so a share of partners sit
    apart: with n domains in use, (n-1)/n of them."""
    llcs = min(len(shape.llc_groups()), threads)
    packages = min(shape.packages, threads)
    apart_llc = 1.0 - 1.0 / llcs
    apart_package = 1.0 - 1.0 / packages
    return (
        1.0
        + (CROSS_LLC_HANDOFF - 1.0) * apart_llc
        + (CROSS_SOCKET_HANDOFF - CROSS_LLC_HANDOFF) * apart_package
    )


def _pool_speed(shape: TopologyShape, runnable: float, threads: int) -> float:
    """Compute speed per runnable thread when the OS spreads them: cores first, then siblings,
    then time-slicing; the quota caps the CPU time all of them get."""
    cores, cpus = shape.cores, len(shape.places)
    if runnable <= cores:
        speed = 1.0 - (1.0 - SHUFFLE) * (1.0 - runnable / cores)
    elif runnable <= cpus:
        speed = (cores + SMT_YIELD * (runnable - cores)) / runnable
    else:
        speed = (cores + SMT_YIELD * (cpus - cores)) / runnable
        speed /= 1.0 + OVERSUBSCRIPTION_COST * (runnable / cpus - 1.0)
        # One thread more on some CPUs than on others matters less the more threads share each.
        speed *= 1.0 - (1.0 - IMBALANCE) * cpus / threads if threads % cpus else 1.0
    return speed * _throttle(shape, min(runnable, cpus))


def _quota_share(shape: TopologyShape, busy: float) -> float:
    quota = shape.cpu_quota
    return 1.0 if quota is None or busy <= quota else quota / busy


def _throttle(shape: TopologyShape, busy: float) -> float:
    quota = shape.cpu_quota
    if quota is None or busy <= quota:
        return 1.0
    return quota / busy * (1.0 - THROTTLE_COST * min(1.0, (busy - quota) / quota))


def _unpinned(shape: TopologyShape, w: SimWorkload, config: Config) -> Operating:
    k = np.array(config.group_sizes(), dtype=float)
    handoff = w.handoff_ns * _spread_handoff(shape, config.threads)
    ep, ec = w.producer_ns + handoff, w.consumer_ns + handoff
    usl = usl_factor(w, config.producers)
    speed = 1.0
    for _ in range(_ITERATIONS):
        rho_p = 1.0 / (ep / speed + w.wait_ratio * w.producer_ns)
        rho_c = 1.0 / (ec / speed + w.wait_ratio * w.consumer_ns)
        groups = np.minimum(rho_p, k * rho_c) / usl
        runnable = float(groups.sum()) * (ep + ec) / speed
        new = _pool_speed(shape, runnable, config.threads)
        if abs(new - speed) < 1e-12:
            break
        speed = 0.5 * speed + 0.5 * new
    events = float(groups.sum())
    idle = config.producers - float((groups / rho_p).sum()) + config.consumers
    idle -= float((groups / rho_c).sum())
    # CPU time actually had: no more than the CPUs, nor than the quota.
    share = min(1.0, len(shape.places) / runnable) if runnable > 0 else 1.0
    share = min(share, _quota_share(shape, runnable * share))
    return Operating(
        events_per_s=events * 1e9,
        producer_cpus=events * ep / speed * share,
        consumer_cpus=events * ec / speed * share,
        runnable=runnable,
        idle_fraction=max(0.0, idle) / config.threads,
    )


def _distance(shape: TopologyShape, a: int, b: int) -> float:
    pa, pb = shape.place(a), shape.place(b)
    if pa.core == pb.core:
        return SIBLING_HANDOFF if a != b else 0.0
    if pa.llc == pb.llc:
        return 1.0
    return CROSS_LLC_HANDOFF if pa.package == pb.package else CROSS_SOCKET_HANDOFF


@dataclass(frozen=True)
class _Threads:
    """Per-thread arrays of a pinned configuration: producers first, then consumers."""

    cpu: np.ndarray
    core: np.ndarray
    core_of_cpu: np.ndarray  # indexed by CPU number; -1 for CPUs not allowed
    group: np.ndarray
    producer: np.ndarray  # bool
    compute: np.ndarray  # ns per event, hand-off included
    wait: np.ndarray  # ns per event asleep on blocking work
    share: np.ndarray  # events of its group this thread handles: 1 for producers, 1/k consumers


def _threads(shape: TopologyShape, w: SimWorkload, config: Config) -> _Threads:
    p_cpu, c_cpu = config.producer_cpus, config.consumer_cpus
    groups = [config.group_of(j) for j in range(config.consumers)]
    sizes = config.group_sizes()
    c_dist = [_distance(shape, c_cpu[j], p_cpu[g]) for j, g in enumerate(groups)]
    p_dist = [
        float(np.mean([d for d, g in zip(c_dist, groups, strict=True) if g == i]))
        for i in range(config.producers)
    ]
    base = [w.producer_ns] * config.producers + [w.consumer_ns] * config.consumers
    dist = np.array(p_dist + c_dist)
    cpus = np.array(p_cpu + c_cpu)
    return _Threads(
        cpu=cpus,
        core=np.array([shape.place(int(c)).core for c in cpus]),
        core_of_cpu=np.array(
            [shape.place(c).core if c in shape.cpus else -1 for c in range(max(shape.cpus) + 1)]
        ),
        group=np.array(list(range(config.producers)) + groups),
        producer=np.arange(config.threads) < config.producers,
        compute=np.array(base) + w.handoff_ns * dist,
        wait=w.wait_ratio * np.array(base),
        share=np.array([1.0] * config.producers + [1.0 / sizes[g] for g in groups]),
    )


def _pinned(shape: TopologyShape, w: SimWorkload, config: Config) -> Operating:
    t = _threads(shape, w, config)
    usl = usl_factor(w, config.producers)
    speed = np.ones(config.threads)
    for _ in range(_ITERATIONS):
        rho = 1.0 / (t.compute / speed + t.wait)
        group_rate = np.full(config.producers, np.inf)
        np.minimum.at(group_rate, t.group, rho / t.share)
        rate = group_rate[t.group] * t.share / usl
        occupancy = rate * t.compute / speed
        new = _cpu_speed(shape, t, occupancy)
        if float(np.max(np.abs(new - speed))) < 1e-12:
            break
        speed = 0.5 * speed + 0.5 * new
    load = np.bincount(t.cpu, weights=occupancy)
    busy = occupancy / np.maximum(1.0, load[t.cpu])
    busy *= _quota_share(shape, float(busy.sum()))
    idle = float(np.sum(1.0 - rate / rho))
    return Operating(
        events_per_s=float(group_rate.sum()) / usl * 1e9,
        producer_cpus=float(busy[t.producer].sum()),
        consumer_cpus=float(busy[~t.producer].sum()),
        runnable=float(occupancy.sum()),
        idle_fraction=max(0.0, idle) / config.threads,
    )


def _cpu_speed(shape: TopologyShape, t: _Threads, occupancy: np.ndarray) -> np.ndarray:
    load = np.bincount(t.cpu, weights=occupancy, minlength=t.core_of_cpu.size)
    allowed = t.core_of_cpu >= 0
    core_load = np.bincount(t.core_of_cpu[allowed], weights=load[allowed])
    mine = load[t.cpu]
    sibling = np.minimum(1.0, core_load[t.core] - mine)
    speed = (1.0 - (1.0 - (1.0 + SMT_YIELD) / 2.0) * sibling) / np.maximum(1.0, mine)
    speed /= 1.0 + OVERSUBSCRIPTION_COST * np.maximum(0.0, mine - 1.0)
    speed = np.where(t.cpu == 0, speed * CPU0_SPEED, speed)
    return np.asarray(speed * _throttle(shape, float(np.minimum(1.0, load).sum())))
