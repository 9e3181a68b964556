"""The physics of the simulated host: a configuration's noise-free operating point.

Each producer group runs at the pace of its slower side (the faster side waits in the channel);
every thread computes its per-event work plus a hand-off whose cost grows with the distance to its
partner, and sleeps wait_ratio of its compute on blocking work. A thread waiting in the channel
spins `spin` of that time (it wants a CPU and gets no work done) and sleeps the rest. The groups
contend as the Universal Scalability Law says: X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1)).

The CPUs are shared out as a pool (`pool.py`): each thread wants a CPU for its share of the time,
independently, so a count whose average demand just fills the CPUs still leaves them idle at
moments, and more threads than CPUs fill those moments: throughput rises past the saturation
point when, and only when, threads sleep. Speed and load depend on each other; the operating point
is their fixed point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hspc_gen.model.shape import SMT_YIELD, TopologyShape
from hspc_gen.search.threads.measure import Config
from threadsim.pool import OVERSUBSCRIPTION_COST, Pool, share

# Hand-off cost relative to two cores sharing a last-level cache (the guide's cache-line transfer
# latencies: siblings 4-10 ns, same L3 16-51, across L3 84-154, across sockets 108-197).
SIBLING_HANDOFF = 0.25
CROSS_LLC_HANDOFF = 3.0
CROSS_SOCKET_HANDOFF = 4.0
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
    spin: float = 0.0  # share of a wait in the channel spent spinning (wanting a CPU)


@dataclass(frozen=True)
class Operating:
    events_per_s: float
    producer_cpus: float  # CPU seconds per second spent by all producers
    consumer_cpus: float
    runnable: float  # threads wanting a CPU, on average
    idle_fraction: float  # share of thread time waiting in the channel or on the shared lock


def usl_factor(w: SimWorkload, groups: int) -> float:
    return 1.0 + w.sigma * (groups - 1) + w.kappa * groups * (groups - 1)


def operating_point(
    shape: TopologyShape,
    w: SimWorkload,
    config: Config,
    *,
    hidden_smt: bool = False,
    multiplexed: bool = True,
) -> Operating:
    """`shape` is the machine as it is (its real cores); `hidden_smt` says the OS does not
    know which of its CPUs are siblings (a guest whose sysfs hides them); `multiplexed` False
    shares the CPUs as issue 5's fluid model did (pool.py)."""
    if config.pinned:
        return _pinned(shape, w, config)
    return _unpinned(
        shape, w, config, Pool(len(shape.places), shape.cores, hidden_smt, multiplexed)
    )


def apart_shares(shape: TopologyShape, threads: int) -> tuple[float, float]:
    """Unpinned, the OS spreads threads over the caches and packages, so a share of partners sit
    apart: with n domains in use, (n-1)/n of them (other cache, other package)."""
    llcs = min(len(shape.llc_groups()), threads)
    packages = min(shape.packages, threads)
    return 1.0 - 1.0 / llcs, 1.0 - 1.0 / packages


def spread_handoff(shape: TopologyShape, threads: int) -> float:
    """The mean hand-off cost of unpinned partners, relative to two cores sharing a cache."""
    apart_llc, apart_package = apart_shares(shape, threads)
    return (
        1.0
        + (CROSS_LLC_HANDOFF - 1.0) * apart_llc
        + (CROSS_SOCKET_HANDOFF - CROSS_LLC_HANDOFF) * apart_package
    )


def placement_spread(shape: TopologyShape, w: SimWorkload, config: Config, op: Operating) -> float:
    """The spread (sd of ln throughput) of unpinned samples from where the OS put the partners
    that time: each group's hand-off is drawn from the distances `apart_shares` gives, and the
    groups average out."""
    apart_llc, apart_package = apart_shares(shape, config.threads)
    costs = np.array([1.0, CROSS_LLC_HANDOFF, CROSS_SOCKET_HANDOFF])
    odds = np.array([1.0 - apart_llc, apart_llc - apart_package, apart_package])
    variance = float(odds @ costs**2 - (odds @ costs) ** 2)
    period_ns = config.producers / op.events_per_s * 1e9  # one group's time per event
    return w.handoff_ns * float(np.sqrt(max(0.0, variance) / config.producers)) / period_ns


def _quota_share(shape: TopologyShape, busy: float) -> float:
    quota = shape.cpu_quota
    return 1.0 if quota is None or busy <= quota else quota / busy


def _throttle(shape: TopologyShape, busy: float) -> float:
    quota = shape.cpu_quota
    if quota is None or busy <= quota:
        return 1.0
    return quota / busy * (1.0 - THROTTLE_COST * min(1.0, (busy - quota) / quota))


@dataclass(frozen=True)
class _Flow:
    """Per group: events/s, and the CPUs its producer and its consumers want."""

    events: np.ndarray
    producer: np.ndarray  # CPUs the producer wants: compute, and spinning in the channel
    consumers: np.ndarray
    idle: float  # thread-seconds per second waiting in the channel or on the lock


def _flow(w: SimWorkload, config: Config, handoff: float, speed: float) -> _Flow:
    k = np.array(config.group_sizes(), dtype=float)
    ep, ec = w.producer_ns + handoff, w.consumer_ns + handoff
    rho_p = 1.0 / (ep / speed + w.wait_ratio * w.producer_ns)
    rho_c = 1.0 / (ec / speed + w.wait_ratio * w.consumer_ns)
    groups = np.minimum(rho_p, k * rho_c) / usl_factor(w, config.producers)
    idle_p, idle_c = 1.0 - groups / rho_p, k - groups / rho_c
    return _Flow(
        events=groups,
        producer=groups * ep / speed + w.spin * idle_p,
        consumers=groups * ec / speed + w.spin * idle_c,
        idle=float(idle_p.sum() + idle_c.sum()),
    )


def _unpinned(shape: TopologyShape, w: SimWorkload, config: Config, pool: Pool) -> Operating:
    handoff = w.handoff_ns * spread_handoff(shape, config.threads)
    speed, busy = 1.0, 0.0
    for _ in range(_ITERATIONS):
        flow = _flow(w, config, handoff, speed)
        wanting = float(flow.producer.sum() + flow.consumers.sum())
        got = share(pool, config.threads, wanting)
        busy = got.busy_cpus
        new = got.speed * _throttle(shape, busy)
        if abs(new - speed) < 1e-12:
            break
        speed = 0.5 * speed + 0.5 * new
    flow = _flow(w, config, handoff, speed)
    wanting = float(flow.producer.sum() + flow.consumers.sum())
    # CPU time actually had: what the pool kept busy, within the quota, split as it was wanted.
    had = busy * _quota_share(shape, busy) / wanting if wanting > 0 else 0.0
    return Operating(
        events_per_s=float(flow.events.sum()) * 1e9,
        producer_cpus=float(flow.producer.sum()) * had,
        consumer_cpus=float(flow.consumers.sum()) * had,
        runnable=wanting,
        idle_fraction=max(0.0, flow.idle) / config.threads,
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
        occupancy = rate * t.compute / speed + w.spin * (1.0 - rate / rho)
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
