"""Issue 13's benchmark (examples/pyprof/benchmarks): the real harness in a smoke run (--fast, the
workloads' smoke size, a few lines) writes the pyperf JSON and the counters the report reads, and
the report prints a row for every line measured; every workload and every line runs here too.
Durations are never asserted: the harness times, this only checks it does."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import bench_lines
import bench_workloads
import pyperf
import pytest

from pyprof_check import ENV, PRODUCER, REPO, assert_same_counts

pytestmark = pytest.mark.slow

BENCH = REPO / "examples" / "pyprof" / "benchmarks"
SMOKE_LINES = ["none", "hspcprof-channel", "cprofile"]


def run(
    script: str, *argv: str | Path, site: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**ENV, "PYTHONPATH": str(site)} if site else ENV
    words = [sys.executable, str(BENCH / script), *map(str, argv)]
    return subprocess.run(words, capture_output=True, text=True, env=env, check=False, timeout=120)


def test_every_workload_runs_at_its_smoke_size() -> None:
    for workload in bench_workloads.WORKLOADS.values():
        work = workload.prepare("smoke")
        work()


@pytest.mark.parametrize("builtins", [True, False], ids=["builtins", "no-builtins"])
@pytest.mark.parametrize("name", list(bench_workloads.WORKLOADS))
def test_counts_equal_cprofile_on_every_benchmark_workload(
    hp: ModuleType, name: str, builtins: bool
) -> None:
    """The issue's correctness floor on the programs the table times, at their smoke size: per
    function and per caller -> callee edge, primitive and total, with either producer."""
    work = bench_workloads.WORKLOADS[name].prepare("smoke")
    assert_same_counts(hp, work, builtins=builtins)


@pytest.fixture
def hooks_restored() -> Iterator[None]:
    """VizTracer's tracer (on 3.11) sets threading.setprofile when it is made and unsets it only
    when it is freed: the process-wide tracer the line keeps is freed here, and both hooks are
    left as they were found, for the tests that follow."""
    before = sys.getprofile(), threading.getprofile()
    try:
        yield
    finally:
        bench_lines._tracers.clear()
        sys.setprofile(before[0])
        threading.setprofile(before[1])


@pytest.mark.usefixtures("hooks_restored")
@pytest.mark.parametrize("builtins", [True, False], ids=["builtins", "no-builtins"])
def test_every_line_profiles_a_run(hp: ModuleType, builtins: bool) -> None:
    """Each line in this process, as a worker runs it: start, work, finish, then its counts."""
    work = bench_workloads.WORKLOADS["fib"].prepare("smoke")
    for name, make in bench_lines.LINES.items():
        line = make(builtins)
        line.start()
        work()
        line.finish()
        line.close()
        counts = line.counts()
        if name in ("hspcprof-empty", "hspcprof-channel", "hspcprof-inline"):
            assert counts.events and counts.events >= 2 * 1973, name  # fib(15): 1973 calls
            assert counts.stalls is not None and counts.consumer_cpu is not None
            assert counts.producer == PRODUCER[builtins]
        else:
            assert not counts.events, name
        if name == "hook-null":  # the tracing floor, with or without C functions
            assert counts.producer == "setprofile"


@pytest.mark.parametrize("builtins", [True, False], ids=["builtins", "no-builtins"])
def test_a_smoke_run_writes_every_benchmark_and_the_report_prints_every_line(
    installed: Path, tmp_path: Path, builtins: bool
) -> None:
    out = tmp_path / "bench.json"
    lines = ",".join(SMOKE_LINES)
    options = ["--fast", "--size", "smoke", "--workloads", "fib", "--lines", lines]
    options += [] if builtins else ["--no-builtins"]
    done = run(
        "bench_profilers.py", "-o", out, *options, "--min-time", "0.01", site=installed / "site"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    suite = pyperf.BenchmarkSuite.load(str(out))
    assert sorted(suite.get_benchmark_names()) == sorted(f"fib/{line}" for line in SMOKE_LINES)
    for bench in suite.get_benchmarks():
        rounds = {run.get_metadata()["round"] for run in bench.get_runs() if run.values}
        assert rounds == {1, 2}, bench.get_name()
    written = out.with_suffix(".counters.jsonl").read_text(encoding="utf-8")
    counters = [json.loads(text) for text in written.splitlines()]
    taken = [c for c in counters if not c["warmup"]]
    assert sorted({c["benchmark"] for c in taken}) == sorted(suite.get_benchmark_names())
    assert all(c["events"] > 0 for c in taken if c["benchmark"] == "fib/hspcprof-channel")

    report = run("bench_report.py", out)
    assert report.returncode == 0, report.stderr
    rows = [row for row in report.stdout.splitlines() if row.startswith("| ")]
    labels = [f"| {line}" for line in SMOKE_LINES]
    labels[1] += f" ({PRODUCER[builtins]})"
    assert [row.split(" | ")[0] for row in rows[1:]] == labels
    assert "## fib" in report.stdout and "Paired over 2 round(s)" in report.stdout
    assert f"C functions {'profiled' if builtins else 'not profiled'}" in report.stdout


def test_the_command_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    done = run("bench_profilers.py", "-o", tmp_path / "x.json", "--lines", "none,gprof")
    assert done.returncode == 2 and "unknown line gprof" in done.stderr
    done = run("bench_profilers.py", "-o", tmp_path / "x.json", "--python", tmp_path / "python9")
    assert done.returncode == 2 and "python9: not an interpreter that can be run" in done.stderr
    (tmp_path / "old.json").write_text("{}", encoding="utf-8")
    done = run("bench_profilers.py", "-o", tmp_path / "old.json")
    assert done.returncode == 2 and "exists already" in done.stderr
    assert not (tmp_path / "old.counters.jsonl").exists()
    done = run("bench_report.py", tmp_path / "missing.json")
    assert done.returncode == 2 and "cannot read" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "name",
    [
        *("bench", "bench-nob", "floor", "floor-nob"),
        *("short-3.11", "short-3.12", "short-3.13", "table-3.11", "table-3.12", "table-3.13"),
    ],
)
def test_the_committed_tables_are_the_committed_records_reported(name: str) -> None:
    """The README's numbers come from results/: each report there is what bench_report prints
    for the records beside it, byte for byte (the bootstrap is seeded)."""
    results = BENCH / "results"
    done = run("bench_report.py", results / f"{name}.json.gz")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (results / f"{name}.md").read_text(encoding="utf-8")
