"""hspcprof on CPython 3.12 and later: sys.monitoring's callbacks are the producer, as cProfile's
are there. Its counts must be that version's cProfile's on every workload, with and without C
functions; it takes cProfile's tool id and frees it, names the tool that holds it, and sees
every thread, threads that C code starts included."""

from __future__ import annotations

import cProfile
import ctypes
import functools
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

import pyprof_bodies
import pyprof_workloads as wl
from pyprof_check import (
    MONITORING,
    assert_same_counts,
    name_of,
    native_library,
    python,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not MONITORING, reason="sys.monitoring is CPython 3.12's and later's"),
]

PROFILER_ID = 2  # sys.monitoring.PROFILER_ID, cProfile's

WORKLOADS: list[Callable[[], object]] = [
    wl.recursion,
    wl.generators,
    wl.coroutines,
    wl.exceptions,
    wl.builtins,
    wl.lambdas,
    functools.partial(pyprof_bodies.program, 3),
]


@pytest.mark.parametrize("builtins", [True, False], ids=["builtins", "no-builtins"])
@pytest.mark.parametrize("work", WORKLOADS, ids=lambda w: getattr(w, "__name__", "program"))
def test_counts_equal_cprofile_on_every_workload(
    hp: ModuleType, work: Callable[[], object], builtins: bool
) -> None:
    profile = hp.Profile(builtins=builtins)
    profile.runcall(wl.fib, 3)
    assert profile.producer == "monitoring"
    stats = assert_same_counts(hp, work, builtins=builtins)
    assert any(key[0] == "~" for key in stats) == builtins


def test_the_modes_run_on_the_callbacks(hp: ModuleType) -> None:
    """null registers callbacks that do nothing (this API's floor): no event; the others push
    one event per call and return."""
    events = {}
    for mode in ("null", "empty", "channel", "inline"):
        profile = hp.Profile(builtins=False, mode=mode)
        profile.runcall(wl.fib, 10)
        assert profile.producer == "monitoring"
        events[mode] = (profile.events, min(profile.consumers, 1))
    assert events["null"] == (0, 0)
    assert events["empty"] == events["inline"] == (2 * 177, 0)  # no consumer
    assert events["channel"] == (2 * 177, 1)


def test_it_takes_cprofiles_tool_id_and_frees_it(hp: ModuleType) -> None:
    monitoring = sys.monitoring  # type: ignore[attr-defined]
    profile = hp.Profile()
    with profile:
        assert monitoring.get_tool(PROFILER_ID) == "hspcprof"
    assert monitoring.get_tool(PROFILER_ID) is None
    theirs = cProfile.Profile()  # free for cProfile again
    theirs.runcall(wl.fib, 5)
    theirs.create_stats()
    assert theirs.stats[name_of(theirs.stats, "fib")][:2] == (1, 15)


def test_a_callback_called_by_hand_with_too_few_arguments_is_refused(hp: ModuleType) -> None:
    """register_callback hands the callbacks out: called from Python without the event's
    arguments, they raise TypeError instead of reading past them."""
    monitoring = sys.monitoring  # type: ignore[attr-defined]
    events = monitoring.events
    profile = hp.Profile()
    with profile:
        for event, arity in ((events.PY_START, 2), (events.PY_RETURN, 2), (events.CALL, 4)):
            callback = monitoring.register_callback(PROFILER_ID, event, None)
            monitoring.register_callback(PROFILER_ID, event, callback)  # put back at once
            with pytest.raises(TypeError, match=f"callback takes {arity} arguments"):
                callback()
        wl.fib(5)
    profile.create_stats()
    assert profile.stats[name_of(profile.stats, "fib")][:2] == (1, 15)


def test_another_tool_on_the_id_is_named(hp: ModuleType) -> None:
    theirs = cProfile.Profile()
    with theirs:
        with pytest.raises(ValueError, match="profiler tool id \\(2\\) is held by 'cProfile'"):
            hp.Profile().enable()
        wl.fib(5)
    theirs.create_stats()
    assert theirs.stats[name_of(theirs.stats, "fib")][:2] == (1, 15)  # undisturbed
    first, second = hp.Profile(), hp.Profile()
    with first:
        with pytest.raises(ValueError, match="is held by 'hspcprof'"):
            second.enable()
        wl.fib(6)
    first.create_stats()
    assert first.stats[name_of(first.stats, "fib")][:2] == (1, 25)


def test_each_thread_has_a_session_and_every_thread_is_seen(hp: ModuleType) -> None:
    """The callbacks run on whichever thread runs Python; each thread's events go into a
    channel of its own, so one thread's calls never nest in another's."""
    profile = hp.Profile()
    with profile:
        workers = [threading.Thread(target=wl.fib, args=(n,)) for n in (8, 9, 10)]
        for worker in workers:
            worker.start()
        wl.fib(7)
        for worker in workers:
            worker.join()
    profile.create_stats()
    fib = profile.stats[name_of(profile.stats, "fib")]
    assert fib[:2] == (4, 67 + 41 + 109 + 177)
    # Thread.run in the workers, fib itself; here fib(7) is a top-level call (this function was
    # entered before enable()): no thread's calls nest in another's.
    assert {caller[2] for caller in fib[4]} == {"fib", "run"}


def test_a_native_thread_entering_python_again_and_again(hp: ModuleType, tmp_path: Path) -> None:
    """A C library's thread that calls back into Python (PyGILState_Ensure, as ctypes does) gets
    a new thread state, and a session, each call: every call is profiled."""
    native = ctypes.CDLL(str(native_library(tmp_path)))
    callback = ctypes.CFUNCTYPE(None)(lambda: wl.fib(5))
    profile = hp.Profile(builtins=False)
    with profile:
        native.call_thrice_in_a_thread(callback)
    profile.create_stats()
    assert profile.stats[name_of(profile.stats, "fib")][:2] == (3, 3 * 15)


FORKS = """
import os, sys, hspcprof

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

profile = hspcprof.Profile(builtins=sys.argv[1] == "builtins")
profile.enable()
pid = os.fork()
if pid == 0:  # more events than a channel holds, and no consumer in this process
    fib(22)
    held = sys.monitoring.get_tool(2)
    again = hspcprof.Profile(builtins=False)  # the tool id is free again
    with again:
        fib(5)
    again.create_stats()
    calls = [v[1] for k, v in again.stats.items() if k[2] == "fib"]
    print("child", held, again.producer, calls, flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
fib(10)
profile.disable()
profile.create_stats()
calls = [v[1] for k, v in profile.stats.items() if k[2] == "fib"]
print("parent", os.waitstatus_to_exitcode(status), calls, profile.producer)
"""


@pytest.mark.parametrize("builtins", ["builtins", "no-builtins"])
def test_a_forked_child_runs_unprofiled_and_the_parent_on(installed: Path, builtins: str) -> None:
    """The consumers stay in the parent: in a child the callbacks push nothing and come off, and
    the tool id is free for a profiler enabled there."""
    done = python(installed, "-W", "ignore::DeprecationWarning", "-c", FORKS, builtins)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["child None monitoring [15]", "parent 0 [177] monitoring"]


DROPPED = """
import hspcprof

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

hspcprof.Profile().enable()  # its callbacks hold it, as cProfile's hold cProfile
try:
    hspcprof.Profile().enable()
except ValueError as error:
    print(error)
print(fib(15))
"""


def test_a_profiler_enabled_and_dropped_lives_on(installed: Path) -> None:
    done = python(installed, "-c", DROPPED)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == ["610"]
    assert "is held by 'hspcprof'" in done.stdout.splitlines()[0]
