"""hspc_gen.search.measure.preflight: the user's own code checked alone, and its cost per event
kept per host and code, so that a re-run (or a host replaying imported wisdom) sizes its samples
as the measuring run did."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hspc_gen.model.workload import Workload
from hspc_gen.search.measure import preflight
from hspc_gen.search.measure.preflight import UserCode
from hspc_gen.search.records.entries import UserCodeRecord
from hspc_gen.search.records.samples import RecordKey
from hspc_gen.search.records.store import RecordStore

COUNT = Path(__file__).resolve().parents[1] / "data" / "app_work" / "count.cpp"
FINGERPRINT = "test-host"
EVENT_BYTES = 24


def both_sides(source: Path) -> Workload:
    return Workload(producer_source=source, consumer_source=source)


def key_of(sources: dict[str, Path], event_bytes: int = EVENT_BYTES) -> RecordKey:
    return preflight.code_key(FINGERPRINT, preflight.code_digest(sources, event_bytes))


def store_in(cache: Path) -> RecordStore:
    return RecordStore(cache / "records", FINGERPRINT)


@pytest.mark.slow
def test_the_users_code_is_measured_once_and_its_cost_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CXX", "env c++")  # words, as the Meson snippet hands `ccache c++` over
    work = both_sides(COUNT)
    first = preflight.checked(work, EVENT_BYTES, store_in(tmp_path))
    assert first is not None and first.producer_ns > 0 and first.consumer_ns > 0
    kept = key_of({"producer": COUNT, "consumer": COUNT})
    assert preflight.recorded(store_in(tmp_path), kept) == first
    assert len(store_in(tmp_path).keyed(UserCodeRecord, kept)) == 1
    if not first.busy:  # a cost taken beside other load is measured again on a quiet machine
        # No compiler: only the record can answer.
        monkeypatch.setenv("CXX", str(tmp_path / "no-compiler"))
        assert preflight.checked(work, EVENT_BYTES, store_in(tmp_path)) == first


def test_a_recorded_quiet_cost_answers_without_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = both_sides(COUNT)
    key = key_of({"producer": COUNT, "consumer": COUNT})
    store_in(tmp_path).append(UserCodeRecord(key, 12.5, 80.0, busy=False))
    monkeypatch.setenv("CXX", str(tmp_path / "no-compiler"))
    assert preflight.checked(work, EVENT_BYTES, store_in(tmp_path)) == UserCode(12.5, 80.0)


def test_the_record_is_of_the_code_the_sides_and_the_event_size(tmp_path: Path) -> None:
    changed = tmp_path / "count.cpp"
    shutil.copy(COUNT, changed)
    changed.write_text(changed.read_text() + "// edited\n")
    keys = {
        key_of({"producer": COUNT, "consumer": COUNT}),
        key_of({"producer": changed, "consumer": changed}),
        key_of({"consumer": COUNT}),
        key_of({"consumer": COUNT}, EVENT_BYTES + 8),
    }
    assert len(keys) == 4
    assert preflight.checked(Workload(), EVENT_BYTES, store_in(tmp_path)) is None
    assert store_in(tmp_path).entries() == ()


def test_the_record_is_of_the_headers_the_code_includes(tmp_path: Path) -> None:
    source, header = tmp_path / "work.cpp", tmp_path / "work.hpp"
    source.write_text(COUNT.read_text() + '#include "work.hpp"\n')
    header.write_text("constexpr int kWork = 1;\n")
    before = key_of({"consumer": source})
    header.write_text("constexpr int kWork = 2;\n")
    assert key_of({"consumer": source}) != before


def test_a_damaged_record_is_no_answer(tmp_path: Path) -> None:
    key = key_of({"consumer": COUNT})
    store = store_in(tmp_path)
    store.path.parent.mkdir(parents=True)
    damaged = UserCodeRecord(key, 1.0, 2.0).to_dict() | {"busy": "no"}
    store.path.write_text(json.dumps(damaged) + "\n")
    assert len(store_in(tmp_path).skipped) == 1
    assert preflight.recorded(store_in(tmp_path), key) is None
    assert preflight.recorded(store_in(tmp_path / "missing"), key) is None
