"""After the coarse grid: refine the peak, then the knee, level by level as the plan says.

Peak: at each level the counts half a step (in log terms) either side of the best run beside it,
and the one with the higher paired estimate becomes the best (a count a little better but not
beyond the noise is still the better reference for "within tolerance of the best"). Knee: on each
axis, the smallest count whose throughput clears the tolerance line by the margin its interval
will need (paired with the best where the two ran together, else by the medians) and the count
below it bracket the answer; each level runs the two ends, KNEE_POINTS counts splitting the
bracket geometrically and the best, together, so that every count near the line is paired with
the final best, and the bracket closes in. A level with nothing left to try between whole counts
ends early. Settle: the few counts below the answer so far whose estimate clears the line by half
the margin run again beside the best, so that their intervals can narrow.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hspc_gen.search.decisions.stats import MIN_ROUNDS
from hspc_gen.search.threads.axis import Axis
from hspc_gen.search.threads.measure import Config, Lab
from hspc_gen.search.threads.plan import COARSE_STEP, KNEE_POINTS, SETTLE_POINTS, Plan

Allowed = Callable[[Config], bool]


def on_axis(axis: Axis, config: Config) -> bool:
    n = axis.count(config)
    return axis.low <= n <= axis.high and axis.config(n) == config


def measured_counts(lab: Lab, axis: Axis) -> list[int]:
    return sorted(axis.count(c) for c in lab.measured() if on_axis(axis, c))


def _tryable(axis: Axis, counts: set[int], allowed: Allowed) -> list[Config]:
    configs = [axis.config(n) for n in sorted(counts) if axis.low <= n <= axis.high]
    return [c for c in configs if allowed(c)]


def paired(lab: Lab, config: Config, best: Config) -> bool:
    return config == best or (
        lab.shared(config, best) >= MIN_ROUNDS and lab.compare(config, best).n >= MIN_ROUNDS
    )


def refine_peak(lab: Lab, axis: Axis, best: Config, plan: Plan, allowed: Allowed) -> Config:
    for level in range(1, plan.peak_levels + 1):
        step = COARSE_STEP ** (0.5**level)
        n = axis.count(best)
        probes = _tryable(axis, {round(n * step), round(n / step)} - {n}, allowed)
        unpaired = [p for p in probes if not paired(lab, p, best)]
        if unpaired:
            lab.run([best, *unpaired], plan.peak_rounds)
        gains = {p: lab.compare(p, best).gain for p in probes}
        top = max(probes, key=lambda p: gains[p], default=None)
        if top is not None and gains[top] > 1.0:
            best = top
    return best


def share_of_best(lab: Lab, config: Config, best: Config) -> float:
    """The count's throughput over the best's, only to choose what to run next (the answer reads
    the paired interval): paired where the two ran together; else through a count paired with
    both (the best of the coarse grid, which ran beside the probes that beat it), with the most
    rounds; else by the medians."""
    if paired(lab, config, best):
        return lab.compare(config, best).gain
    links = [
        (min(there.n, on.n), there.gain * on.gain)
        for via in lab.measured()
        if via not in (config, best)
        and paired(lab, via, best)
        and paired(lab, config, via)
        and (there := lab.compare(config, via)).n >= MIN_ROUNDS
        and (on := lab.compare(via, best)).n >= MIN_ROUNDS
    ]
    if links:
        return max(links)[1]
    return lab.point(config).events_per_s / lab.point(best).events_per_s


def margin(lab: Lab, best: Config, most: float) -> float:
    """How far below its estimate a count's interval reaches, typically (at most `most`), on the
    rounds so far: a count is shown good only when its estimate clears the line by about this."""
    spans = [
        rel.gain - rel.low
        for c in lab.measured()
        if c != best and paired(lab, c, best) and (rel := lab.compare(c, best)).n >= MIN_ROUNDS
    ]
    return min(most, float(np.median(spans))) if spans else most


def bracket(
    lab: Lab, axis: Axis, best: Config, line: float, allowed: Allowed
) -> tuple[int, int] | None:
    """(the count below the smallest one that reaches `line`, that one) on this axis, among
    counts up to the best's threads; None when none reaches it or nothing lies below."""
    counts = [
        n
        for n in measured_counts(lab, axis)
        if allowed(axis.config(n)) and axis.config(n).threads <= best.threads
    ]
    reaching = [n for n in counts if share_of_best(lab, axis.config(n), best) >= line]
    if not reaching:
        return None
    below = [n for n in counts if n < reaching[0]]
    return (below[-1], reaching[0]) if below else None


def refine_knee(
    lab: Lab, axis: Axis, best: Config, plan: Plan, *, line: float, allowed: Allowed
) -> None:
    """Close in on the counts whose estimate clears `line` by the margin: where the answer's
    interval will lie above the line."""
    for _ in range(plan.knee_levels):
        aim = min(1.0, line + margin(lab, best, (1.0 - line) / 2.0))
        found = bracket(lab, axis, best, aim, allowed)
        if found is None:
            return
        low, high = found
        ratio = high / low
        inside = {round(low * ratio ** (i / (KNEE_POINTS + 1))) for i in range(1, KNEE_POINTS + 1)}
        points = _tryable(axis, {n for n in inside if low < n < high}, allowed)
        ends = [axis.config(low), axis.config(high)]
        if not points and all(paired(lab, c, best) for c in ends):
            return
        lab.run([best, *ends, *points], plan.knee_rounds)


def settle(
    lab: Lab, best: Config, plan: Plan, *, answer: Config, line: float, rival: Config | None
) -> None:
    """The counts with fewer threads than `answer` (the smallest shown good so far) whose
    estimate reaches `line` while their interval does not yet, fewest threads first, run again
    beside the best, and the `rival` that looked better than the best in fewer rounds: more
    rounds narrow their intervals (and the rival, if shown better, becomes the best, the
    counts near the line paired with it in these rounds)."""
    aim = line + margin(lab, best, (1.0 - line) / 2.0) / 2.0
    near = [
        c
        for c in lab.measured()
        if not (c.pinned or c.replica)
        and c.threads < answer.threads
        and share_of_best(lab, c, best) >= aim
    ]
    near = sorted(near, key=lambda c: (c.threads, c))[:SETTLE_POINTS]
    if (near or rival) and plan.settle_rounds:
        lab.run([best, *near, *([rival] if rival else [])], plan.settle_rounds)
