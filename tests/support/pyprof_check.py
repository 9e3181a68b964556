"""What the profiler tests share (a pytest plugin, see tests/conftest.py): the example built once
per session as a user installs it (pip, meson-python, hspc-gen vendoring the header with
--effort estimate: no measuring), and the oracle, cProfile itself: call counts must be equal
exactly, per function and per caller -> callee edge, primitive and total."""

from __future__ import annotations

import cProfile
import gc
import os
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

import pyprof_workloads as wl

if TYPE_CHECKING:
    import hspcprof

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = Path(sysconfig.get_path("scripts"))
ENV = {**os.environ, "PATH": f"{SCRIPTS}{os.pathsep}{os.environ['PATH']}"}
WORKLOADS = Path(wl.__file__).resolve()

Key = tuple[str, int, str]
Stats = dict[Key, tuple[Any, ...]]

# What feeds hspcprof's channels, with and without C functions: sys.monitoring's callbacks from
# CPython 3.12 on, as cProfile's; on 3.11 a profile hook, or the frame evaluation function.
MONITORING = sys.version_info >= (3, 12)
PRODUCER = (
    {True: "monitoring", False: "monitoring"}
    if MONITORING
    else {True: "setprofile", False: "frames"}
)


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package as pip installs it, into a folder of its own (never the .venv)."""
    root = tmp_path_factory.mktemp("hspcprof")
    pip = [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "-q"]
    where = ["--target", str(root / "site"), f"-Cbuild-dir={root / 'build'}"]
    done = subprocess.run(
        [*pip, *where, str(REPO / "examples" / "pyprof")],
        capture_output=True,
        text=True,
        env=ENV,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return root


@pytest.fixture(scope="session")
def hp(installed: Path) -> Iterator[ModuleType]:
    sys.path.insert(0, str(installed / "site"))
    import hspcprof  # noqa: PLC0415 - importable only once built

    yield hspcprof
    sys.path.remove(str(installed / "site"))


def python(installed: Path, *argv: str | Path) -> subprocess.CompletedProcess[str]:
    """This interpreter, in a process of its own, with the package on its path."""
    env = {**ENV, "PYTHONPATH": str(installed / "site")}
    words = [sys.executable, *map(str, argv)]
    return subprocess.run(words, capture_output=True, text=True, env=env, check=False, timeout=60)


# A C library's thread that calls back into Python (PyGILState_Ensure, as ctypes does): a new
# thread state each call.
NATIVE = r"""
#include <pthread.h>
typedef void (*callback)(void);
static void* run(void* arg) {
  for (int i = 0; i < 3; ++i) ((callback)arg)();  /* a thread state of its own each time */
  return 0;
}
void call_thrice_in_a_thread(callback f) {
  pthread_t thread;
  pthread_create(&thread, 0, run, (void*)f);
  pthread_join(thread, 0);
}
"""


def native_library(folder: Path) -> Path:
    """NATIVE, compiled into `folder` as a shared library."""
    (folder / "native.c").write_text(NATIVE, encoding="utf-8")
    library = folder / "libnative.so"
    cc = ["cc", "-shared", "-fPIC", "-o", str(library), str(folder / "native.c"), "-lpthread"]
    subprocess.run(cc, check=True, capture_output=True, timeout=60)
    return library


def profiled(profile: cProfile.Profile | hspcprof.Profile, work: Callable[[], object]) -> Stats:
    """The pstats dict of one run, the collector off so that no finalizer runs in one profile
    and not in the other."""
    gc.collect()
    gc.disable()
    try:
        profile.runcall(work)
    finally:
        gc.enable()
    profile.create_stats()
    return profile.stats


def ours(key: Key) -> bool:
    """Everything but the profilers' own entries (their disable methods, their files)."""
    return "Profiler' objects>" not in key[2] and "cProfile" not in key[0]


def counts(stats: Stats) -> dict[Key, tuple[int, int, dict[Key, tuple[int, int]]]]:
    """(primitive, total, {caller: (calls, primitive calls)}) per function. The callers' tuples
    come from cProfile's snapshot code, which puts the total first: kept as it is."""
    return {
        key: (cc, nc, {caller: v[:2] for caller, v in callers.items() if ours(caller)})
        for key, (cc, nc, _tt, _ct, callers) in stats.items()
        if ours(key)
    }


def both(hp: ModuleType, work: Callable[[], object], **options: Any) -> tuple[Stats, Stats]:
    work()  # once unprofiled: first-run imports and caches would show in one profile only
    builtins = options.get("builtins", True)
    return profiled(cProfile.Profile(builtins=builtins), work), profiled(
        hp.Profile(**options), work
    )


def assert_same_counts(hp: ModuleType, work: Callable[[], object], **options: Any) -> Stats:
    """Profiles work with cProfile and with hspcprof.Profile(**options): the same counts."""
    theirs, mine = both(hp, work, **options)
    expected, got = counts(theirs), counts(mine)
    assert set(got) == set(expected)
    for key, value in expected.items():
        assert got[key] == value, key
    return mine


def name_of(stats: Stats, name: str, file: Path = WORKLOADS) -> Key:
    found = [k for k in stats if k[2] == name and k[0] == str(file)]
    assert len(found) == 1, found
    return found[0]
