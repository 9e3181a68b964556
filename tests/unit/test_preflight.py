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

COUNT = Path(__file__).resolve().parents[1] / "data" / "app_work" / "count.cpp"
FINGERPRINT = "test-host"
EVENT_BYTES = 24


def both_sides(source: Path) -> Workload:
    return Workload(producer_source=source, consumer_source=source)


def record_of(cache: Path, sources: dict[str, Path], event_bytes: int = EVENT_BYTES) -> Path:
    digest = preflight.code_digest(sources, event_bytes)
    return preflight.record_path(cache, FINGERPRINT, digest)


@pytest.mark.slow
def test_the_users_code_is_measured_once_and_its_cost_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CXX", "env c++")  # words, as the Meson snippet hands `ccache c++` over
    work = both_sides(COUNT)
    first = preflight.checked(work, EVENT_BYTES, tmp_path, FINGERPRINT)
    assert first is not None and first.producer_ns > 0 and first.consumer_ns > 0
    kept = record_of(tmp_path, {"producer": COUNT, "consumer": COUNT})
    assert preflight.recorded(kept) == first
    if not first.busy:  # a cost taken beside other load is measured again on a quiet machine
        # No compiler: only the record can answer.
        monkeypatch.setenv("CXX", str(tmp_path / "no-compiler"))
        assert preflight.checked(work, EVENT_BYTES, tmp_path, FINGERPRINT) == first


def test_a_recorded_quiet_cost_answers_without_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = both_sides(COUNT)
    path = record_of(tmp_path, {"producer": COUNT, "consumer": COUNT})
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"producer_ns": 12.5, "consumer_ns": 80.0, "busy": False}))
    monkeypatch.setenv("CXX", str(tmp_path / "no-compiler"))
    assert preflight.checked(work, EVENT_BYTES, tmp_path, FINGERPRINT) == UserCode(12.5, 80.0)


def test_the_record_is_of_the_code_the_sides_and_the_event_size(tmp_path: Path) -> None:
    changed = tmp_path / "count.cpp"
    shutil.copy(COUNT, changed)
    changed.write_text(changed.read_text() + "// edited\n")
    paths = {
        record_of(tmp_path, {"producer": COUNT, "consumer": COUNT}),
        record_of(tmp_path, {"producer": changed, "consumer": changed}),
        record_of(tmp_path, {"consumer": COUNT}),
        record_of(tmp_path, {"consumer": COUNT}, EVENT_BYTES + 8),
    }
    assert len(paths) == 4
    assert preflight.checked(Workload(), EVENT_BYTES, tmp_path, FINGERPRINT) is None


def test_the_record_is_of_the_headers_the_code_includes(tmp_path: Path) -> None:
    source, header = tmp_path / "work.cpp", tmp_path / "work.hpp"
    source.write_text(COUNT.read_text() + '#include "work.hpp"\n')
    header.write_text("constexpr int kWork = 1;\n")
    before = record_of(tmp_path, {"consumer": source})
    header.write_text("constexpr int kWork = 2;\n")
    assert record_of(tmp_path, {"consumer": source}) != before


def test_a_damaged_record_is_no_answer(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    path.write_text('{"producer_ns": 1.0')
    assert preflight.recorded(path) is None
    assert preflight.recorded(tmp_path / "missing.json") is None
