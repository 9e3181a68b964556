"""hspc_gen.search.measure.calibrate: the host's wait costs, measured by the real program
(runtime/harness/calibrate_main.cpp, built with the real compiler), kept as a record in the host's
record store."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import pytest

from hspc_gen.model import LIMITS
from hspc_gen.search.measure import calibrate, program
from hspc_gen.search.records.entries import CalibrationRecord
from hspc_gen.search.records.samples import RecordKey
from hspc_gen.search.records.store import RecordStore

FINGERPRINT = "test-host"
KEY = calibrate.key(FINGERPRINT)


def store_in(cache: Path) -> RecordStore:
    return RecordStore(cache / "records", FINGERPRINT)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, calibrate.Calibrated]:
    cache = tmp_path_factory.mktemp("cache")
    # A command of words, as the Meson snippet hands over a wrapped compiler (`ccache c++`).
    return cache, calibrate.calibrate(store_in(cache), cache, "env c++")


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
    (record,) = store_in(cache).keyed(CalibrationRecord, KEY)  # one line, in the one store
    assert len(record.switch_ns) == calibrate.SAMPLES and record.busy is timings.busy
    assert not list(cache.glob("host/*.json"))  # no JSON cache of its own
    assert calibrate.cached(store_in(cache)) == calibrated


def quiet(wake: tuple[float, ...] = (20000.0, 30000.0), busy: bool = False) -> CalibrationRecord:
    return CalibrationRecord(KEY, wake, (2000.0,), busy)


def test_a_calibration_another_program_timed_is_not_taken(tmp_path: Path) -> None:
    """The key names the program's source and headers: a program that times differently (here
    the key before it named them) measures again rather than reuse what the old one timed."""
    store = store_in(tmp_path)
    store.append(dataclasses.replace(quiet(), key=RecordKey(FINGERPRINT, "", "", "")))
    assert calibrate.cached(store).timings is None
    assert KEY.source_hash == program.digest("", "calibrate_main.cpp", calibrate.HEADERS)
    store.append(quiet())
    assert calibrate.cached(store).timings is not None


def test_a_quiet_calibration_is_reused_without_building(tmp_path: Path) -> None:
    store_in(tmp_path).append(quiet())
    got = calibrate.calibrate(store_in(tmp_path), tmp_path, "/nonexistent/c++")
    assert got.timings is not None and got.timings.wake_ns.median == 25000
    assert got.timings.budgets().sleep_ns == 25000


def test_the_latest_calibration_holds(tmp_path: Path) -> None:
    """A quiet run measuring a busy calibration again appends its own: the newest answers."""
    store = store_in(tmp_path)
    store.append(quiet((90000.0,), busy=True))
    store.append(quiet((20000.0,)))
    got = calibrate.cached(store_in(tmp_path)).timings
    assert got is not None and got.wake_ns.median == 20000 and not got.busy


def test_a_program_that_cannot_be_built_leaves_the_default_budgets_and_says_why(
    tmp_path: Path,
) -> None:
    got = calibrate.calibrate(store_in(tmp_path), tmp_path, "/nonexistent/c++")
    assert got.timings is None
    assert got.note is not None and "could not build" in got.note
    assert store_in(tmp_path).entries() == ()


def test_a_damaged_record_is_named_and_measured_again(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    store.path.parent.mkdir(parents=True)
    store.path.write_text('{"kind":"calibration","schema":2,"key":{}}\n')
    damaged = store_in(tmp_path)
    assert len(damaged.skipped) == 1  # the run's notes name it (wiring.store_notes)
    assert calibrate.cached(damaged).timings is None
    assert calibrate.calibrate(damaged, tmp_path, "c++").timings is not None
    assert calibrate.cached(store_in(tmp_path)).timings is not None


def test_no_record_means_no_timings_and_the_default_budget(tmp_path: Path) -> None:
    got = calibrate.cached(store_in(tmp_path))
    assert got.timings is None and got.note == "the host's wait costs were never measured here"


def test_the_program_refuses_a_bad_flag(measured: tuple[Path, calibrate.Calibrated]) -> None:
    cache, _ = measured
    (program,) = (cache / "host").glob("calibrate-*")
    done = subprocess.run([program, "--samples=0"], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "--samples=N" in done.stderr
    done = subprocess.run([program, "--samples=3"], capture_output=True, text=True, check=True)
    lines = {name: values for name, *values in map(str.split, done.stdout.splitlines())}
    assert len(lines["switch"]) == 3 and len(lines["wake"]) in (0, 3)
