"""hspc_gen.search.records.entries: the store's kinds beside the search's (the host's calibration,
the user's code's cost, a bench round) as lines of the one store, and what is not one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hspc_gen.model import Status
from hspc_gen.search.records.entries import (
    ArmRound,
    CalibrationRecord,
    RoundRecord,
    UserCodeRecord,
    entry_from_dict,
    slot,
)
from hspc_gen.search.records.samples import STORE_SCHEMA, RecordKey, Sample
from hspc_gen.search.records.store import RecordStore

HOST = "host-abc123"
SAMPLE = Sample("boost_spsc_bulk", 3, 1000, 25000.0, 24000.0, 23000.0, 1, 0, 0, True)
ENTRIES = (
    CalibrationRecord(RecordKey(HOST, "", "", ""), (39669.0, 38558.0), (2767.0,), busy=False),
    UserCodeRecord(RecordKey(HOST, "daa6f1a00d24893c", "", ""), 6.86, 2.3, busy=True),
    RoundRecord(
        RecordKey(HOST, "0123456789abcdef", "g++", "-O2 -DNDEBUG"),
        3,
        (
            ArmRound("boost_spsc_bulk", 1000, Status.ok, SAMPLE),
            ArmRound("tbb_bounded_queue", 500, Status.timeout, cause="hung"),
        ),
    ),
)


def test_every_kind_is_a_line_of_the_one_store_and_reads_back_the_same(tmp_path: Path) -> None:
    store = RecordStore(tmp_path, HOST)
    for entry in ENTRIES:
        store.append(entry)
    reopened = RecordStore(tmp_path, HOST)
    assert reopened.entries() == ENTRIES and reopened.skipped == ()
    lines = [json.loads(line) for line in store.path.read_text().splitlines()]
    assert [line["kind"] for line in lines] == ["calibration", "user_code", "round"]
    assert {line["schema"] for line in lines} == {STORE_SCHEMA}
    (calibration, _, bench_round) = ENTRIES
    assert reopened.latest(CalibrationRecord, calibration.key) == calibration
    assert reopened.keyed(RoundRecord, bench_round.key) == (bench_round,)
    assert reopened.latest(UserCodeRecord, calibration.key) is None  # the kind and the key


def test_a_round_says_what_it_ran() -> None:
    bench_round = ENTRIES[2]
    assert isinstance(bench_round, RoundRecord)
    assert bench_round.plan == (("boost_spsc_bulk", 1000), ("tbb_bounded_queue", 500))
    assert slot(bench_round) == ("round", bench_round.key, 3, bench_round.plan)
    assert slot(ENTRIES[0]) != slot(ENTRIES[1])


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        ({"kind": "forecast"}, "kind 'forecast', which this hspc-gen does not know"),
        ({"schema": 1}, "record format 1, this hspc-gen reads 2"),
        ({"schema": 3}, "record format 3, this hspc-gen reads 2"),
        ({"busy": 1}, "busy is 1, not true or false"),
        ({"wake_ns": "fast"}, "is not a list of timings"),
    ],
)
def test_a_line_that_is_not_one_is_refused_with_its_reason(
    edit: dict[str, object], why: str
) -> None:
    with pytest.raises((ValueError, TypeError), match=why):
        entry_from_dict(ENTRIES[0].to_dict() | edit)
