"""The rule that picks the answer, and the one the evidence's "equally good" list states.

A count is good when its throughput, paired round by round with the best count's over every round
the two ran together (at least SHOWN_ROUNDS), has a 95% interval that lies wholly at or above
1 - tolerance: the measurements show it within the tolerance of the best, not merely fail to
show it worse. The answer is the good count with the fewest threads (the best itself is always
good). "Equally good" in the result lists exactly the good counts, so the answer is always among
them and no count is listed whose interval reaches below the line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from hspc_gen.model.threads import SHOWN_ROUNDS
from hspc_gen.search.decisions.stats import MIN_ROUNDS
from hspc_gen.search.threads.measure import Config, Lab


def good(lab: Lab, config: Config, best: Config, tolerance: float) -> bool:
    if config == best:
        return True
    rel = lab.compare(config, best)
    return rel.n >= SHOWN_ROUNDS and rel.low >= 1.0 - tolerance


def leader(lab: Lab, configs: Iterable[Config]) -> Config:
    """The configuration with the highest median throughput (fewest threads on a tie): where
    the refinement starts; every later step asks paired questions of it."""
    return max(configs, key=lambda c: (lab.point(c).events_per_s, -c.threads, c))


def challenger(
    lab: Lab,
    best: Config,
    rounds: int = MIN_ROUNDS,
    allowed: Callable[[Config], bool] = lambda _c: True,
) -> Config | None:
    """The allowed count run beside the best (in `rounds` rounds at least) whose paired estimate
    beats it by the most, if any does: the knee's rounds may show a count near the top better
    than the one the peak picked."""
    rivals = [
        c
        for c in lab.measured()
        if not (c.pinned or c.replica)
        and c != best
        and allowed(c)
        and lab.shared(c, best) >= rounds
        and lab.compare(c, best).n >= rounds
    ]
    found = max(rivals, key=lambda c: lab.compare(c, best).gain, default=None)
    return found if found is not None and lab.compare(found, best).gain > 1.0 else None


def top(lab: Lab, best: Config, allowed: Callable[[Config], bool] = lambda _c: True) -> Config:
    """The best, or the allowed challenger that beat it beyond the noise over SHOWN_ROUNDS
    rounds (a count past the CPUs the guard did not allow is weighed after the refinement, and
    the reason to allow it is then said)."""
    found = challenger(lab, best, SHOWN_ROUNDS, allowed)
    return found if found is not None and lab.compare(found, best).low > 1.0 else best


def strongest(
    lab: Lab, best: Config, allowed: Callable[[Config], bool] = lambda _c: True
) -> Config:
    """The best moved, while an allowed count run beside it (MIN_ROUNDS rounds at least) has
    both the higher paired estimate and the higher median, to the one of them with the highest
    median: the best the answer is held against is then the best measured, not a coarse leader
    that a refined count or more rounds overtook without showing it beyond the noise (the
    smallest count as good as that would be held to the wrong line). The median as well as the
    paired estimate: paired estimates over different rounds need not be transitive (A over B,
    B over C, C over A), the medians are, so the walk ends."""
    while True:
        floor = lab.point(best).events_per_s
        above = [
            c
            for c in lab.measured()
            if not (c.pinned or c.replica)
            and c != best
            and allowed(c)
            and lab.point(c).events_per_s > floor
            and lab.compare(c, best).n >= MIN_ROUNDS
            and lab.compare(c, best).gain > 1.0
        ]
        if not above:
            return best
        best = leader(lab, above)


def smallest_good(
    lab: Lab,
    best: Config,
    tolerance: float,
    allowed: Callable[[Config], bool] = lambda _c: True,
) -> Config:
    """The fewest threads among the unpinned counts measured that are good and allowed."""
    found = [
        c
        for c in lab.measured()
        if not (c.pinned or c.replica) and allowed(c) and good(lab, c, best, tolerance)
    ]
    return min(found, key=lambda c: (c.threads, c), default=best)
