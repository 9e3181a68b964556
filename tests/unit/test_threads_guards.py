"""hspc_gen.search.threads.guards: more threads than CPUs only where the CPUs sat idle, and the
reason in words."""

from __future__ import annotations

from hspc_gen.search.threads.guards import oversubscription
from hspc_gen.search.threads.measure import Config, Point


def point(groups: int, util: float, wait: float = 0.3) -> Point:
    return Point(Config(groups, groups), 1e6, 1e6, 1e6, 8, util, 0.0, 0.0, wait)


def test_idle_cpus_at_the_count_that_fills_them_justify_more_threads() -> None:
    """examples/app.yaml on the 16-CPU host: at 16 threads 10.6 CPUs busy."""
    why = oversubscription([point(4, 5.3), point(8, 10.6), point(16, 14.4)], 16, 16.0)
    assert why is not None
    assert "at 16 threads the CPUs were 10.6 of 16 busy (34% idle" in why
    assert "the threads waited 30% of their time" in why


def test_busy_cpus_keep_the_search_within_them() -> None:
    assert oversubscription([point(4, 8.0), point(8, 15.9, 0.0), point(16, 16.0)], 16, 16.0) is None
    # Spinning waiters wait a lot and still keep every CPU busy.
    assert oversubscription([point(8, 16.0, wait=0.6)], 16, 16.0) is None


def test_what_could_be_busy_is_capped_by_the_threads_and_the_quota() -> None:
    """12 threads on 16 CPUs can keep 12 busy; under a quota of 3 CPUs, 3."""
    assert oversubscription([point(6, 11.9)], 16, 16.0) is None
    assert oversubscription([point(6, 9.0)], 16, 16.0) is not None
    assert oversubscription([point(6, 2.9)], 16, 3.0) is None
    assert oversubscription([point(16, 30.0)], 16, 16.0) is None  # nothing fits the CPUs


def test_the_fewest_threads_searched_are_read_when_they_already_pass_the_cpus() -> None:
    """Issue 24, `threads --sweep` on 2 CPUs with 2 consumers per producer: the fewest threads
    searched (1+2) are 3, so no count fit the 2 CPUs, the guard said None and only 1+2 could be
    recommended, though it left 40% of the CPUs idle and every larger count measured faster."""
    one_group = Point(Config(1, 2), 1.1e7, 1e7, 1.4e7, 6, 1.205, 0.0, 0.0, 0.81)
    assert oversubscription([one_group], 2, 2.0) is None  # within 2 threads: nothing measured
    why = oversubscription([one_group], 2, 2.0, fits=3)
    assert why is not None and "at 3 threads the CPUs were 1.2 of 2 busy (40% idle" in why
