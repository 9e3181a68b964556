"""hspcprof's Stage Two (examples/pyprof/stage2): the recorder keeps a real program's events in
order as hspcprof's hook sees them, the committed recording is one a cyclic replay can run for
ever, and hspc-gen builds and runs the replaying producer and hspcprof's real aggregation code
(included from src/hspcprof, beside the sources) through its own path."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PYPROF = REPO / "examples" / "pyprof"
STAGE2 = PYPROF / "stage2"


def recorder() -> ModuleType:
    """record.py, a script rather than a module of a package."""
    spec = importlib.util.spec_from_file_location("stage2_record", STAGE2 / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def program() -> None:
    for n in range(12):
        fib(n)
        len([n])  # a builtin: its own events, as hspcprof's hook reports it
        "-".join(["a", "b"])  # a method of a builtin type, also a PyCFunction


def test_the_recorder_keeps_the_events_hspcprof_sees_in_order() -> None:
    record = recorder()
    first, second = (record.events_of(record.hooked(program)) for _ in range(2))
    assert (first.labels, first.kinds) == (second.labels, second.kinds)  # deterministic
    names = set(first.labels)
    assert "<built-in builtins.len>" in names and "<built-in str.join>" in names
    assert any(name.startswith("fib (test_pyprof_stage2.py:") for name in names)
    assert first.kinds.count(0) == first.kinds.count(1)
    start, end = record.balanced_segment(first.kinds, 10, 50)
    assert end - start >= 50
    recording = record.fitted([first, second], start, end, pace_ns=500.0)
    gaps = [gap for _, _, gap in recording.events]
    assert abs(sum(gaps) / len(gaps) - 500.0) < 1.0  # the mean is the pace it was given
    assert depths([kind for _, kind, _ in recording.events])[-1] == 0


def depths(kinds: list[int]) -> list[int]:
    """The call depth after each event, which must never go below where it started."""
    out, depth = [], 0
    for kind in kinds:
        depth += 1 if kind == 0 else -1
        assert depth >= 0
        out.append(depth)
    return out


def committed() -> tuple[int, list[bool], list[int]]:
    text = (STAGE2 / "recording.inc").read_text(encoding="utf-8")
    functions = int(re.search(r"kFunctions = (\d+);", text)[1])  # type: ignore[index]
    flags = [flag == "1" for flag in re.findall(r"^\s+([01]),  // \d+: ", text, re.M)]
    declared, body = re.search(r"kEvents\[(\d+)\] = \{([^}]*)\}", text).groups()  # type: ignore[union-attr]
    words = [int(word) for word in re.findall(r"\d+", body)]
    assert len(words) == int(declared) and len(flags) == functions
    return functions, flags, words


def test_the_committed_recording_replays_cyclically() -> None:
    functions, flags, words = committed()
    assert 10_000 <= len(words) <= 100_000  # a few 10k events: small, yet many rounds
    assert all(0 <= (word >> 1) & 0x7F < functions and word >> 8 > 0 for word in words)
    assert depths([word & 1 for word in words])[-1] == 0  # balanced: no call left open
    assert any(flags) and not all(flags)  # Python functions and builtins


# The estimate's channel, fixed: only Stage Two's last steps run (placement, the confirmation and
# its baselines), all with the user's code, in seconds.
FIXED = ("padding_bytes=128", "stack_offset_bytes=0", "buffers=4", "buffer_bytes=64KiB",
         "primitive=futex")  # fmt: skip


@pytest.mark.slow
def test_hspc_gen_measures_the_replay_and_the_real_aggregation(tmp_path: Path) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    fixed = [arg for value in FIXED for arg in ("--set", value)]
    done = subprocess.run(
        [sys.executable, "-m", "hspc_gen", "--target", PYPROF / "app.yaml", "--effort", "quick",
         "--budget", "60s", *fixed, "--out", out, "--cache", cache, "--json"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    assert (out / "pyprof_channel.hpp").is_file()
    assert result["failures"] == []
    # Both sides' own code ran alone (its cost per event, kept in the cache for this host and
    # code) and in the channel's samples and the baselines beside them.
    work = result["recommendation"]["work_ns_per_event"]
    assert work["producer"] > 0 and work["consumer"] > 0
    lines = [ln for f in (cache / "records").glob("*.jsonl") for ln in f.read_text().splitlines()]
    assert [json.loads(line)["kind"] for line in lines].count("user_code") == 1
    assert {"producer_alone", "consumer_alone"} <= set(result["baselines"])


def test_gaps_above_the_pace_are_scaled_to_it() -> None:
    """A recording taken beside other load may see its gaps, less the Python hook's calls,
    exceed the real producer's pace: they are scaled to it, the order kept, the mean the pace."""
    record = recorder()
    run = record.Events(["f", "f", "g", "g"], [0, 1, 0, 1], [300, 500, 100, 300], [1] * 4, 100.0)
    recording = record.fitted([run, run], 0, 4, 150.0)
    assert recording.c_hook_ns == 0.0
    assert [gap for _, _, gap in recording.events] == [150, 300, 0, 150]  # 200, 400, 0, 200
    assert [kind for _, kind, _ in recording.events] == [0, 1, 0, 1]
