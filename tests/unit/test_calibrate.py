"""hspc_gen.search.measure.calibrate: the host's wait costs, measured by the real program
(runtime/bench/calibrate_main.cpp, built with the real compiler), cached per host fingerprint."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hspc_gen.model import LIMITS
from hspc_gen.search.measure import calibrate

FINGERPRINT = "test-host"


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, calibrate.Calibrated]:
    cache = tmp_path_factory.mktemp("cache")
    # A command of words, as the Meson snippet hands over a wrapped compiler (`ccache c++`).
    return cache, calibrate.calibrate(cache, FINGERPRINT, "env c++")


def test_the_host_is_measured_once_and_cached(
    measured: tuple[Path, calibrate.Calibrated],
) -> None:
    cache, calibrated = measured
    timings = calibrated.timings
    assert calibrated.note is None and timings is not None
    assert timings.switch_ns.n == calibrate.SAMPLES and timings.switch_ns.median > 0
    two_cpus = len(os.sched_getaffinity(0)) >= 2
    assert timings.wake_ns.n == (calibrate.SAMPLES if two_cpus else 0)
    budgets = timings.budgets()
    for budget in (budgets.sleep_ns, budgets.yield_ns):
        assert LIMITS["spin_ns"].allows(budget) and budget % 50 == 0 and budget > 0
    record = json.loads((cache / "host" / f"timings-{FINGERPRINT}.json").read_text())
    assert len(record["switch_ns"]) == calibrate.SAMPLES
    assert calibrate.cached(cache, FINGERPRINT) == calibrated


def test_a_quiet_calibration_is_reused_without_building(tmp_path: Path) -> None:
    record = tmp_path / "host" / f"timings-{FINGERPRINT}.json"
    record.parent.mkdir()
    record.write_text(json.dumps({"wake_ns": [20000, 30000], "switch_ns": [2000], "busy": False}))
    got = calibrate.calibrate(tmp_path, FINGERPRINT, "/nonexistent/c++")
    assert got.timings is not None and got.timings.wake_ns.median == 25000
    assert got.timings.budgets().sleep_ns == 25000


def test_a_program_that_cannot_be_built_leaves_the_default_budgets_and_says_why(
    tmp_path: Path,
) -> None:
    got = calibrate.calibrate(tmp_path, FINGERPRINT, "/nonexistent/c++")
    assert got.timings is None
    assert got.note is not None and "could not build" in got.note
    assert not (tmp_path / "host" / f"timings-{FINGERPRINT}.json").exists()


def test_a_damaged_record_is_named_and_measured_again(tmp_path: Path) -> None:
    record = tmp_path / "host" / f"timings-{FINGERPRINT}.json"
    record.parent.mkdir()
    record.write_text("{not json")
    note = calibrate.cached(tmp_path, FINGERPRINT).note
    assert note is not None and "could not be read" in note
    assert calibrate.calibrate(tmp_path, FINGERPRINT, "c++").timings is not None
    assert calibrate.cached(tmp_path, FINGERPRINT).timings is not None


def test_no_record_means_no_timings_and_the_default_budget(tmp_path: Path) -> None:
    got = calibrate.cached(tmp_path, FINGERPRINT)
    assert got.timings is None and got.note == "the host's wait costs were never measured here"


def test_the_program_refuses_a_bad_flag(measured: tuple[Path, calibrate.Calibrated]) -> None:
    cache, _ = measured
    (program,) = (cache / "host").glob("calibrate-*")
    done = subprocess.run([program, "--samples=0"], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "--samples=N" in done.stderr
    done = subprocess.run([program, "--samples=3"], capture_output=True, text=True, check=True)
    lines = {name: values for name, *values in map(str.split, done.stdout.splitlines())}
    assert len(lines["switch"]) == 3 and len(lines["wake"]) in (0, 3)
