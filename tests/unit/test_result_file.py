"""hspc-result.json and hspc-bench.json read back into the model's types: everything the
documents hold comes back (writing a loaded result gives the same document), and a document this
version cannot read is refused with one message naming the file and why."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from caveat_results import every_result
from documents import BENCH_DOC, RESULT_DOC
from hspc_gen.model.bench_file import load_bench, read_bench
from hspc_gen.model.pool import PoolChoice, PoolTuning
from hspc_gen.model.result_file import (
    SCHEMA_VERSION,
    UnreadableError,
    load_result,
    read_confirmed,
    read_result,
)
from hspc_gen.reports.bench import document as bench_document
from hspc_gen.reports.caveats import caveats
from hspc_gen.reports.result import document


def without_caveats(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "caveats"}


ADDED_SINCE = frozenset({"remeasured_plans"})  # fields added with a default a reader fills in


def as_it_was(new: Any, old: Any) -> Any:
    """`new` less the fields a later schema 3 added (null where the earlier file has none, or
    in ADDED_SINCE)."""
    if isinstance(new, dict) and isinstance(old, dict):
        kept = {
            k: v for k, v in new.items() if k in old or (v is not None and k not in ADDED_SINCE)
        }
        return {k: as_it_was(v, old.get(k)) for k, v in kept.items()}
    if isinstance(new, list) and isinstance(old, list) and len(new) == len(old):
        return [as_it_was(n, o) for n, o in zip(new, old, strict=True)]
    return new


def test_the_recorded_result_comes_back_whole() -> None:
    loaded = load_result(RESULT_DOC)
    assert loaded.caveats is None  # the recorded example predates them
    assert as_it_was(without_caveats(document(loaded.result)), RESULT_DOC) == RESULT_DOC


def test_every_kind_of_result_comes_back_whole_with_its_caveats(tmp_path: Path) -> None:
    for name, result in every_result(tmp_path).items():
        written = json.loads(json.dumps(document(result)))
        loaded = load_result(written, name)
        assert loaded.caveats == caveats(result), name
        again = json.loads(json.dumps(document(loaded.result)))
        assert without_caveats(again) == without_caveats(written), name


def test_the_recorded_bench_comes_back_whole() -> None:
    assert bench_document(load_bench(BENCH_DOC)) == BENCH_DOC


def test_a_file_on_disk_is_read_and_a_missing_bench_is_none(tmp_path: Path) -> None:
    path = tmp_path / "hspc-result.json"
    path.write_text(json.dumps(RESULT_DOC), encoding="utf-8")
    assert read_result(path) == load_result(RESULT_DOC)
    assert read_bench(tmp_path / "hspc-bench.json") is None


@pytest.mark.parametrize("version", [1, 2, 4, None])
def test_another_schema_is_refused_with_one_message(version: int | None) -> None:
    with pytest.raises(UnreadableError, match=rf"old\.json: written with result schema {version}"):
        load_result({**RESULT_DOC, "schema_version": version}, "old.json")
    assert version != SCHEMA_VERSION


def test_a_broken_document_is_refused_naming_the_file(tmp_path: Path) -> None:
    broken = copy.deepcopy(RESULT_DOC)
    broken["candidates"][0]["status"] = "exploded"
    with pytest.raises(
        UnreadableError, match=r"x\.json: not an hspc-result\.json this hspc-gen reads"
    ):
        load_result(broken, "x.json")
    with pytest.raises(UnreadableError, match="no JSON object"):
        load_result([1, 2])
    path = tmp_path / "hspc-result.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(UnreadableError, match=r"not a readable hspc-result\.json"):
        read_result(path)
    with pytest.raises(UnreadableError, match=r"not an hspc-bench\.json this hspc-gen reads"):
        load_bench({**BENCH_DOC, "rows": [{"id": "x"}]})


def test_the_pools_parameters_come_back_whole() -> None:
    names = ("min_consumers", "max_consumers", "start_consumers", "interval_ns", "grow_wait_ns")
    choices = {
        name: PoolChoice(i, f"why {name}") for i, name in enumerate((*names, "grow_intervals"))
    }
    pool = PoolTuning(**choices, basis="partly measured")
    result = dataclasses.replace(load_result(RESULT_DOC).result, pool=pool)
    written = json.loads(json.dumps(document(result)))
    assert load_result(written).result.pool == pool


def test_the_confirmation_is_read_alone_and_none_from_a_file_it_cannot_read(
    tmp_path: Path,
) -> None:
    """`hspc-gen threads --from`'s pool rests on the result's confirmed pace and margin."""
    path = tmp_path / "hspc-result.json"
    path.write_text(json.dumps(RESULT_DOC), encoding="utf-8")
    search = load_result(RESULT_DOC).result.search
    assert search is not None and search.confirmed is not None
    assert read_confirmed(path) == search.confirmed
    path.write_text(json.dumps({**RESULT_DOC, "schema_version": 2}), encoding="utf-8")
    assert read_confirmed(path) is None


def test_a_caveat_of_a_kind_a_later_version_added_is_read_as_a_note() -> None:
    later = {**RESULT_DOC, "caveats": [{"kind": "a-kind-of-later", "text": "said later"}]}
    (caveat,) = load_result(later).caveats or ()
    assert (caveat.kind.value, caveat.text) == ("note", "said later")
