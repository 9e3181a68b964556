"""hspc_gen.search.records.store: append-only JSON Lines, torn writes, keys, the recorded replay
data."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fake_runner as fr
from hspc_gen.model import Status
from hspc_gen.model.topology import Matrix, PairTiming
from hspc_gen.search.measure.plan import RunResult, make_plan, records_from_run
from hspc_gen.search.records.samples import (
    Candidate,
    Cut,
    MatrixRecord,
    Record,
    RecordKey,
    Sample,
)
from hspc_gen.search.records.store import (
    RecordStore,
    StoreBusyError,
    locked,
    read_records,
    store_file_name,
)
from store_records import KEY, PARAMS, record


def test_append_then_reopen_gives_the_same_records(tmp_path: Path) -> None:
    store = RecordStore(tmp_path / "cache", KEY.fingerprint)
    first, second = record("c1", latency=850.0), record("c2")
    store.append(first)
    store.append(second)
    assert store.path == tmp_path / "cache" / "host-abc123.jsonl"
    reopened = RecordStore(tmp_path / "cache", KEY.fingerprint)
    assert reopened.records() == (first, second)
    assert reopened.skipped == ()
    lines = store.path.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["arm"] == "c1"


def test_lookup_needs_the_whole_key(tmp_path: Path) -> None:
    store = RecordStore(tmp_path, KEY.fingerprint)
    fresh = record("c1")
    other_source = record("c1", key=RecordKey(KEY.fingerprint, "src-2", KEY.compiler, KEY.flags))
    other_flags = record("c1", key=RecordKey(KEY.fingerprint, "src-1", KEY.compiler, "-O3"))
    store.extend([other_source, fresh, other_flags])
    assert store.lookup(KEY, "c1") == (fresh,)
    assert store.lookup(KEY, "c2") == ()


def test_a_record_of_another_host_is_refused(tmp_path: Path) -> None:
    store = RecordStore(tmp_path, KEY.fingerprint)
    with pytest.raises(ValueError, match="other-host"):
        store.append(record(key=RecordKey("other-host", "s", "c", "f")))


def test_a_truncated_last_line_is_ignored(tmp_path: Path) -> None:
    store = RecordStore(tmp_path, KEY.fingerprint)
    kept = record("c1")
    store.append(kept)
    whole = json.dumps(record("c2").to_dict())
    with store.path.open("a") as f:
        f.write(whole[: len(whole) // 2])  # killed mid-write: no newline
    reopened = RecordStore(tmp_path, KEY.fingerprint)
    assert reopened.records() == (kept,)
    assert reopened.skipped == ()
    # The next append ends the fragment first, so only the fragment is lost.
    later = record("c3")
    reopened.append(later)
    again = RecordStore(tmp_path, KEY.fingerprint)
    assert again.records() == (kept, later)
    assert len(again.skipped) == 1 and ":2:" in again.skipped[0]


def test_a_corrupt_line_in_the_middle_is_skipped_and_reported(tmp_path: Path) -> None:
    path = tmp_path / store_file_name(KEY.fingerprint)
    good = json.dumps(record("c1").to_dict())
    missing_key = json.dumps({"arm": "c9"})
    path.write_text(f"{good}\nnot json at all\n{missing_key}\n\n{good}\n")
    loaded = read_records(path)
    assert [r.arm for r in loaded.records] == ["c1", "c1"]
    assert len(loaded.skipped) == 2
    assert loaded.skipped[0].startswith(f"{path}:2:")


def test_a_sample_that_moved_nothing_cannot_be_made_and_a_stored_one_is_unreadable(
    tmp_path: Path,
) -> None:
    """No Sample moves zero events or takes no time (the statistics divide by both): such a
    stored line, written before the harness's parser made it a failure, is reported and
    measured again, never replayed."""
    for events, wall_ns in ((0, 1e6), (10, 0.0), (-1, 1e6)):
        with pytest.raises(ValueError, match="moved"):
            Sample("c1", 0, events, wall_ns, 1.0, 1.0, 0, 0, 0, True)
    document = record("c1").to_dict()
    document["samples"]["events"][0] = 0
    path = tmp_path / store_file_name(KEY.fingerprint)
    path.write_text(json.dumps(document) + "\n" + json.dumps(record("c2").to_dict()) + "\n")
    loaded = read_records(path)
    assert [r.arm for r in loaded.records] == ["c2"]
    (skipped,) = loaded.skipped
    assert skipped.startswith(f"{path}:1:") and "moved 0 events" in skipped


def test_missing_store_is_empty(tmp_path: Path) -> None:
    assert read_records(tmp_path / "none.jsonl").records == ()
    assert RecordStore(tmp_path / "new", "h").records() == ()


def test_file_names_are_safe() -> None:
    assert store_file_name("epyc-2c-3f9a") == "epyc-2c-3f9a.jsonl"
    unsafe = store_file_name("../../etc/passwd")
    assert unsafe.startswith("host-") and "/" not in unsafe
    assert store_file_name("a b") != store_file_name("a  b")


WRITER = """
import sys
from pathlib import Path
sys.path[:0] = sys.argv[2:]
import store_records
from hspc_gen.search.records.store import RecordStore
store = RecordStore(Path(sys.argv[1]), store_records.KEY.fingerprint)
i = 0
while True:
    store.append(store_records.record(f"c{i}", n=200))
    i += 1
"""


def test_a_killed_writer_leaves_a_readable_store(tmp_path: Path) -> None:
    support = str(Path(__file__).parents[1] / "support")
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), support])
    path = tmp_path / store_file_name(KEY.fingerprint)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and _lines(path) < 20:
            time.sleep(0.05)
        assert proc.poll() is None, "the writer ended before it was killed"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    loaded = RecordStore(tmp_path, KEY.fingerprint)
    assert len(loaded.records()) >= 20
    assert loaded.skipped == ()
    assert [r.arm for r in loaded.records()] == [f"c{i}" for i in range(len(loaded.records()))]


def _lines(path: Path) -> int:
    try:
        with path.open("rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def test_records_from_a_run_split_by_arm() -> None:
    cands = [
        Candidate(PARAMS, "two", "placement"),
        Candidate(PARAMS.replace(buffers=8), "two", "x"),
    ]
    plan = make_plan(
        cands,
        incumbent=cands[0].id,
        baselines=("producer_alone",),
        rounds=4,
        events_per_sample=9,
        seed=1,
    )
    sim = fr.Simulated(seed=1)
    samples = [sim.sample(arm, 20.0, r, fr.Cost()) for r in range(4) for arm in plan.order[r]]
    result = RunResult(Status.ok, tuple(samples), "", {cands[1].id: Status.wrong_answer})
    recs = {r.arm: r for r in records_from_run(KEY, plan, result)}
    assert set(recs) == {cands[0].id, cands[1].id, "producer_alone", f"aa:{cands[0].id}"}
    assert recs[cands[0].id].candidate == cands[0]
    assert recs["producer_alone"].candidate is None
    assert recs[cands[1].id].status is Status.wrong_answer
    assert [s.round for s in recs[cands[0].id].samples] == [0, 1, 2, 3]
    assert all(r.seed == 1 for r in recs.values())


def test_sample_columns_round_trip_and_must_agree() -> None:
    rec = record("c5", latency=1.5)
    data = rec.to_dict()
    assert set(data["samples"]) >= {"round", "wall_ns", "verified", "latency_ns"}
    assert Record.from_dict(json.loads(json.dumps(data))) == rec
    data["samples"]["round"].pop()
    with pytest.raises(ValueError, match="differ in length"):
        Record.from_dict(data)


def test_a_record_from_before_the_run_delay_reads_as_not_known() -> None:
    rec = record("c5")
    data = json.loads(json.dumps(rec.to_dict()))
    assert "delay_ns" in data["samples"]
    del data["samples"]["delay_ns"]
    old = Record.from_dict(data)
    assert {s.delay_ns for s in old.samples} == {-1.0}
    assert not any(s.disturbed for s in old.samples)


def test_the_recorded_replay_data_loads_cleanly() -> None:
    store = RecordStore(fr.RECORDS_DIR, fr.FINGERPRINT)
    assert store.skipped == ()
    keys = {r.key for r in store.records()}
    assert keys == {fr.STAGE_ONE_KEY, fr.STAGE_TWO_KEY}
    for rec in store.records():
        assert len(rec.samples) == fr.RECORDED_ROUNDS
        assert {s.events for s in rec.samples} == {fr.EVENTS_PER_SAMPLE}
    # The heavy tail is there: some spin samples ran several times slower after a context switch.
    spin = [
        r
        for r in store.records()
        if r.candidate and r.candidate.params.primitive.value == "pause_spin"
    ]
    tail = [s for r in spin for s in r.samples if s.nivcsw_producer + s.nivcsw_consumer > 0]
    assert tail
    ratios = [max(s.wall_ns for s in r.samples) / min(s.wall_ns for s in r.samples) for r in spin]
    assert max(ratios) > 3.0


def test_samples_keep_their_derived_figures() -> None:
    s = Sample("a", 0, 1000, 2_000_000.0, 1_500_000.0, 500_000.0, 0, 1, 0, True)
    assert s.events_per_second == 500_000.0
    assert s.ns_per_event == 2000.0
    assert s.cpu_ns_per_event == 2000.0


def test_lines_of_another_format_version_are_reported_and_never_used(tmp_path: Path) -> None:
    path = tmp_path / store_file_name(KEY.fingerprint)
    current = record("c1").to_dict()
    older = {k: v for k, v in current.items() if k not in ("kind", "schema")}  # as 0.1 wrote
    path.write_text(f"{json.dumps(older)}\n{json.dumps(current)}\n")
    store = RecordStore(tmp_path, KEY.fingerprint)
    assert [r.arm for r in store.records()] == ["c1"]
    (note,) = store.skipped
    assert ":1:" in note and "record format 1, this hspc-gen reads" in note


def test_budget_cuts_are_records_of_their_own(tmp_path: Path) -> None:
    store = RecordStore(tmp_path, KEY.fingerprint)
    batch, plan = Cut(KEY, "measure:120s"), Cut(KEY, "measure:120s", (7, 6))
    store.append(batch)
    store.append(plan)
    store.append(record("c1"))
    reopened = RecordStore(tmp_path, KEY.fingerprint)
    assert reopened.was_cut(batch) and reopened.was_cut(plan)
    assert not reopened.was_cut(Cut(KEY, "measure:10m"))  # another budget's run: not cut
    assert not reopened.was_cut(Cut(KEY, "measure:120s", (7, 12)))
    assert [r.arm for r in reopened.records()] == ["c1"]  # no fake arms


def test_one_run_at_a_time_measures_with_a_hosts_records(tmp_path: Path) -> None:
    store = RecordStore(tmp_path, KEY.fingerprint)
    said: list[str] = []
    with locked(store, time.monotonic() + 5, said.append):
        assert said == []
        busy = pytest.raises(StoreBusyError, match=r"another hspc-gen run \(pid \d+\)")
        with busy, locked(store, time.monotonic() + 0.6, said.append):
            pass  # never entered: the first run holds the lock
    assert len(said) == 1 and said[0].startswith("waiting for another hspc-gen run")
    with locked(store, time.monotonic(), said.append):  # released: free at once
        pass


def test_a_store_opened_while_another_run_measured_reads_its_records_once_locked(
    tmp_path: Path,
) -> None:
    """A run opens the store, then waits for the lock while another run measures: once it holds
    the lock it replays what the other run appended instead of measuring it again."""
    waiting = RecordStore(tmp_path, KEY.fingerprint)
    other = RecordStore(tmp_path, KEY.fingerprint)
    with locked(other, time.monotonic() + 5, print):
        other.append(record("c1"))
    assert waiting.lookup(KEY, "c1") == ()
    with locked(waiting, time.monotonic() + 5, print):
        assert waiting.lookup(KEY, "c1") == (record("c1"),)
        waiting.append(record("c2"))
        assert [r.arm for r in waiting.records()] == ["c1", "c2"]


def test_a_topology_matrix_is_an_entry_of_its_own(tmp_path: Path) -> None:
    pair = PairTiming(0, 1, 58.1, 56.7, 59.8, 2323.0, 2323.0, 2333.0)
    matrix = MatrixRecord(KEY, Matrix((0, 1), (pair,), 65536, 21, 200, seconds=0.004))
    other_probe = MatrixRecord(RecordKey(KEY.fingerprint, "probe-2", "g++", "-O2"), matrix.matrix)
    store = RecordStore(tmp_path, KEY.fingerprint)
    store.extend([record("c1")])
    store.append(matrix)
    store.append(other_probe)
    reopened = RecordStore(tmp_path, KEY.fingerprint)
    assert reopened.matrices(KEY) == (matrix,) and reopened.records() == (record("c1"),)
    assert reopened.skipped == ()
    assert json.loads(store.path.read_text().splitlines()[1])["kind"] == "matrix"
