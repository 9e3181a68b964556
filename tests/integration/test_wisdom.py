"""hspc_gen.search.records.wisdom and `hspc-gen wisdom`: what one cache measured, exported, checked
by its content hash and merged into another cache without duplicates (the real replay from an
imported cache is test_end_to_end's)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import fake_runner as fr
from hspc_gen.errors import UserError
from hspc_gen.model import ChannelParams, Primitive, Status
from hspc_gen.model.topology import Matrix, PairTiming
from hspc_gen.model.wisdom import HostPart, WisdomAction, WisdomReport
from hspc_gen.reports import wisdom as wisdom_report
from hspc_gen.search.measure import calibrate, preflight
from hspc_gen.search.records import store as store_module
from hspc_gen.search.records import wisdom
from hspc_gen.search.records.entries import CalibrationRecord, UserCodeRecord
from hspc_gen.search.records.samples import Candidate, Cut, MatrixRecord, Record, RecordKey
from hspc_gen.search.records.store import RecordStore

HOST_A, HOST_B = "host-a", "host-b"
PARAMS = ChannelParams(128, 4096, 4, 2048, Primitive.futex, 0, 1)
USER_CODE = UserCodeRecord(preflight.code_key(HOST_A, "0123456789abcdef"), 40.0, 15.0)


def key(fingerprint: str = HOST_A, source: str = "src-1") -> RecordKey:
    return RecordKey(fingerprint, source, "g++ 12.2.0", "--buildtype=release")


def record(arm: str, fingerprint: str = HOST_A, seed: int = 42, ns: float = 25.0) -> Record:
    samples = tuple(fr.Simulated(seed=seed).samples(arm, ns, 3, fr.Cost()))
    candidate = Candidate(PARAMS, "two", "placement")
    return Record(key(fingerprint), arm, Status.ok, samples, candidate, seed, fr.EVENTS_PER_SAMPLE)


def timings(busy: bool = False, wake: float = 20000.0) -> CalibrationRecord:
    return CalibrationRecord(calibrate.key(HOST_A), (wake, wake + 100.0), (2000.0,), busy)


def calibration(cache: Path) -> CalibrationRecord | None:
    return store(cache).latest(CalibrationRecord, calibrate.key(HOST_A))


def store(cache: Path, fingerprint: str = HOST_A) -> RecordStore:
    return RecordStore(cache / "records", fingerprint)


@pytest.fixture
def measured(tmp_path: Path) -> Path:
    """A cache that measured two hosts: host A with its calibration and its user's code's cost."""
    cache = tmp_path / "measured"
    store(cache).extend([record("c1"), record("c2"), record("c1", seed=43)])
    store(cache).append(Cut(key(), "quick:40s", (42, 12)))
    store(cache, HOST_B).append(record("c1", fingerprint=HOST_B))
    store(cache).append(timings())
    store(cache).append(USER_CODE)
    return cache


def export(cache: Path, file: Path, *fingerprints: str) -> WisdomReport:
    return wisdom.export(cache, file, fingerprints, this_host=HOST_A)


def import_(file: Path, cache: Path) -> WisdomReport:
    return wisdom.import_file(file, cache, this_host=HOST_A, on_wait=print)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_an_empty_cache_gets_every_entry_and_host_record(measured: Path, tmp_path: Path) -> None:
    file = tmp_path / "fleet.wisdom"
    exported = export(measured, file)
    assert exported.action is WisdomAction.export and exported.ignored == ()
    assert exported.hosts == (HostPart(HOST_A, 4, 2), HostPart(HOST_B, 1, 0))
    fresh = tmp_path / "fresh"
    imported = import_(file, fresh)
    assert imported.hosts == (HostPart(HOST_A, 4, 2), HostPart(HOST_B, 1, 0))
    for fingerprint in (HOST_A, HOST_B):
        # The same records in the same order: a replay takes a round's latest samples.
        assert store(fresh, fingerprint).records() == store(measured, fingerprint).records()
    assert store(fresh).was_cut(Cut(key(), "quick:40s", (42, 12)))
    assert store(fresh).entries() == store(measured).entries()  # the host records too
    assert calibration(fresh) == timings() and not (fresh / "host").exists()


def test_importing_twice_changes_nothing(measured: Path, tmp_path: Path) -> None:
    file, fresh = tmp_path / "fleet.wisdom", tmp_path / "fresh"
    export(measured, file)
    import_(file, fresh)
    before = snapshot(fresh)
    again = import_(file, fresh)
    assert again.hosts == (
        HostPart(HOST_A, 0, 0, present=6),
        HostPart(HOST_B, 0, 0, present=1),
    )
    assert snapshot(fresh) == before


def test_host_fingerprint_exports_that_host_only(measured: Path, tmp_path: Path) -> None:
    file, fresh = tmp_path / "a.wisdom", tmp_path / "fresh"
    assert [p.fingerprint for p in export(measured, file, HOST_A).hosts] == [HOST_A]
    decoded = wisdom.decode(file.read_bytes(), file.name)
    assert [h.fingerprint for h in decoded.hosts] == [HOST_A]
    import_(file, fresh)
    assert store(fresh, HOST_B).records() == ()
    assert store(fresh).records() == store(measured).records()


def test_an_empty_cache_or_an_unknown_host_has_nothing_to_export(
    measured: Path, tmp_path: Path
) -> None:
    with pytest.raises(UserError, match="holds no records"):
        export(tmp_path / "empty", tmp_path / "x.wisdom")
    with pytest.raises(UserError, match=f"nothing for host host-c; it holds {HOST_A}, {HOST_B}"):
        export(measured, tmp_path / "x.wisdom", "host-c")
    assert not (tmp_path / "x.wisdom").exists()


def test_the_caches_own_measurements_are_kept_and_the_others_counted(
    measured: Path, tmp_path: Path
) -> None:
    file, own = tmp_path / "fleet.wisdom", tmp_path / "own"
    export(measured, file)
    mine = record("c1", ns=30.0)  # the same plan's arm, measured here: other samples
    store(own).append(mine)
    store(own).append(timings(wake=5000.0))
    got = import_(file, own).part_of(HOST_A)
    assert got == HostPart(HOST_A, 3, 1, present=0, conflicts=1, kept=1)
    assert store(own).lookup(key(), "c1")[0] == mine
    assert [r.seed for r in store(own).lookup(key(), "c1")] == [42, 43]
    assert calibration(own) == timings(wake=5000.0)


def test_a_calibration_taken_beside_other_load_gives_way_to_a_quiet_one(
    measured: Path, tmp_path: Path
) -> None:
    file, busy = tmp_path / "fleet.wisdom", tmp_path / "busy"
    export(measured, file)
    store(busy).append(timings(busy=True, wake=90000.0))
    assert import_(file, busy).part_of(HOST_A) == HostPart(HOST_A, 4, 2)
    assert calibration(busy) == timings()  # appended after the busy one: the latest holds
    # and a busy import does not displace a quiet calibration
    quiet = tmp_path / "quiet"
    store(quiet, HOST_A).append(timings(wake=7000.0))
    busy_file = tmp_path / "busy.wisdom"
    export(busy, busy_file, HOST_A)
    assert import_(busy_file, quiet).part_of(HOST_A) == HostPart(HOST_A, 4, 1, kept=2)
    assert calibration(quiet) == timings(wake=7000.0)


def resigned(file: Path, edit: Any) -> None:
    """Edit the payload, then sign it again as the format says (sha256 of its canonical JSON)."""
    document = json.loads(file.read_text())
    edit(document["payload"])
    canonical = json.dumps(document["payload"], sort_keys=True, separators=(",", ":"))
    document["sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    file.write_text(json.dumps(document))


def test_entries_this_version_cannot_use_are_ignored_with_a_count(
    measured: Path, tmp_path: Path
) -> None:
    file, fresh = tmp_path / "fleet.wisdom", tmp_path / "fresh"
    export(measured, file, HOST_A)

    def spoil(payload: dict[str, Any]) -> None:
        entries = payload["hosts"][0]["entries"]
        entries.append({**entries[0], "schema": 1})  # another record format
        entries.append({**timings().to_dict(), "busy": "yes"})  # not a calibration
        entries.append({**entries[0], "kind": "forecast"})  # a kind this version does not know
        entries.append(record("c9", fingerprint=HOST_B).to_dict())  # not host A's
        payload["hosts"].append({"fingerprint": "../etc", "entries": []})

    resigned(file, spoil)
    got = import_(file, fresh)
    assert got.hosts == (HostPart(HOST_A, 4, 2),)
    assert dict(got.ignored) == {
        wisdom.UNREADABLE_ENTRY: 3,
        wisdom.FOREIGN_ENTRY: 1,
        wisdom.BAD_FINGERPRINT: 1,
    }
    assert store(fresh).entries() == store(measured).entries()


def test_a_partial_last_line_is_ended_before_the_imported_lines(
    measured: Path, tmp_path: Path
) -> None:
    file, torn = tmp_path / "fleet.wisdom", tmp_path / "torn"
    export(measured, file, HOST_A)
    kept = record("c7", seed=7)
    store(torn).append(kept)
    whole = json.dumps(record("c8", seed=8).to_dict())
    with store(torn).path.open("a") as handle:
        handle.write(whole[:40])  # a writer killed mid-line
    import_(file, torn)
    reopened = store(torn)
    assert reopened.records() == (kept, *store(measured).records())
    assert len(reopened.skipped) == 1  # the fragment alone


def hspc_gen(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hspc_gen", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def one_byte_changed(text: str) -> str:
    at = text.index('"wall_ns":[') + len('"wall_ns":[')
    digit = text[at]
    return text[:at] + ("1" if digit != "1" else "2") + text[at + 1 :]


REFUSED = {
    "one byte changed": (one_byte_changed, "was altered or damaged"),
    "truncated": (lambda text: text[: len(text) // 2], "is damaged or cut short"),
    "another format version": (
        lambda text: text.replace('"version":2', '"version":3'),
        "is wisdom format 3; this hspc-gen reads formats 1 and 2",
    ),
    "not JSON": (lambda _text: "name: app\nevent:\n  size: 8\n", "not an hspc-gen wisdom file"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_file_that_is_not_whole_wisdom_is_refused_and_nothing_written(
    measured: Path, tmp_path: Path, case: str
) -> None:
    file, cache = tmp_path / "fleet.wisdom", tmp_path / "cache"
    export(measured, file)
    edit, expected = REFUSED[case]
    file.write_text(edit(file.read_text()))
    store(cache).append(record("c5", seed=5))  # a cache with records of its own
    before = snapshot(cache)
    done = hspc_gen("wisdom", "import", "--cache", cache, file)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("hspc-gen: error: ") and done.stderr.count("\n") == 1
    assert expected in done.stderr, done.stderr
    assert snapshot(cache) == before


def test_the_commands_report_what_moved(measured: Path, tmp_path: Path) -> None:
    file = tmp_path / "fleet.wisdom"
    done = hspc_gen("wisdom", "export", "--host-fingerprint", HOST_A, "--cache", measured, file)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"wrote {file}: the wisdom of 1 host(s)"
    assert f"  {HOST_A}: 4 record-store entries, 2 host record(s)" in done.stdout
    for _ in range(2):
        done = hspc_gen("wisdom", "import", "--cache", tmp_path / "fresh", file)
        assert done.returncode == 0, done.stderr
    assert f"  {HOST_A}: 0 entries and 0 host record(s) added, 6 already here" in done.stdout
    assert "nothing in it is for this host" in done.stdout


def test_an_import_whose_part_for_this_host_was_all_left_out_does_not_promise_a_replay() -> None:
    own = HostPart("fp", entries=0, host_records=0, conflicts=4, kept=1)
    report = WisdomReport(WisdomAction.import_, "w.json", "fp", "0.1.0", (own,))
    text = wisdom_report.render(report)
    assert "replays" not in text and "holds its own measurements" in text
    taken = WisdomReport(WisdomAction.import_, "w.json", "fp", "0.1.0", (HostPart("fp", 3, 1),))
    assert "this host replays it" in wisdom_report.render(taken)


def matrix_record(trip: float = 58.0) -> MatrixRecord:
    pair = PairTiming(0, 1, trip, trip - 1, trip + 1, 2323.0, 2320.0, 2330.0)
    return MatrixRecord(key(source="probe-1"), Matrix((0, 1), (pair,), 65536, 21, 200))


def test_the_hosts_topology_matrix_travels_with_the_wisdom(measured: Path, tmp_path: Path) -> None:
    file, fresh, own = tmp_path / "fleet.wisdom", tmp_path / "fresh", tmp_path / "own"
    store(measured).append(matrix_record())
    assert export(measured, file, HOST_A).hosts == (HostPart(HOST_A, 5, 2),)
    assert import_(file, fresh).hosts == (HostPart(HOST_A, 5, 2),)
    assert store(fresh).matrices(key(source="probe-1")) == (matrix_record(),)
    assert import_(file, fresh).hosts == (HostPart(HOST_A, 0, 0, present=7),)
    # A cache that measured its own matrix keeps it: it measured this very host.
    store(own).append(matrix_record(trip=300.0))
    assert import_(file, own).part_of(HOST_A) == HostPart(HOST_A, 4, 2, conflicts=1)
    assert store(own).matrices(key(source="probe-1")) == (matrix_record(trip=300.0),)


def test_an_exporters_later_entries_for_one_measurement_all_come_along(tmp_path: Path) -> None:
    """A calibration measured busy, then again quiet: the importing cache holds both, in order,
    so its latest is the exporter's latest (not the first taken, the second a "conflict")."""
    source, file, empty = tmp_path / "source", tmp_path / "fleet.wisdom", tmp_path / "empty"
    store(source).append(timings(busy=True, wake=90000.0))
    store(source).append(timings())
    export(source, file)
    assert import_(file, empty).part_of(HOST_A) == HostPart(HOST_A, 0, 2)
    assert store(empty).entries() == store(source).entries()


def test_a_run_appending_while_an_import_merges_loses_nothing(
    measured: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Calibration and the user's code's cost append without the store's lock: a line a run
    appends between the import's read and its write stays (the import appends, never rewrites)."""
    file, cache = tmp_path / "fleet.wisdom", tmp_path / "cache"
    export(measured, file, HOST_A)
    real = store_module.append_lines

    def beside_a_run(path: Path, lines: str) -> None:
        store(cache).append(timings(wake=5000.0))  # the run's append, at the worst moment
        real(path, lines)

    monkeypatch.setattr(wisdom, "append_lines", beside_a_run)
    import_(file, cache)
    assert timings(wake=5000.0) in store(cache).entries()
    assert USER_CODE in store(cache).entries()
