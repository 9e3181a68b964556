"""hspc_gen.search.threads.guards: Thread Reinforcer's termination conditions, with Netflix's
rule for idle threads."""

from __future__ import annotations

from hspc_gen.search.threads.guards import guard
from hspc_gen.search.threads.measure import Config, Point

CORES = 8


def point(
    pairs: int,
    *,
    events: float = 1e6,
    util: float = 2.0,
    vcx: float = 0.0,
    migrations: float = 0.0,
    wait: float = 0.0,
) -> Point:
    return Point(
        config=Config(pairs, pairs),
        events_per_s=events,
        ci95_low=events,
        ci95_high=events,
        samples=6,
        cpu_utilisation=util,
        voluntary_switches_per_s=vcx,
        migrations_per_s=migrations,
        wait_fraction=wait,
    )


def test_rising_utilisation_and_calm_profiles_trip_nothing() -> None:
    assert guard(point(1, util=2.0), point(2, util=4.0, events=2e6), CORES) is None


def test_no_utilisation_gain_means_no_more_parallelism() -> None:
    assert guard(point(4, util=8.0), point(6, util=8.1), CORES) == "cpu_util"


def test_idle_threads_suspend_the_utilisation_guard() -> None:
    # The producer starves its consumers: they sit in the channel, so flat utilisation is
    # starvation, not the end of parallelism (Netflix's rule).
    assert guard(point(2, util=3.0, wait=0.4), point(3, util=3.0, wait=0.4), CORES) is None


def test_below_the_cores_contention_with_sharply_rising_voluntary_switches_stops() -> None:
    before = point(2, util=3.0, vcx=1e5, wait=0.12)
    after = point(3, util=4.0, vcx=3e5, wait=0.3)
    assert guard(before, after, CORES) == "voluntary_switches"
    # The same switches without contention in the channel are no reason to stop.
    calm = point(3, util=4.0, vcx=3e5, wait=0.05)
    assert guard(before, calm, CORES) is None


def test_above_the_cores_contention_with_sharply_rising_migrations_stops() -> None:
    before = point(4, util=7.0, migrations=1e3, wait=0.12)
    after = point(6, util=8.0, migrations=5e3, wait=0.3)
    assert after.config.threads > CORES
    assert guard(before, after, CORES) == "migrations"
    # Above the cores, voluntary switches are not the signal.
    switches = point(6, util=8.0, migrations=1e3, vcx=1e7, wait=0.3)
    assert guard(before, switches, CORES) is None


def test_rates_are_read_per_event() -> None:
    # Twice the switches at twice the events is the same per event: no sharp rise.
    before = point(2, util=3.0, vcx=1e5, wait=0.12, events=1e6)
    after = point(3, util=4.5, vcx=2e5, wait=0.2, events=2e6)
    assert guard(before, after, CORES) is None
