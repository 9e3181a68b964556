"""`python -m hspcprof` on the programs people run, each against the same script alone and under
`python -m cProfile`: a script that raises, one that calls sys.exit(n), multiprocessing (fork,
spawn, forkserver), asyncio and threads. The program behaves as it does alone, and the profile
is written (or printed) as cProfile writes it.

Where cProfile itself fails the script, hspcprof follows the script alone: `python -m cProfile`
exits 0 after sys.exit(n) (its runner swallows SystemExit, CPython 3.11 to 3.13) and cannot
pickle a script's functions for multiprocessing (the script runs in a dict, not a __main__
module: PicklingError with every start method)."""

from __future__ import annotations

import pstats
import subprocess
import sys
from pathlib import Path

import pytest

from pyprof_check import ENV, Stats

pytestmark = pytest.mark.slow

RAISES = """
def inner(n):
    if n == 0:
        raise ValueError("boom")
    inner(n - 1)

print("before")
inner(3)
"""

EXITS = """
import sys

def leave(code):
    sys.exit(int(code) if code.isdigit() else code)

print("before")
leave(sys.argv[1])
"""

POOL = """
import multiprocessing
import sys

def square(n):
    return n * n

if __name__ == "__main__":
    ctx = multiprocessing.get_context(sys.argv[1])
    with ctx.Pool(2) as pool:
        print(pool.map(square, range(8)))
    child = ctx.Process(target=square, args=(3,))
    child.start()
    child.join()
    print("exitcode", child.exitcode)
"""

ASYNC = """
import asyncio

async def leaf(n):
    await asyncio.sleep(0)
    return n

async def branch(n):
    return sum(await asyncio.gather(*(leaf(i) for i in range(n))))

async def main():
    return [await branch(n) for n in range(1, 5)]

print(asyncio.run(main()))
"""

THREADS = """
import threading

def work(n):
    return sum(i * i for i in range(n))

def main():
    workers = [threading.Thread(target=work, args=(1000,)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return work(10)

print(main())
"""


def run(
    installed: Path, tool: list[str], script: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    env = {**ENV, "PYTHONPATH": str(installed / "site")}
    words = [sys.executable, *tool, str(script), *args]
    return subprocess.run(
        words, capture_output=True, text=True, env=env, cwd=script.parent, check=False, timeout=120
    )


def three(
    installed: Path, tmp_path: Path, source: str, *args: str
) -> tuple[subprocess.CompletedProcess[str], ...]:
    """The script alone, under cProfile and under hspcprof (both writing a profile file)."""
    script = tmp_path / "script.py"
    script.write_text(source, encoding="utf-8")
    return tuple(
        run(installed, tool, script, *args)
        for tool in ([], ["-m", "cProfile", "-o", "c.prof"], ["-m", "hspcprof", "-o", "h.prof"])
    )


def loaded(path: Path) -> Stats:
    return pstats.Stats(str(path)).stats  # type: ignore[attr-defined, no-any-return]


def script_counts(stats: Stats, script: Path) -> dict[str, tuple[int, int]]:
    return {k[2]: v[:2] for k, v in stats.items() if k[0] == str(script)}


def test_a_script_that_raises(installed: Path, tmp_path: Path) -> None:
    alone, cprofile, ours = three(installed, tmp_path, RAISES)
    assert alone.returncode == cprofile.returncode == ours.returncode == 1
    assert alone.stdout == cprofile.stdout == ours.stdout == "before\n"
    # The script's own traceback; cProfile's has its runner's frames above the script's.
    assert ours.stderr == alone.stderr
    tail = alone.stderr.splitlines()[1:]
    assert cprofile.stderr.splitlines()[-len(tail) :] == tail
    assert script_counts(loaded(tmp_path / "h.prof"), tmp_path / "script.py") == script_counts(
        loaded(tmp_path / "c.prof"), tmp_path / "script.py"
    )
    printed = run(installed, ["-m", "hspcprof"], tmp_path / "script.py")
    assert printed.returncode == 1 and printed.stderr == alone.stderr
    assert "4/1" in printed.stdout and "script.py:2(inner)" in printed.stdout


@pytest.mark.parametrize(("code", "status"), [("3", 3), ("0", 0), ("bye", 1)])
def test_sys_exit_exits_as_the_script_alone(
    installed: Path, tmp_path: Path, code: str, status: int
) -> None:
    alone, cprofile, ours = three(installed, tmp_path, EXITS, code)
    assert alone.returncode == ours.returncode == status
    assert (alone.stdout, alone.stderr) == (ours.stdout, ours.stderr)
    assert cprofile.returncode == 0 and cprofile.stdout == ours.stdout
    assert script_counts(loaded(tmp_path / "h.prof"), tmp_path / "script.py") == {
        "<module>": (1, 1),
        "leave": (1, 1),
    }


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_multiprocessing_children_work(installed: Path, tmp_path: Path, method: str) -> None:
    """The children run (unprofiled: a spawned child is a new interpreter, a forked one stops
    the profiler it inherits), nothing hangs or fails at exit, and the parent's profile is
    written."""
    alone, cprofile, ours = three(installed, tmp_path, POOL, method)
    assert alone.returncode == 0, alone.stderr
    assert "PicklingError" in cprofile.stderr
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == alone.stdout == "[0, 1, 4, 9, 16, 25, 36, 49]\nexitcode 0\n"
    assert ours.stderr == ""
    stats = loaded(tmp_path / "h.prof")
    assert any(k[2] == "map" and "multiprocessing" in k[0] for k in stats)


def test_asyncio_counts_equal_cprofile(installed: Path, tmp_path: Path) -> None:
    alone, cprofile, ours = three(installed, tmp_path, ASYNC)
    assert alone.stdout == cprofile.stdout == ours.stdout == "[0, 1, 3, 6]\n"
    assert ours.returncode == 0 and ours.stderr == ""
    script = tmp_path / "script.py"
    mine = script_counts(loaded(tmp_path / "h.prof"), script)
    assert mine == script_counts(loaded(tmp_path / "c.prof"), script)
    assert mine["leaf"][1] == 2 * (1 + 2 + 3 + 4)  # started, then resumed after the sleep


def test_threads_are_profiled_and_the_main_thread_as_cprofile(
    installed: Path, tmp_path: Path
) -> None:
    """hspcprof sees every thread, each call of work() too; cProfile the main thread only up to
    3.11 (its hook is the enabling thread's), every thread from 3.12 (sys.monitoring's events are
    the interpreter's)."""
    alone, cprofile, ours = three(installed, tmp_path, THREADS)
    assert alone.stdout == cprofile.stdout == ours.stdout == "285\n"
    script = tmp_path / "script.py"
    mine = script_counts(loaded(tmp_path / "h.prof"), script)
    theirs = script_counts(loaded(tmp_path / "c.prof"), script)
    assert mine["work"] == (5, 5)
    assert theirs["work"] == ((5, 5) if sys.version_info >= (3, 12) else (1, 1))
    assert mine["<genexpr>"][1] == 4 * 1001 + 11  # each generator's resumes, as cProfile counts
    assert mine["main"] == theirs["main"] == (1, 1)
