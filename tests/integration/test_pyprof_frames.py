"""Profile(builtins=False) takes the fast producer on CPython 3.11: the frame evaluation function
(PEP 523) instead of a profile hook. Its counts must be cProfile(builtins=False)'s on every
workload, threads included, and its times those of known waits."""

from __future__ import annotations

import cProfile
import ctypes
import functools
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

import pyprof_bodies
import pyprof_workloads as wl
from pyprof_check import (
    MONITORING,
    Key,
    assert_same_counts,
    counts,
    name_of,
    native_library,
    profiled,
    python,
)

if TYPE_CHECKING:
    import hspcprof

# From 3.12 on sys.monitoring is the producer (test_pyprof_monitoring.py): the frame function's
# layout is known on 3.11 only.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(MONITORING, reason="the frame evaluation producer is CPython 3.11's"),
]

WORKLOADS: list[Callable[[], object]] = [
    wl.recursion,
    wl.generators,
    wl.coroutines,
    wl.exceptions,
    wl.builtins,
    wl.lambdas,
    functools.partial(pyprof_bodies.program, 3),
]


@pytest.mark.parametrize("work", WORKLOADS, ids=lambda w: getattr(w, "__name__", "program"))
def test_counts_equal_cprofile_without_builtins(hp: ModuleType, work: Callable[[], object]) -> None:
    stats = assert_same_counts(hp, work, builtins=False)
    assert not any(key[0] == "~" for key in stats)


def test_it_is_the_frame_producer_and_the_modes_run_on_it(hp: ModuleType) -> None:
    events = {}
    for mode in ("null", "empty", "channel", "inline"):
        profile = hp.Profile(builtins=False, mode=mode)
        profile.runcall(wl.fib, 10)
        assert profile.producer == "frames"
        events[mode] = (profile.events, min(profile.consumers, 1))
    assert events["null"] == (0, 0)
    assert events["empty"] == events["inline"] == (2 * 177, 0)  # no consumer
    assert events["channel"] == (2 * 177, 1)


def test_a_second_profiler_falls_back_to_the_profile_hook(hp: ModuleType) -> None:
    outer, inner = hp.Profile(builtins=False), hp.Profile(builtins=False)
    with outer:
        stats = profiled(inner, functools.partial(wl.fib, 8))
        assert inner.producer == "setprofile"
    assert outer.producer == "frames"
    assert stats[name_of(stats, "fib")][:2] == (1, 67)


def test_calls_open_at_disable_and_threads(hp: ModuleType) -> None:
    """A thread started while profiling gets a session of its own; calls still open when the
    profiler stops end then, as in cProfile."""

    def stats_of(profile: cProfile.Profile | hspcprof.Profile) -> dict[Key, Any]:
        def inner() -> None:
            worker = threading.Thread(target=wl.fib, args=(9,))
            worker.start()
            worker.join()
            wl.fib(5)
            profile.disable()

        profile.enable()
        inner()
        profile.create_stats()
        return counts(profile.stats)

    got = stats_of(hp.Profile(builtins=False))
    expected = stats_of(cProfile.Profile(builtins=False))
    fib = next(key for key in got if key[2] == "fib")
    assert got[fib][:2] == (2, 109 + 15)  # fib(9) in the thread, which cProfile does not see
    # The rest is the same, but for threading's own code: the new thread's bootstrap too is
    # profiled here.
    assert without_fib_and_threading(got) == without_fib_and_threading(expected)


def without_fib_and_threading(stats: dict[Key, Any]) -> dict[Key, Any]:
    return {k: v for k, v in stats.items() if k[2] != "fib" and k[0] != threading.__file__}


def test_a_busy_wait_takes_its_time(hp: ModuleType) -> None:
    profile = hp.Profile(builtins=False)
    took = profile.runcall(wl.busy_wait, 0.3)
    profile.create_stats()
    _cc, nc, _tt, ct, _callers = profile.stats[name_of(profile.stats, "busy_wait")]
    assert nc == 1
    assert abs(ct - took) < 0.05 * took, (ct, took)


DROPPED = """
import hspcprof

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

hspcprof.Profile(builtins=False).enable()  # nothing else holds the profiler
second = hspcprof.Profile(builtins=False)
with second:
    print(fib(15), second.producer)
"""


def test_a_profiler_enabled_and_dropped_lives_on(installed: Path) -> None:
    """The frame function holds its profiler, as cProfile's hook does: one enabled and dropped
    keeps profiling, and the process ends cleanly."""
    done = python(installed, "-c", DROPPED)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["610", "setprofile"]  # the function is still taken


def test_a_native_thread_entering_python_again_and_again(hp: ModuleType, tmp_path: Path) -> None:
    """A C library's thread that calls back into Python (PyGILState_Ensure, as ctypes does) gets
    a new thread state each call: the frame producer profiles every call, not only the first."""
    native = ctypes.CDLL(str(native_library(tmp_path)))
    callback = ctypes.CFUNCTYPE(None)(lambda: wl.fib(5))
    profile = hp.Profile(builtins=False)
    with profile:
        native.call_thrice_in_a_thread(callback)
    profile.create_stats()
    assert profile.producer == "frames"
    assert profile.stats[name_of(profile.stats, "fib")][:2] == (3, 3 * 15)
