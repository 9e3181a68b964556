"""The simulated host's CPUs as a pool the OS shares out among unpinned threads.

Each of n threads wants a CPU for a share u of the time, independently (a thread that sleeps in
the channel or on blocking work wants none meanwhile), so how many want one at a moment is
Binomial(n, u), and the pool delivers the capacity of that many at once: a core each up to the
cores, then SMT_YIELD for a second thread on a core, then time-slicing with a cost per extra
thread. Averaging over the binomial is what a fluid model (capacity at the mean demand) misses:
at a mean demand that just fills the CPUs, some moments find more threads than CPUs and others
leave CPUs idle, so more threads than that raise throughput (they fill the idle moments), and by
more the more the threads sleep; threads that never sleep gain nothing past the CPUs.

The OS puts runnable threads on distinct cores first when it knows the SMT siblings; a guest
whose sysfs hides them spreads threads over its vCPUs as if each were a core, so siblings end
up sharing a core by chance (`hidden_smt`). A pool that is not `multiplexed` delivers the
capacity at the mean demand (issue 5's fluid model, kept to check answers made under it).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from hspc_gen.model.shape import SMT_YIELD

OVERSUBSCRIPTION_COST = 0.04
"""Speed lost per extra runnable thread per CPU (switches, cache refills)."""
IMBALANCE = 0.97
"""Oversubscribed by a non-multiple of the CPUs, some threads share more (Bogner et al.)."""
SHUFFLE = 0.98
"""Fewer runnable threads than cores: the OS keeps moving them (Bogner et al.: pinning won 1.4%)."""


@dataclass(frozen=True)
class Pool:
    """The CPUs the OS shares out: how many, on how many physical cores, and whether the OS
    knows which of them are siblings."""

    cpus: int
    cores: int
    hidden_smt: bool = False
    multiplexed: bool = True  # False: capacity at the mean demand (issue 5's fluid model)


@dataclass(frozen=True)
class Share:
    """What a pool gives n threads that each want a CPU a share of the time."""

    speed: float  # compute speed per wanting thread, 1.0 = a core to itself
    busy_cpus: float  # CPUs occupied on average


@functools.cache
def _log_choose(n: int) -> np.ndarray:
    whole = math.lgamma(n + 1)
    return np.array([whole - math.lgamma(k + 1) - math.lgamma(n - k + 1) for k in range(n + 1)])


def _binomial(n: int, u: float) -> np.ndarray:
    """P(k of n threads want a CPU at once), k = 0..n."""
    if u >= 1.0 - 1e-12:
        return np.eye(1, n + 1, n).ravel()
    if u <= 1e-12:
        return np.eye(1, n + 1, 0).ravel()
    k = np.arange(n + 1)
    log_pmf = _log_choose(n) + k * math.log(u) + (n - k) * math.log1p(-u)
    return np.asarray(np.exp(log_pmf), dtype=float)


@functools.cache
def _capacity(pool: Pool, n: int) -> np.ndarray:
    """Core-equivalents of compute delivered to k = 0..n threads that want a CPU at once."""
    k = np.arange(n + 1, dtype=float)
    busy = np.minimum(k, pool.cpus)
    sibling_pairs = pool.cpus - pool.cores
    if pool.hidden_smt and pool.cpus > 1:
        # Threads on distinct vCPUs chosen blindly: each sibling pair is busy twice by chance.
        pairs = sibling_pairs * busy * (busy - 1.0) / (pool.cpus * (pool.cpus - 1.0))
    else:
        pairs = np.maximum(0.0, busy - pool.cores)
    capacity = busy - (1.0 - SMT_YIELD) * pairs
    few = busy < pool.cores
    capacity[few] *= 1.0 - (1.0 - SHUFFLE) * (1.0 - busy[few] / pool.cores)
    over = k > pool.cpus
    capacity[over] /= 1.0 + OVERSUBSCRIPTION_COST * (k[over] / pool.cpus - 1.0)
    # One thread more on some CPUs than on others matters less the more threads share each.
    uneven = over & (k % pool.cpus != 0)
    capacity[uneven] *= 1.0 - (1.0 - IMBALANCE) * pool.cpus / k[uneven]
    return np.asarray(capacity, dtype=float)


def share(pool: Pool, threads: int, wanting: float) -> Share:
    """The pool's share for `threads` threads that want `wanting` CPUs on average."""
    if threads <= 0 or wanting <= 0.0:
        return Share(1.0, 0.0)
    if not pool.multiplexed:
        return _fluid(pool, wanting)
    pmf = _binomial(threads, min(1.0, wanting / threads))
    k = np.arange(threads + 1, dtype=float)
    demand = float(pmf @ k)
    delivered = float(pmf @ _capacity(pool, threads))
    occupied = float(pmf @ np.minimum(k, pool.cpus))
    return Share(delivered / demand if demand > 0 else 1.0, occupied)


def _fluid(pool: Pool, wanting: float) -> Share:
    """The capacity at the mean demand: the CPUs never idle while threads want them on
    average, so nothing gains past the point where the demand fills them."""
    capacity = _capacity(pool, math.ceil(wanting) + 1)
    low = math.floor(wanting)
    delivered = float(np.interp(wanting, [low, low + 1], capacity[low : low + 2]))
    return Share(delivered / wanting, min(wanting, float(pool.cpus)))
