"""hspcprof's exact stacks (examples/pyprof: stacks.hpp, hspcprof.stacks, hspcprof.flame): the
calling-context tree the consumers keep, and the files written from it. Every call is charged to
exactly one stack, so the stacks' own times sum to the pstats own times and their calls to the
pstats calls, per function and in all, and the bound on the tree keeps both sums."""

from __future__ import annotations

import json
import re
import sys
import threading
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest

import pyprof_bodies
import pyprof_workloads as wl
from pyprof_check import Key, Stats, profiled, python

if TYPE_CHECKING:
    from hspcprof.stacks import Frame, Stack

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "tests" / "data" / "speedscope" / "file-format-schema.json"
NS = 1e-9  # the files' unit; the running-sum rounding keeps their sum within it of the total
LINE = re.compile(r"^(?P<stack>[^\n]+) (?P<value>\d+)$")


def key_of(frame: Frame) -> Key:
    """The pstats key of a stack's frame: a Python function's name is the last part of its
    qualified name; a C function's is its name, as cProfile's ('~', 0, name)."""
    if not frame.file:
        return ("~", 0, frame.name)
    return (frame.file, frame.line, frame.name.rsplit(".", 1)[-1])


def by_function(stacks: list[Stack]) -> dict[Key, tuple[int, float]]:
    """(calls, own time) summed over the stacks each function is the innermost frame of."""
    sums: dict[Key, list[float]] = defaultdict(lambda: [0, 0.0])
    for stack in stacks:
        entry = sums[key_of(stack.frames[-1])]
        entry[0] += stack.calls
        entry[1] += stack.own
    return {key: (int(calls), own) for key, (calls, own) in sums.items()}


def profile_of(hp: ModuleType, work: Callable[[], object], **options: Any) -> Any:
    work()  # once unprofiled: first-run imports and caches
    profile = hp.Profile(**options)
    profiled(profile, work)
    return profile


def assert_stacks_sum_to_stats(stacks: list[Stack], stats: Stats) -> None:
    assert sum(s.calls for s in stacks) == sum(v[1] for v in stats.values())
    assert sum(s.own for s in stacks) == pytest.approx(sum(v[2] for v in stats.values()), abs=NS)


def program() -> None:
    pyprof_bodies.program(3)
    wl.recursion()
    wl.generators()
    wl.exceptions()


def test_every_function_s_stacks_add_up_to_its_pstats_entry(hp: ModuleType) -> None:
    profile = profile_of(hp, program)
    stacks = profile.stacks()
    assert_stacks_sum_to_stats(stacks, profile.stats)
    for key, (calls, own) in by_function(stacks).items():
        _cc, nc, tt, _ct, _callers = profile.stats[key]
        assert calls == nc, key
        assert own == pytest.approx(tt, abs=NS), key
    fib = sorted((len(s.frames), s.calls) for s in stacks if s.frames[-1].name == "fib")
    # fib(16) from recursion(): a stack per depth of the recursion, each call at its depth.
    assert len(fib) == 16 and [calls for _, calls in fib[:3]] == [1, 2, 4]
    assert sum(calls for _, calls in fib) == 3193
    assert all(s.total >= s.own >= 0 for s in stacks)


def collapsed_lines(text: str) -> list[tuple[list[str], int]]:
    """flamegraph.pl's reading of the file: every line a stack, a space and a count."""
    lines = []
    for line in text.splitlines():
        found = LINE.match(line)
        assert found, line
        frames = found["stack"].split(";")
        assert all(frames), line
        lines.append((frames, int(found["value"])))
    return lines


def test_a_real_program_s_collapsed_file_totals_pstats(hp: ModuleType, tmp_path: Path) -> None:
    profile = profile_of(hp, program)
    out = tmp_path / "profile.collapsed"
    profile.dump(str(out), "collapsed")
    lines = collapsed_lines(out.read_text(encoding="utf-8"))
    total = sum(v[2] for v in profile.stats.values())
    assert sum(value for _, value in lines) * NS == pytest.approx(total, abs=NS)
    assert len({";".join(frames) for frames, _ in lines}) == len(lines)  # a line per stack
    advance = [value for frames, value in lines if frames[-1].startswith("advance (")]
    tt = next(v[2] for k, v in profile.stats.items() if k[2] == "advance")
    assert sum(advance) * NS == pytest.approx(tt, abs=len(advance) * NS)


def test_a_real_program_s_speedscope_file_is_valid_and_totals_pstats(
    hp: ModuleType, tmp_path: Path
) -> None:
    profile = profile_of(hp, program)
    out = tmp_path / "profile.speedscope.json"
    profile.dump(str(out), "speedscope", name="program")
    document = json.loads(out.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(document)
    (sampled,) = document["profiles"]
    assert sampled["type"] == "sampled" and sampled["unit"] == "nanoseconds"
    assert len(sampled["samples"]) == len(sampled["weights"])
    total = sum(v[2] for v in profile.stats.values())
    assert sum(sampled["weights"]) == sampled["endValue"]
    assert sum(sampled["weights"]) * NS == pytest.approx(total, abs=NS)
    frames = document["shared"]["frames"]
    names = {frames[i]["name"] for sample in sampled["samples"] for i in sample}
    assert {"advance", "fib", "Task.step", "<built-in method math.sqrt>"} <= names


def test_the_bound_folds_new_stacks_into_truncated_and_keeps_the_sums(hp: ModuleType) -> None:
    """A few nodes only: the stacks past them fold into '[truncated]' children, each call still
    counted once and each own time kept."""
    profile = profile_of(hp, program, stack_nodes=40)
    stacks = profile.stacks()
    assert len(stacks) <= 2 * 40
    assert any(s.frames[-1].name == "[truncated]" for s in stacks)
    assert_stacks_sum_to_stats(stacks, profile.stats)
    none = profile_of(hp, program, stack_nodes=0)  # no tree: cProfile's totals alone
    assert none.stacks() == [] and none.stats.keys() == profile.stats.keys()
    with pytest.raises(ValueError, match="stack_nodes must be 0 to 2"):
        hp.Profile(stack_nodes=-1)


def test_a_million_distinct_stacks_keep_to_the_default_bound(hp: ModuleType) -> None:
    """100 functions each calling all 100 twice over: 1,010,100 distinct stacks. The tree keeps
    the first 2**18 nodes it meets and folds the rest into '[truncated]' nodes."""
    namespace: dict[str, Any] = {"FUNCS": []}
    for i in range(100):  # a code object each: one def run 100 times would share one
        source = (
            f"def f{i}(depth):\n    if depth:\n        for g in FUNCS:\n            g(depth - 1)\n"
        )
        exec(source, namespace)
        namespace["FUNCS"].append(namespace[f"f{i}"])

    def everything() -> None:
        for f in namespace["FUNCS"]:
            f(2)

    profile = profile_of(hp, everything)
    stacks = profile.stacks()
    assert len(stacks) <= 2 * 2**18
    assert len(stacks) > 2**18 - 10
    assert sum(s.calls for s in stacks) == 100 + 100**2 + 100**3 + 2  # everything and disable
    assert any(s.frames[-1].name == "[truncated]" for s in stacks)
    assert_stacks_sum_to_stats(stacks, profile.stats)


def deep(n: int) -> int:
    return 0 if n == 0 else 1 + deep(n - 1)


def test_a_deep_recursion_stops_at_the_depth_bound(hp: ModuleType, tmp_path: Path) -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(5000)
    try:
        profile = profile_of(hp, lambda: deep(2000))
    finally:
        sys.setrecursionlimit(limit)
    stacks = profile.stacks()
    assert max(len(s.frames) for s in stacks) == 512 + 1
    (folded,) = [s for s in stacks if s.frames[-1].name == "[truncated]"]
    assert folded.calls == 2001 - 511  # the lambda and 511 levels of deep() kept
    assert 0 < folded.own <= folded.total
    assert_stacks_sum_to_stats(stacks, profile.stats)
    out = tmp_path / "deep.collapsed"
    profile.dump(str(out), "collapsed")
    assert sum(len(frames) for frames, _ in collapsed_lines(out.read_text("utf-8"))) < 600 * 600


def test_threads_stacks_are_summed_as_their_stats(hp: ModuleType) -> None:
    def threads() -> None:
        workers = [threading.Thread(target=job) for job in (wl.recursion, wl.builtins)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    for builtins in (True, False):
        profile = profile_of(hp, threads, builtins=builtins)
        stacks = profile.stacks()
        assert_stacks_sum_to_stats(stacks, profile.stats)
        fib = [(k, v[1]) for k, v in profile.stats.items() if k[2] == "fib"]
        assert by_function(stacks)[fib[0][0]][0] == fib[0][1]


def test_a_thread_running_before_enable_starts_its_stacks_at_its_next_call(
    hp: ModuleType,
) -> None:
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
    stacks = profile.stacks()
    profile.create_stats()
    assert_stacks_sum_to_stats(stacks, profile.stats)
    roots = [s for s in stacks if len(s.frames) == 1 and s.frames[0].name == "fib"]
    assert [s.calls for s in roots] == [1]  # waiting() was open before enable: not a frame
    assert sum(s.calls for s in stacks if s.frames[-1].name == "fib") == 177


def test_the_flame_graph_is_an_svg_of_the_stacks(hp: ModuleType, tmp_path: Path) -> None:
    profile = profile_of(hp, program)
    out = tmp_path / "flame.svg"
    profile.dump(str(out), "flamegraph", name="program")
    root = ET.parse(out).getroot()
    svg = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{svg}svg"
    titles = [t.text or "" for t in root.iter(f"{svg}title")]
    assert any(t.startswith("fib (") for t in titles)
    assert titles[0].startswith("all: ") and "(100.00%)" in titles[0]
    assert out.stat().st_size < 200_000


def test_the_command_line_writes_each_format(installed: Path, tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text("def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\n"
                      "print(fib(12))\n", encoding="utf-8")  # fmt: skip
    for fmt in ("collapsed", "speedscope", "flamegraph"):
        out = tmp_path / f"out.{fmt}"
        done = python(installed, "-m", "hspcprof", "--format", fmt, "-o", out, script)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "144\n" and out.stat().st_size > 0
    lines = collapsed_lines((tmp_path / "out.collapsed").read_text("utf-8"))
    assert any(frames[-1] == f"fib ({script}:1)" and len(frames) == 14 for frames, _ in lines)
    assert json.loads((tmp_path / "out.speedscope").read_text("utf-8"))["name"] == "script.py"
    refused = python(installed, "-m", "hspcprof", "--format", "collapsed", script)
    assert refused.returncode == 2
    assert "--format collapsed writes a file: give -o FILE" in refused.stderr
