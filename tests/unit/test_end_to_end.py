"""The product, for real: hspc-gen tunes the example with the real compiler, Meson, Ninja and
Google Benchmark; the header it writes passes the channel's stress test; a re-run from the
records measures nothing and writes the same bytes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from browser import open_page

from hspc_gen.reports import figure_data, html
from hspc_gen.search.tune import CALIBRATION_ROUND

REPO = Path(__file__).resolve().parents[2]
BUDGET = "45s"


def hspc_gen(*args: str | Path, cwd: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "hspc_gen", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    work = tmp_path_factory.mktemp("e2e")
    args = ("--target", REPO / "examples" / "app.yaml", "--effort", "quick", "--budget", BUDGET,
            "--cache", work / "cache", "--json")  # fmt: skip
    # The same command twice (the header's banner names it): keep the cold run's outputs aside.
    cold = hspc_gen(*args, "--out", "out", cwd=work)
    (work / "out").rename(work / "cold")
    shutil.copytree(work / "cache" / "records", work / "cold_records")
    warm = hspc_gen(*args, "--out", "out", cwd=work)
    (work / "out").rename(work / "warm")
    return work, cold, warm


def test_the_tuned_run_measures_and_reports_against_the_baselines(
    runs: tuple[Path, dict[str, Any], dict[str, Any]],
) -> None:
    _, cold, warm = runs
    winner = cold["winner"]
    assert isinstance(winner, dict)
    assert winner["events_per_second"]["median"] > 0
    baselines = cold["baselines"]
    assert isinstance(baselines, dict)
    assert {"producer_alone", "consumer_alone"} <= set(baselines)
    assert cold["efficiency"]["median"] > 0
    assert cold["measured_plans"] > 0
    assert cold["candidates"]
    # The host's wait costs were measured for the spin budgets, and the re-run reads them back.
    timings = cold["host_timings"]
    assert timings["switch_ns"]["median"] > 0 and timings["spin_budgets_ns"]["hybrid"] > 0
    assert warm["host_timings"] == timings or timings["busy"]


def busy_plans(records: Path) -> int:
    """Plans the cold run measured beside other load: a quiet re-run measures them again (all
    but the sizing probes, numbered from CALIBRATION_ROUND, which it keeps)."""
    lines = [
        json.loads(line) for f in records.glob("*.jsonl") for line in f.read_text().splitlines()
    ]
    return len({
        (r["key"]["source_hash"], r["seed"], r["first_round"], r["events_per_sample"])
        for r in lines
        if r.get("kind") == "samples" and r["busy"] and r["first_round"] < CALIBRATION_ROUND
    })  # fmt: skip


def test_the_report_draws_the_runs_own_numbers_and_opens_whole_in_chromium(
    runs: tuple[Path, dict[str, Any], dict[str, Any]],
) -> None:
    work, cold, _ = runs
    out = work / "cold"
    drawn = html.files(cold, None)  # what this run's result document draws, byte for byte
    assert {name: (out / name).read_bytes() for name in drawn} == drawn
    roadmap = [b for panel in figure_data.roadmap(cold) for b in panel.bars]
    assert any(b.kind == "step" for b in roadmap)  # the run measured: its steps are drawn
    opened = open_page(out / html.REPORT_FILE, "example-report.png")
    assert opened.console == ()
    assert len(opened.images) == len(html.FIGURES) and all(w > 0 for _, w in opened.images)
    summary = (out / "hspc-summary.md").read_text()
    assert all(f"]({name})" in summary for name in html.FIGURES)


def test_a_warm_rerun_measures_nothing_and_writes_the_same_header(
    runs: tuple[Path, dict[str, Any], dict[str, Any]],
) -> None:
    work, cold, warm = runs
    remeasured = busy_plans(work / "cold_records")
    if remeasured == 0 or warm["busy"]:
        # Sound records (or a warm run that is itself beside other load, which takes them as
        # they are): everything is replayed, the same decisions, the same bytes.
        assert warm["measured_plans"] == 0
        assert warm["cached_plans"] == cold["measured_plans"]
        assert warm["winner"] == cold["winner"]
        cold_header = (work / "cold" / "example_channel.hpp").read_bytes()
        assert (work / "warm" / "example_channel.hpp").read_bytes() == cold_header
    else:
        # A plan measured beside a busy neighbour is measured again by a quiet run; its new
        # samples may change a decision, and every plan after it then differs too.
        assert warm["measured_plans"] >= 1


def test_the_written_header_passes_the_stress_test(
    runs: tuple[Path, dict[str, Any], dict[str, Any]],
) -> None:
    work, cold, _ = runs
    primitive = cold["winner"]["params"]["primitive"]
    exe = work / "stress"
    flags = ["-std=c++17", "-O2", "-pthread", "-Wall", "-Wextra", "-Wpedantic", "-Werror"]
    header = work / "cold" / "example_channel.hpp"
    defines = [
        f'-DHSPC_GENERATED_HEADER="{header}"',
        "-DHSPC_GENERATED_NAMESPACE=example",
        f"-DHSPC_STRESS_PRIMITIVE={primitive}",
    ]
    source, include = REPO / "tests" / "cpp" / "stress.cpp", REPO / "tests" / "cpp"
    build = subprocess.run(
        ["g++", *flags, *defines, f"-I{include}", str(source), "-o", str(exe)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0 and build.stderr == "", build.stderr
    done = subprocess.run([str(exe)], capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert "FAIL" not in done.stdout and done.stdout.count("\nok ") >= 10
