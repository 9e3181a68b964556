"""The best count within the CPUs beside a best past them, and the words that weigh the two.

When idle CPU time let the thread search past the CPUs (guards.py) and its best lies there, the
best count within the CPUs runs beside it (the plan's settling rounds, in one call, again while
those rounds move the best, PAIRING_CALLS calls at most) before the answer is chosen: the
fewest-threads rule (knee.smallest_good) then weighs it on paired rounds, and the reason for more
threads than CPUs gives that paired figure. A 16-CPU guest's run had recommended 38+38 over 8+8
on medians 8% apart that never ran together; with the pairing a run that reached 34+34 ran 8+8
beside it (34+34 at 0.987 of it) and answered 8+8 (benchmarks/results/many-core-2026-11-27).
"""

from __future__ import annotations

import math

from hspc_gen.model.threads import SHOWN_ROUNDS
from hspc_gen.search.threads.knee import leader, strongest
from hspc_gen.search.threads.measure import BudgetSpentError, Config, Lab
from hspc_gen.search.threads.plan import PAIRING_CALLS, Plan
from hspc_gen.search.threads.refine import Allowed


def best_within(lab: Lab, fits: int) -> Config | None:
    """The best count measured with `fits` threads or fewer, if any."""
    within = [c for c in lab.measured() if not (c.pinned or c.replica) and c.threads <= fits]
    if not within:
        return None
    return strongest(lab, leader(lab, within), lambda c: c.threads <= fits)


def paired_within(
    lab: Lab, best: Config, inside: Config, plan: Plan | None, allowed: Allowed
) -> tuple[bool, Config]:
    """(whether the search may still say it ended by its own rule, the best): runs `inside`
    beside `best` where the two have not run together in SHOWN_ROUNDS rounds. No `plan`, or
    one without settling rounds (the budget left no room): nothing runs."""
    for _ in range(PAIRING_CALLS):
        if lab.compare(inside, best).n >= SHOWN_ROUNDS:
            break
        if plan is None or plan.settle_rounds == 0:
            break
        try:
            lab.run([best, inside], plan.settle_rounds)
        except BudgetSpentError:
            return False, best
        best = strongest(lab, best, allowed)  # those rounds moved the medians
    return True, best


def within_words(fits: int, cpus: int) -> str:
    """What the counts within the CPUs are, in words: the CPUs, or the fewest threads searched
    where one producer and its consumers are already more."""
    return f"within the {cpus} CPUs" if fits <= cpus else f"of {fits} threads or fewer"


def weighed(lab: Lab, best: Config, inside: Config, tolerance: float, within: str) -> str:
    """Why the best past the CPUs stands against the best count within them, in words that
    agree with the paired figure: faster beyond the noise, or the inside count's interval
    reaching below the fewest-threads rule's line, or the two not run together in the rounds
    that rule needs (SHOWN_ROUNDS)."""
    rel = lab.compare(inside, best)
    name, other = f"{inside.producers}+{inside.consumers}", f"{best.producers}+{best.consumers}"
    if rel.n < SHOWN_ROUNDS:
        return (
            f"{name}, the best {within}, ran beside {other} in {rel.n} rounds, fewer than the"
            f" {SHOWN_ROUNDS} that would show it as good"
        )
    low, high = math.floor(rel.low * 1000) / 1000, math.ceil(rel.high * 1000) / 1000
    figure = (
        f"{name}, the best {within}, measured {rel.gain:.3f} times {other}'s throughput, paired"
        f" over {rel.n} rounds (95% interval {low:.3f} to {high:.3f})"
    )  # the interval widened to its printed digits, so the words below hold for what is read
    if high < 1.0:
        return f"{figure}: {other} is faster beyond the noise"
    return f"{figure}: its interval reaches below {1.0 - tolerance:.0%} of {other}'s"
