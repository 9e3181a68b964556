"""hspcprof profiles every Python thread, each with its own channel, all drained by one pool of
consumer threads: the threads' profiles add up to what cProfile gives when each thread runs
under a cProfile of its own (on CPython 3.11; from 3.12 on, where one cProfile takes every
thread's events into one stack, to what it gives for each job run alone)."""

from __future__ import annotations

import cProfile
import os
import pstats
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

import pyprof_workloads as wl
from pyprof_check import MONITORING, PRODUCER, WORKLOADS, Stats, counts, name_of, profiled, python

pytestmark = pytest.mark.slow

JOBS: list[Callable[[], object]] = [wl.recursion, wl.generators, wl.exceptions, wl.builtins]


def in_threads(
    wrap: Callable[[Callable[[], object]], Callable[[], object]],
    jobs: list[Callable[[], object]] = JOBS,
) -> None:
    """Each job in a thread of its own, started and joined here, and fib in this thread."""
    workers = [threading.Thread(target=wrap(job)) for job in jobs]
    for worker in workers:
        worker.start()
    wl.fib(12)
    for worker in workers:
        worker.join()


def workload_counts(stats: Stats) -> dict[object, object]:
    """The workloads' own functions and edges among them (threading's machinery left out: each
    profiler sees a thread start differently)."""
    mine = {k: v for k, v in counts(stats).items() if k[0] == str(WORKLOADS)}
    return {
        k: (cc, nc, {c: e for c, e in callers.items() if c in mine})
        for k, (cc, nc, callers) in mine.items()
    }


def cprofile_per_thread(jobs: list[Callable[[], object]] = JOBS, builtins: bool = True) -> Stats:
    profiles: list[cProfile.Profile] = []

    def wrap(job: Callable[[], object]) -> Callable[[], object]:
        profile = cProfile.Profile(builtins=builtins)
        profiles.append(profile)
        return lambda: profile.runcall(job)

    main = cProfile.Profile(builtins=builtins)
    main.runcall(in_threads, wrap, jobs)
    total = pstats.Stats(main)
    for profile in profiles:
        total.add(profile)
    return total.stats  # type: ignore[attr-defined, no-any-return]


def cprofile_one_at_a_time(jobs: list[Callable[[], object]] = JOBS, builtins: bool = True) -> Stats:
    """Each job, then fib, in this thread under a cProfile of its own (sys.monitoring's events are
    the interpreter's, so from 3.12 on two cProfiles never run at once)."""
    profiles = [cProfile.Profile(builtins=builtins) for _ in [*jobs, wl.fib]]
    for profile, job in zip(profiles, jobs, strict=False):
        profile.runcall(job)
    profiles[-1].runcall(wl.fib, 12)
    total = pstats.Stats(profiles[0])
    for profile in profiles[1:]:
        total.add(profile)
    return total.stats  # type: ignore[attr-defined, no-any-return]


def cprofile_oracle(jobs: list[Callable[[], object]] = JOBS, builtins: bool = True) -> Stats:
    if MONITORING:
        return cprofile_one_at_a_time(jobs, builtins)
    return cprofile_per_thread(jobs, builtins)


def test_threads_started_while_profiling_add_up_to_cprofile_per_thread(hp: ModuleType) -> None:
    in_threads(lambda job: job)  # once unprofiled: first-run imports and caches
    expected = workload_counts(cprofile_oracle())
    profile = hp.Profile()
    got = workload_counts(profiled(profile, lambda: in_threads(lambda job: job)))
    assert got == expected
    assert profile.events > 0 and profile.consumer_cpu > 0


def test_a_thread_running_before_enable_is_profiled_from_then_on(hp: ModuleType) -> None:
    go, done = threading.Event(), threading.Event()

    def waiting() -> None:
        go.wait()
        wl.fib(10)
        done.set()

    worker = threading.Thread(target=waiting)
    worker.start()
    profile = hp.Profile()
    with profile:
        go.set()
        done.wait()
        worker.join()
    profile.create_stats()
    assert profile.stats[name_of(profile.stats, "fib")][:2] == (1, 177)


def test_disable_from_another_thread_stops_every_thread(hp: ModuleType) -> None:
    profile = hp.Profile()
    profile.enable()
    stopper = threading.Thread(target=profile.disable)
    stopper.start()
    stopper.join()
    wl.fib(6)  # after disable: not in the profile
    profile.create_stats()
    assert not any(k[2] == "fib" for k in profile.stats)
    assert threading.getprofile() is None


def os_threads() -> int:
    return sum(1 for _ in Path("/proc/self/task").iterdir())


@pytest.mark.parametrize("builtins", [True, False], ids=["builtins", "no-builtins"])
def test_24_threads_share_a_pool_of_consumers_no_larger_than_helps(
    hp: ModuleType, builtins: bool
) -> None:
    """One pool drains every thread's channel: 24 Python threads at once (and this one) run at
    most one consumer per usable CPU, not one each, and the counts are cProfile's."""
    jobs = [JOBS[i % len(JOBS)] for i in range(24)]
    in_threads(lambda job: job, jobs)  # once unprofiled: first-run imports and caches
    expected = workload_counts(cprofile_oracle(jobs, builtins))
    before = most = os_threads()

    def counting(job: Callable[[], object]) -> Callable[[], object]:
        def run() -> None:
            nonlocal most
            job()
            most = max(most, os_threads())

        return run

    profile = hp.Profile(builtins=builtins)
    got = workload_counts(profiled(profile, lambda: in_threads(counting, jobs)))
    assert got == expected
    helps = min(len(os.sched_getaffinity(0)), len(jobs) + 1)
    assert 1 <= profile.consumers <= helps, (profile.consumers, helps)
    assert most <= before + len(jobs) + helps + 1, (before, most)  # + the pool's controller


@pytest.mark.parametrize("builtins", [True, False], ids=["builtins", "no-builtins"])
def test_a_thread_that_ends_ends_its_session(hp: ModuleType, builtins: bool) -> None:
    """A thread's session is drained and folded in once the thread ends, not at disable(): a
    program that starts thread after thread keeps a few OS threads (the pool's consumers and its
    controller), not one consumer per thread it ran."""
    profile = hp.Profile(builtins=builtins)
    before = most = os_threads()
    with profile:
        for _ in range(24):
            worker = threading.Thread(target=wl.fib, args=(5,))
            worker.start()
            worker.join()
            most = max(most, os_threads())
    assert profile.producer == PRODUCER[builtins]
    assert most <= before + 6, (before, most)  # the pool's threads, a worker ending
    profile.create_stats()
    assert profile.stats[name_of(profile.stats, "fib")][:2] == (24, 24 * 15)


FORKS = """
import os, sys, threading, hspcprof

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

dropped = hspcprof.Profile()  # enabled, then its hooks taken off by others, then freed
dropped.enable()
sys.setprofile(None)
threading.setprofile(None)
del dropped
profile = hspcprof.Profile(builtins=sys.argv[1] == "setprofile")
profile.enable()
pid = os.fork()
if pid == 0:  # more events than a channel holds, and no consumer in this process
    fib(22)
    hooks = sys.getprofile() is None, threading.getprofile() is None
    again = hspcprof.Profile(builtins=False)  # the frame function is free again
    with again:
        fib(5)
    again.create_stats()
    calls = [v[1] for k, v in again.stats.items() if k[2] == "fib"]
    print("child", *hooks, again.producer, calls, flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
fib(10)
profile.disable()
profile.create_stats()
calls = [v[1] for k, v in profile.stats.items() if k[2] == "fib"]
print("parent", os.waitstatus_to_exitcode(status), calls, profile.producer)
"""


@pytest.mark.skipif(MONITORING, reason="3.11's hooks; test_pyprof_monitoring.py from 3.12 on")
@pytest.mark.parametrize("producer", ["setprofile", "frames"])
def test_a_forked_child_runs_unprofiled_and_the_parent_on(installed: Path, producer: str) -> None:
    """The consumers stay in the parent: in a child the profiler is off (its hooks too, and a
    profiler enabled there starts afresh), where a channel nobody drains would block the child
    at its first full buffer. A profiler freed while enabled plays no part."""
    done = python(installed, "-c", FORKS, producer)
    assert done.returncode == 0, done.stderr
    child = "child True True frames [15]"
    assert done.stdout.splitlines() == [child, f"parent 0 [177] {producer}"]
