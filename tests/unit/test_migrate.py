"""hspc_gen.search.records.migrate, on what hspc-gen wrote before the one store
(tests/data/previous, made at dd4fbca with a real calibration and a real user's-code cost): the
store's lines read as they are, the host's JSON caches taken into the store once, and a format-1
wisdom file read as records."""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from command import EXAMPLE
from hspc_gen import wiring
from hspc_gen.host.machine import read_host
from hspc_gen.model.wisdom import HostPart
from hspc_gen.search.measure import calibrate, preflight
from hspc_gen.search.measure.preflight import UserCode
from hspc_gen.search.records import migrate, wisdom
from hspc_gen.search.records.entries import CalibrationRecord, UserCodeRecord
from hspc_gen.search.records.samples import Cut, MatrixRecord, Record
from hspc_gen.search.records.store import RecordStore

PREVIOUS = Path(__file__).resolve().parents[1] / "data" / "previous"
HOST = "previous-host"
DIGEST = "daa6f1a00d24893c"  # count.cpp on both sides, 24-byte events, dd4fbca's smoke harness
TIMINGS = json.loads((PREVIOUS / "cache" / "host" / f"timings-{HOST}.json").read_text())


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    copy = tmp_path / "cache"
    shutil.copytree(PREVIOUS / "cache", copy)
    return copy


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_the_previous_stores_lines_are_read_as_they_are(cache: Path) -> None:
    store = RecordStore(cache / "records", HOST)
    assert store.skipped == ()
    kinds = [type(e) for e in store.entries()]
    assert kinds == [Record, Record, Record, Cut, MatrixRecord]


def test_the_host_files_are_taken_into_the_store_once(cache: Path) -> None:
    store = RecordStore(cache / "records", HOST)
    before = snapshot(cache / "host")
    assert calibrate.cached(store).timings is None  # not yet taken in
    assert migrate.adopt(cache, store) == 2
    assert snapshot(cache / "host") == before  # left for that version
    reopened = RecordStore(cache / "records", HOST)
    timings = calibrate.cached(reopened).timings
    assert timings is not None and not timings.busy
    assert timings.wake_ns.n == calibrate.SAMPLES == len(TIMINGS["wake_ns"])
    assert timings.wake_ns.median == statistics.median(TIMINGS["wake_ns"])
    assert timings.switch_ns.median == statistics.median(TIMINGS["switch_ns"])
    cost = preflight.recorded(reopened, preflight.code_key(HOST, DIGEST))
    assert cost == UserCode(6.86, 2.3)
    assert migrate.adopt(cache, reopened) == 0  # the store's own answers from now on
    assert len(RecordStore(cache / "records", HOST).entries()) == 7


def test_the_file_names_say_the_host_and_the_key() -> None:
    assert migrate.legacy_key(f"timings-{HOST}.json", HOST) == calibrate.key(HOST)
    code = f"user-code-{HOST}-{DIGEST}.json"
    assert migrate.legacy_key(code, HOST) == preflight.code_key(HOST, DIGEST)
    assert migrate.legacy_fingerprint(code) == HOST
    # A host whose name another's begins with owns none of the other's files.
    assert migrate.legacy_key(f"user-code-{HOST}-x-{DIGEST}.json", HOST) is None
    assert migrate.legacy_fingerprint(f"user-code-{HOST}-x-{DIGEST}.json") == f"{HOST}-x"
    for name in ("calibrate-d906ec022326", f"timings-{HOST}.txt", f"user-code-{HOST}-12.json"):
        assert migrate.legacy_fingerprint(name) is None


def test_a_damaged_host_file_is_not_taken_and_is_counted_on_export(
    cache: Path, tmp_path: Path
) -> None:
    damaged = cache / "host" / f"timings-{HOST}.json"
    damaged.write_text('{"wake_ns": [1.0]')
    store = migrate.opened(cache, HOST)  # the user's code's cost alone is taken in
    assert len(store.keyed(UserCodeRecord, preflight.code_key(HOST, DIGEST))) == 1
    assert calibrate.cached(store).timings is None  # measured again by the next run
    # ... and said: the run's notes name the file, also once the store is read again.
    store.reload()
    assert store.skipped == (f"{damaged}: a file of the previous hspc-gen, not readable",)
    (note,) = wiring.store_notes(store)
    assert note.startswith("1 record(s) could not be read") and str(damaged) in note
    report = wisdom.export(cache, tmp_path / "w.wisdom", (), HOST)
    assert dict(report.ignored) == {wisdom.UNREADABLE_HOST_FILE: 1}


def test_export_carries_the_host_files_without_writing_the_cache(
    cache: Path, tmp_path: Path
) -> None:
    before = snapshot(cache)
    report = wisdom.export(cache, tmp_path / "w.wisdom", (), HOST)
    assert report.hosts == (HostPart(HOST, 5, 2),) and report.ignored == ()
    assert snapshot(cache) == before
    document = json.loads((tmp_path / "w.wisdom").read_text())
    assert document["version"] == wisdom.FORMAT_VERSION
    assert set(document["payload"]["hosts"][0]) == {"fingerprint", "entries"}


def test_an_import_does_not_displace_what_the_previous_version_measured_here(
    cache: Path, tmp_path: Path
) -> None:
    """The cache's files of the previous version are its own measurements, not yet in its
    store: an import's calibration of the same host is kept out as if they were."""
    elsewhere = tmp_path / "elsewhere"
    other = CalibrationRecord(calibrate.key(HOST), (99000.0,), (9000.0,), busy=False)
    RecordStore(elsewhere / "records", HOST).append(other)
    wisdom.export(elsewhere, tmp_path / "w.wisdom", (), HOST)
    report = wisdom.import_file(tmp_path / "w.wisdom", cache, HOST, print)
    assert report.hosts == (HostPart(HOST, 0, 0, kept=1),)
    store = migrate.opened(cache, HOST)
    own = store.latest(CalibrationRecord, calibrate.key(HOST))
    assert own is not None and list(own.wake_ns) == TIMINGS["wake_ns"]
    assert len(store.keyed(CalibrationRecord, calibrate.key(HOST))) == 1


def test_a_wisdom_file_of_format_1_is_read_as_records(tmp_path: Path) -> None:
    fresh, again = tmp_path / "fresh", tmp_path / "again"
    imported = wisdom.import_file(PREVIOUS / "previous.wisdom", fresh, HOST, print)
    assert imported.hosts == (HostPart(HOST, 5, 2),) and imported.ignored == ()
    assert imported.made_by == "0.1.0"
    store = RecordStore(fresh / "records", HOST)
    calibration = store.latest(CalibrationRecord, calibrate.key(HOST))
    assert calibration is not None and list(calibration.wake_ns) == TIMINGS["wake_ns"]
    assert store.latest(UserCodeRecord, preflight.code_key(HOST, DIGEST)) is not None
    assert not (fresh / "host").exists()
    # Exported again, it is this version's wisdom, and says the same.
    file = tmp_path / "again.wisdom"
    assert wisdom.export(fresh, file, (), HOST).hosts == (HostPart(HOST, 5, 2),)
    wisdom.import_file(file, again, HOST, print)
    assert RecordStore(again / "records", HOST).entries() == store.entries()


def test_a_run_on_a_cache_of_the_previous_version_uses_its_calibration(
    cache: Path, tmp_path: Path
) -> None:
    """The CLI at --effort estimate (no measuring) reads the previous version's calibration,
    renamed for this host, as it read it before: through the store now."""
    here = read_host().fingerprint
    (cache / "host" / f"timings-{HOST}.json").rename(cache / "host" / f"timings-{here}.json")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hspc_gen",
            "--target",
            EXAMPLE,
            "--effort",
            "estimate",
            "--out",
            tmp_path / "out",
            "--cache",
            cache,
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    timings = json.loads(done.stdout)["host_timings"]
    assert timings["wake_ns"]["median"] == statistics.median(TIMINGS["wake_ns"])
    lines = (cache / "records" / f"{here}.jsonl").read_text().splitlines()
    assert [json.loads(line)["kind"] for line in lines] == ["calibration"]


def test_the_command_imports_a_wisdom_file_of_format_1(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hspc_gen",
            "wisdom",
            "import",
            "--cache",
            tmp_path / "cache",
            PREVIOUS / "previous.wisdom",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "(written by hspc-gen 0.1.0)" in done.stdout.splitlines()[0]
    assert f"  {HOST}: 5 entries and 2 host record(s) added, 0 already here" in done.stdout
