"""The product, for real: hspc-gen tunes the example with the real compiler, Meson, Ninja and
Google Benchmark; the header it writes passes the channel's stress test; a re-run from the
records measures nothing and writes the same bytes, and so does the same command on another
cache that imported the first one's wisdom."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from browser import open_page
from hspc_gen.model.result_file import load_result
from hspc_gen.reports import figure_data, html
from hspc_gen.search.tune import CALIBRATION_ROUND

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
BUDGET = "45s"
# The cache and the outputs are named relative to the working folder, so that the same command
# line (the header's banner names it) runs on another cache in another folder.
ARGS = ("--target", REPO / "examples" / "app.yaml", "--effort", "quick", "--budget", BUDGET,
        "--cache", "cache", "--json", "--out", "out")  # fmt: skip
HEADER = "example_channel.hpp"


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
    # The same command twice (the header's banner names it): keep the cold run's outputs aside.
    cold = hspc_gen(*ARGS, cwd=work)
    (work / "out").rename(work / "cold")
    shutil.copytree(work / "cache" / "records", work / "cold_records")
    warm = hspc_gen(*ARGS, cwd=work)
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
    # Never above 1: a figure past the bound is measured again, then given at 1.0 (within the
    # noise) or unresolved with why (surely past it, as beside other load it can be).
    efficiency = cold["efficiency"]
    assert (efficiency and 0 < efficiency["median"] <= 1.0) or cold["efficiency_unresolved"]
    assert cold["measured_plans"] > 0
    assert cold["candidates"]
    # The host's wait costs were measured for the spin budgets, and the re-run reads them back.
    timings = cold["host_timings"]
    assert timings["switch_ns"]["median"] > 0 and timings["spin_budgets_ns"]["hybrid"] > 0
    assert warm["host_timings"] == timings or timings["busy"]
    # So were the CPU pairs, once, before the search (measured again only beside other load).
    pairs = cold["host"]["topology"]
    assert pairs["status"] == "measured" and pairs["classes"]
    assert warm["host"]["topology"]["status"] == "stored" or pairs["matrix"]["busy"]


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
    loaded = load_result(cold)
    drawn = html.files(loaded, None)  # what this run's result document draws, byte for byte
    assert {name: (out / name).read_bytes() for name in drawn} == drawn
    roadmap = [b for panel in figure_data.roadmap(loaded.result) for b in panel.bars]
    assert any(b.kind == "step" for b in roadmap)  # the run measured: its steps are drawn
    opened = open_page(out / figure_data.REPORT_FILE, "example-report.png")
    assert opened.console == ()
    assert len(opened.images) == len(figure_data.FIGURES) and all(w > 0 for _, w in opened.images)
    summary = (out / "hspc-summary.md").read_text()
    assert all(f"]({name})" in summary for name in figure_data.FIGURES)


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
        cold_header = (work / "cold" / HEADER).read_bytes()
        assert (work / "warm" / HEADER).read_bytes() == cold_header
    else:
        # A plan measured beside a busy neighbour is measured again by a quiet run; its new
        # samples may change a decision, and every plan after it then differs too.
        assert warm["measured_plans"] >= 1


def wisdom(*args: str | Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "hspc_gen", "wisdom", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def measured_beside_load(cache: Path) -> bool:
    """Whether anything in the cache was measured beside other load: a quiet run measures that
    again instead of replaying it (the calibration too)."""
    records = (cache / "records").glob("*.jsonl")
    lines = [json.loads(ln) for f in records for ln in f.read_text().splitlines() if ln]
    calibrations = [c for c in lines if c.get("kind") == "calibration"]
    matrices = [m["matrix"] for m in lines if m.get("kind") == "matrix"]  # the CPU pairs
    busy = [*calibrations, *matrices]
    return busy_plans(cache / "records") > 0 or any(c["busy"] for c in busy)


def test_imported_wisdom_replays_the_same_header_without_measuring(
    runs: tuple[Path, dict[str, Any], dict[str, Any]], tmp_path: Path
) -> None:
    work, _, warm = runs
    file = tmp_path / "fleet.wisdom"
    assert "(this host)" in wisdom("export", "--cache", work / "cache", file)
    there = tmp_path / "there"  # another folder, an empty cache: as on another machine
    there.mkdir()
    assert "this host replays it" in wisdom("import", "--cache", there / "cache", file)
    records = there / "cache" / "records"
    stores = {f: f.read_bytes() for f in records.glob("*.jsonl")}
    replayed = hspc_gen(*ARGS, cwd=there)  # the very command the measuring cache ran
    # A run beside other load takes every record as it is; a quiet one measures again what was
    # measured beside load, and only then may it measure here.
    if replayed["busy"] or not measured_beside_load(work / "cache"):
        assert replayed["measured_plans"] == 0
    if replayed["measured_plans"] == 0:
        assert replayed["cached_plans"] > 0
        assert (there / "out" / HEADER).read_bytes() == (work / "warm" / HEADER).read_bytes()
        assert replayed["winner"] == warm["winner"]
        assert replayed["host_timings"] == warm["host_timings"]
        # Nothing measured: no record appended (thread search, budget cuts), nothing built,
        # no calibration program.
        assert {f: f.read_bytes() for f in records.glob("*.jsonl")} == stores
        assert not (there / "cache" / "builds").exists()
        assert not list((there / "cache" / "host").glob("calibrate-*"))


def test_the_written_header_passes_the_stress_test(
    runs: tuple[Path, dict[str, Any], dict[str, Any]],
) -> None:
    work, cold, _ = runs
    primitive = cold["winner"]["params"]["primitive"]
    exe = work / "stress"
    flags = ["-std=c++17", "-O2", "-pthread", "-Wall", "-Wextra", "-Wpedantic", "-Werror"]
    header = work / "cold" / HEADER
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
