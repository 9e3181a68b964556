"""After the ramp: refine the peak inside its bracket, then settle on the smallest good count.

The ramp's geometric grid brackets the peak; the geometric middles of the gaps beside every count
near the top are tried until those gaps are within RESOLUTION. The answer is the
smallest count within the tolerance of the best: counts below it are probed (down the grid
first, then by bisection) until the largest count that is not good enough sits within RESOLUTION,
and the answer is confirmed on fresh rounds.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from hspc_gen.search.threads.axis import Axis
from hspc_gen.search.threads.duel import Duels
from hspc_gen.search.threads.knee import settle
from hspc_gen.search.threads.measure import Config

RESOLUTION = 0.05
"""Around the peak, counts within this share of each other are not told apart."""
PROBE_RESOLUTION = 0.06
"""Below the smallest good count, probes go on until the gap is this small."""
MAX_PROBES = 24


def measured_counts(duels: Duels, axis: Axis) -> list[int]:
    return sorted(axis.count(c) for c in duels.lab.measured() if axis.config(axis.count(c)) == c)


def _middle(n: int, neighbour: int, resolution: float = RESOLUTION) -> int | None:
    low, high = sorted((n, neighbour))
    mid = round(math.sqrt(low * high))
    if high <= low * (1.0 + resolution) or not low < mid < high:
        return None
    return mid


def _widest_gap(duels: Duels, axis: Axis, peak: Config) -> int | None:
    """The middle of the widest unresolved gap beside a count near the top (unpaired medians
    pick where to look; the paired duel decides)."""
    counts = measured_counts(duels, axis)
    top = duels.lab.point(peak).events_per_s
    floor = (1.0 - 2.0 * duels.tolerance) * top
    near = {c for c in counts if duels.lab.point(axis.config(c)).events_per_s >= floor}
    near.add(axis.count(peak))
    gaps = [(b / a, a, b) for a, b in itertools.pairwise(counts) if {a, b} & near]
    middles = [(ratio, _middle(a, b)) for ratio, a, b in gaps]
    found = [(ratio, mid) for ratio, mid in middles if mid is not None]
    return max(found)[1] if found else None


def refine_peak(duels: Duels, axis: Axis, peak: Config) -> Config:
    for _ in range(MAX_PROBES):
        probe = _widest_gap(duels, axis, peak)
        if probe is None:
            break
        # The point estimate picks the peak: a count a little better but not beyond the margin
        # is still the better reference for "within tolerance of the best".
        if duels.step(peak, axis.config(probe))[1].gain > 1.0:
            peak = axis.config(probe)
    return peak


def _probe(grid: Sequence[int], below: Sequence[int], chosen: int) -> int | None:
    """The next count to try under the smallest good one, or None when resolved."""
    if not below:
        lower = [n for n in grid if n < chosen]
        return lower[-1] if lower else None
    return _middle(below[-1], chosen, PROBE_RESOLUTION)


def smallest_good(
    duels: Duels, axis: Axis, grid: Sequence[int], best: Config
) -> tuple[Config, Config]:
    """Probe down from the best until the smallest good count is bracketed, then let the fresh
    sweep around the line (knee.settle) decide: (the answer, the best)."""
    top = axis.count(best)
    for _ in range(MAX_PROBES):
        counts = sorted({n for n in measured_counts(duels, axis) if n <= top} | {top})
        good = [n for n in counts if duels.good(best, axis.config(n))]
        probe = _probe(grid, [n for n in counts if n < good[0]], good[0])
        if probe is None:
            break
        duels.good(best, axis.config(probe))
    return settle(duels, axis, best, measured_counts(duels, axis))
