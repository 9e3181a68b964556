"""How many threads: the coarse grid, the peak, the knee, and the answer (plan.py sizes each).

Every count of the coarse grid (all axes: consumer ratios rounded up and down) runs in the same
rounds, a pilot round first so that later samples are sized from what it measured. The leader
(highest median) starts the peak's refinement on its axis; then each axis's knee is refined
against the best. The answer is the good count with the fewest threads (knee.py). Counts with
more threads than CPUs take part only when the coarse grid showed idle CPU time that they could
fill (guards.py: read at the fewest threads searched when those are already more than the CPUs),
or when one the coarse grid ran anyway was shown better than the best within them beyond the
noise; a best past the CPUs runs beside the best count within them first (within.py), so that
the answer weighs the two on paired rounds. Whatever path ended the search, the best then moves
to any count run beside it that measured higher by median and paired (knee.strongest), so that
the answer is held to the best measured. The search ends by its own rule when the plan's levels
are done or nothing is left to try between whole counts; when the budget ends a call
(BudgetSpentError), it answers by the same rule from what it measured and says so (BUDGET).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from hspc_gen.model.threads import FIXED
from hspc_gen.search.decisions.stats import MIN_ROUNDS
from hspc_gen.search.threads.axis import Axis
from hspc_gen.search.threads.guards import oversubscription
from hspc_gen.search.threads.knee import challenger, leader, smallest_good, strongest, top
from hspc_gen.search.threads.measure import BudgetSpentError, Config, Lab
from hspc_gen.search.threads.pace import SAMPLE_OVERHEAD
from hspc_gen.search.threads.plan import PILOT_ROUNDS, Plan, Planner, coarse_counts
from hspc_gen.search.threads.refine import Allowed, on_axis, refine_knee, refine_peak, settle
from hspc_gen.search.threads.within import best_within, paired_within, weighed, within_words

TOLERANCE = 0.03
VM_TOLERANCE = 0.04
"""The fewest threads shown within this share of the best are recommended. A VM's noise widens
the intervals, so its line lies a point further; not more, for the best measured count may itself
lie a point below the true peak, and the answer must stay within 5% of that."""
BUDGET = "budget"
"""The termination of a search the budget stopped: its answer is the best count measured."""


@dataclass(frozen=True)
class Host:
    """What the count search needs of the host: its CPUs (oversubscription means more threads
    than these), the CPUs it may keep busy (the quota caps them), whether it is a VM."""

    cpus: int
    usable: float
    virtual: bool


@dataclass(frozen=True)
class CountResult:
    chosen: Config
    best: Config
    termination: str
    tolerance: float
    plan: Plan
    oversubscription: str | None = None  # why counts past the CPUs were searched; None: not


def search_count(lab: Lab, axes: Sequence[Axis], planner: Planner, host: Host) -> CountResult:
    """The recommended counts, and why the search stopped."""
    tolerance = VM_TOLERANCE if host.virtual else TOLERANCE
    if all(axis.low == axis.high for axis in axes):
        fixed = axes[0].config(axes[0].low)
        return CountResult(fixed, fixed, FIXED, tolerance, planner.plan([fixed], fixed, 0, 0.0))
    coarse, plan = _coarse(lab, axes, planner, host.cpus)
    fits = max(host.cpus, min(c.threads for c in coarse))  # the fewest are never too many
    why = oversubscription(lab.curve(), host.cpus, host.usable, fits)

    def allowed(c: Config) -> bool:  # reads `why` when called: evidence below may set it
        return c.threads <= fits or why is not None

    best = leader(lab, [c for c in coarse if allowed(c)])
    refined = False
    try:
        if lab.rounds >= plan.coarse_rounds:
            best = _refine(lab, axes, best, plan, tolerance=tolerance, allowed=allowed)
            refined = True
    except BudgetSpentError:
        pass
    best = strongest(lab, best, allowed)
    inside, within = best_within(lab, fits), within_words(fits, host.cpus)
    if why is not None and best.threads > fits and inside is not None:
        whole, best = paired_within(lab, best, inside, plan if refined else None, allowed)
        refined = refined and whole
    elif why is None and (beyond := _outside(lab, best, allowed)) is not None:
        # The coarse grid ran counts past the CPUs whatever the guard would say; one shown
        # better than the best within them beyond the noise is evidence, not a count to pass
        # over (one merely higher, on a host whose CPUs were busy, is not enough).
        why, best = outran(lab, beyond, best, within), strongest(lab, beyond)
        inside = None  # the reason names the count it outran
    chosen = smallest_good(lab, best, tolerance, allowed)
    if why is not None and inside is not None and chosen.threads > fits:
        why = f"{why}; {weighed(lab, best, inside, tolerance, within)}"
    termination = _stopped(axes, best, chosen) if refined else BUDGET
    return CountResult(chosen, best, termination, tolerance, plan, why)


def _coarse(
    lab: Lab, axes: Sequence[Axis], planner: Planner, cpus: int
) -> tuple[list[Config], Plan]:
    """The coarse grid, measured, and the plan its pilot round chose."""
    coarse = sorted({axis.config(n) for axis in axes for n in coarse_counts(axis, cpus)})
    lab.run(coarse, PILOT_ROUNDS)  # nothing measured if it is cut: the estimated advice stays
    pilot = sum(s.wall_ns for c in coarse for s in lab.samples(c)) / 1e9 * SAMPLE_OVERHEAD
    plan = planner.plan(coarse, leader(lab, coarse), len(axes), pilot)
    with contextlib.suppress(BudgetSpentError):  # the refinement is then left out
        lab.run(coarse, plan.coarse_rounds - PILOT_ROUNDS)
    return coarse, plan


def _outside(lab: Lab, best: Config, allowed: Allowed) -> Config | None:
    """The count the search did not allow that beat the best beyond the noise (its paired
    interval above 1, over MIN_ROUNDS rounds) with the highest median, if any."""
    shown = [
        c
        for c in lab.measured()
        if not (c.pinned or c.replica or allowed(c))
        and (rel := lab.compare(c, best)).n >= MIN_ROUNDS
        and rel.low > 1.0
    ]
    return leader(lab, shown) if shown else None


def outran(lab: Lab, beyond: Config, best: Config, within: str) -> str:
    """Why counts past the CPUs may be recommended when one was shown better than the best count
    within them beyond the noise, in words."""
    rel = lab.compare(beyond, best)
    paired = (
        f", paired {rel.gain:.2f} times it over {rel.n} rounds (95% interval {rel.low:.2f} to "
        f"{rel.high:.2f})"
    )
    return (
        f"{beyond.producers}+{beyond.consumers} measured "
        f"{lab.point(beyond).events_per_s:.3g} events/s against "
        f"{lab.point(best).events_per_s:.3g} for {best.producers}+{best.consumers}, the best "
        f"{within}{paired}, so counts past the CPUs may be recommended"
    )


def _stopped(axes: Sequence[Axis], best: Config, chosen: Config) -> str:
    """What ended a search that ran its plan: the axis's top, the peak (the answer is the best)
    or the knee."""
    axis = next((a for a in axes if on_axis(a, best)), None)
    if axis is not None and axis.count(best) == axis.high:
        return "max_threads"
    return "peak" if chosen == best else "knee"


def _refine(
    lab: Lab,
    axes: Sequence[Axis],
    best: Config,
    plan: Plan,
    *,
    tolerance: float,
    allowed: Allowed,
) -> Config:
    axis = next(a for a in axes if on_axis(a, best))
    best = refine_peak(lab, axis, best, plan, allowed)
    for each in axes:
        refine_knee(lab, each, best, plan, line=1.0 - tolerance, allowed=allowed)
    best = top(lab, best, allowed)
    answer, rival = (
        smallest_good(lab, best, tolerance, allowed),
        challenger(lab, best, MIN_ROUNDS, allowed),
    )
    settle(lab, best, plan, answer=answer, line=1.0 - tolerance, rival=rival)
    return top(lab, best, allowed)  # the rival, if the settling rounds show it better
