"""The final count: a fresh, interleaved sweep of the counts near the line, and a line through it.

One count's paired estimate carries about 1% of noise; on a flat approach to the peak that is
several counts either way. So every count near the tolerance line is re-measured together with the
best (three timed copies of it: every comparison shares the reference, and so its luck) in fresh
rounds (which also drops the upward bias the best carries from having won the duels that made it
the best), and a weighted straight line of log gain over log count pools them: the
smallest count at or above its crossing of 1 - tolerance is the answer. Where the sweep holds too
few points for a line, each count answers for itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from hspc_gen.search.threads.axis import Axis
from hspc_gen.search.threads.duel import Duels
from hspc_gen.search.threads.measure import Config, Lab, Relative

KNEE_ROUNDS = 48
REFERENCE_COPIES = 2
LINE_POINTS = 7
RUNNERS_UP = 3
WINDOW = 3.5
"""Sweep the counts whose median is within this many tolerances of the best's."""
FIT_LOW, FIT_HIGH = 3.0, 0.3
"""Fit the points between 1 - FIT_LOW x tolerance and 1 - FIT_HIGH x tolerance: the flat top
near the best would bend a straight line away from the crossing."""
SNAP = 0.02
"""A crossing further than this below the next swept count gets measured itself."""
_Z95 = 1.96


def _window(duels: Duels, axis: Axis, best: Config, counts: Iterable[int]) -> list[int]:
    """The best, the counts nearest the tolerance line below it, and the runners-up (the best
    few points re-measured: the best of noisy points is biased upward)."""
    top, lab = axis.count(best), duels.lab
    line = 1.0 - duels.tolerance
    ratio = {
        n: lab.point(axis.config(n)).events_per_s / lab.point(best).events_per_s for n in counts
    }
    ratio.pop(top, None)
    near = [n for n in ratio if n < top and ratio[n] >= 1.0 - WINDOW * duels.tolerance]
    near = sorted(near, key=lambda n: abs(ratio[n] - line))[:LINE_POINTS]
    rest = [n for n in ratio if n not in near and ratio[n] >= line]
    runners = sorted(rest, key=lambda n: -ratio[n])[:RUNNERS_UP]
    return sorted({*near, *runners, top})


def crossing(rels: dict[int, Relative], tolerance: float) -> float | None:
    """Where the weighted line of log gain over log count crosses 1 - tolerance, if it rises."""
    low, high = 1.0 - FIT_LOW * tolerance, 1.0 - FIT_HIGH * tolerance
    above = [n for n, r in sorted(rels.items()) if r.gain >= 1.0 - tolerance]
    # Only the rising part: a plateau past the knee would flatten the line.
    last = above[1] if len(above) > 1 else max(rels, default=0)
    pts = [
        (n, r)
        for n, r in sorted(rels.items())
        if n <= last and low <= r.gain <= high and r.n > 0 and r.low > 0
    ]
    if len(pts) < 3:
        return None
    x = np.log([n for n, _ in pts])
    y = np.log([r.gain for _, r in pts])
    spread = np.array([(math.log(r.high) - math.log(r.low)) / (2 * _Z95) for _, r in pts])
    w = 1.0 / np.maximum(spread, 1e-4) ** 2
    xm, ym = np.average(x, weights=w), np.average(y, weights=w)
    slope = float(np.sum(w * (x - xm) * (y - ym)) / np.sum(w * (x - xm) ** 2))
    if not slope > 0:
        return None
    return float(math.exp(xm + (math.log(1.0 - tolerance) - ym) / slope))


def pooled(lab: Lab, candidate: Config, references: Sequence[Config], since: int) -> Relative:
    """Candidate over the mean of several timed copies of one reference (log scale)."""
    rels = [lab.compare(candidate, r, since) for r in references if r != candidate]
    if not rels or min(r.n for r in rels) == 0:
        return Relative(math.nan, 0.0, math.inf, 0)

    def mean(values: Iterable[float]) -> float:
        return math.exp(float(np.mean([math.log(v) for v in values])))

    return Relative(
        mean(r.gain for r in rels),
        mean(r.low for r in rels),
        mean(r.high for r in rels),
        min(r.n for r in rels),
    )


def settle(duels: Duels, axis: Axis, best: Config, counts: Iterable[int]) -> tuple[Config, Config]:
    """(the answer, the best). The best runs REFERENCE_COPIES extra times a round: every count
    is read against all its copies, so one lucky reference cannot shift them all. A swept count
    better than the best beyond doubt becomes the best, and the sweep is run again for it."""
    lab, counts = duels.lab, list(counts)
    for _ in range(2):
        window = _window(duels, axis, best, counts)
        references = [best] + [best.copy(i) for i in range(1, REFERENCE_COPIES + 1)]
        since = lab.run([axis.config(n) for n in window] + references, KNEE_ROUNDS)
        rels = {n: pooled(lab, axis.config(n), references, since) for n in window}
        beaten = [n for n in window if rels[n].low > 1.0]
        if not beaten:
            break
        best = axis.config(max(beaten, key=lambda n: rels[n].gain))
    return _answer(duels, axis, best, rels), best


def _answer(duels: Duels, axis: Axis, best: Config, rels: dict[int, Relative]) -> Config:
    top = axis.count(best)
    below = {n: r for n, r in rels.items() if n < top}
    cross = crossing(below, duels.tolerance)
    far = 1.0 - 2.0 * duels.tolerance
    for n, rel in sorted(below.items()):
        if rel.high < far:
            continue  # clearly well below the best, whatever the line says
        if cross is None:
            if duels.within(rel):
                return axis.config(n)
            continue
        if n >= cross:
            return _snap(duels, axis, best, math.ceil(cross), n)
    return best


def _snap(duels: Duels, axis: Axis, best: Config, wanted: int, swept: int) -> Config:
    """The crossing's own count when the next swept count lies well above it, if it holds up."""
    if swept <= wanted * (1.0 + SNAP) or wanted <= axis.low - 1:
        return axis.config(swept)
    candidate = axis.config(max(wanted, axis.low))
    since = duels.lab.run([best, candidate], KNEE_ROUNDS)
    rel = duels.lab.compare(candidate, best, since)
    return candidate if rel.gain >= 1.0 - 2.0 * duels.tolerance else axis.config(swept)
