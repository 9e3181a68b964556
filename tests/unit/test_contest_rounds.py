"""hspc_gen.search.records.contest_rounds and contest.recorded_rounds: `hspc-gen bench`'s rounds
kept in the record store, replayed by a re-run with the same inputs and extended by a longer one
(the real build and run are test_bench's)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest

from contests import HEADER, PARAMS, a_contest
from hspc_gen.model import ChannelParams, Status
from hspc_gen.model.workload import Workload
from hspc_gen.search import contest
from hspc_gen.search.contest import Measured
from hspc_gen.search.records import contest_rounds
from hspc_gen.search.records.entries import RoundRecord
from hspc_gen.search.records.samples import Sample
from hspc_gen.search.records.store import RecordStore

EVENTS = {"tuned_consume": 5000, "boost_spsc_bulk": 3000, "tbb_bounded_queue": 2000}
KEY = contest_rounds.round_key("f", "g++", "-O2", "source", "how")


class Rounds:
    """Runs rounds as a seeded simulation (ns per event per arm, with noise), and keeps what it
    was asked to run; `hung` arms fail as the harness's watchdog reports them."""

    def __init__(self, hung: frozenset[str] = frozenset(), *, busy: bool = False) -> None:
        self.asked: list[tuple[tuple[str, ...], int, int]] = []
        self.hung = hung
        self.busy = busy  # as if other processes ran beside these rounds

    def __call__(self, events: Mapping[str, int], first: int, rounds: int) -> Measured:
        self.asked.append((tuple(sorted(events)), first, rounds))
        samples = []
        for number in range(first, first + rounds):
            noise = np.random.default_rng([7, number]).uniform(0.9, 1.1, len(events))
            for (arm, n), scale in zip(sorted(events.items()), noise, strict=True):
                if arm not in self.hung:
                    wall = n * (10.0 + len(arm)) * scale
                    samples.append(Sample(arm, number, n, wall, wall, wall, 0, 0, 0, True))
        failed = {arm: (Status.timeout, "exceeded the deadline") for arm in self.hung}
        return Measured(tuple(samples), failed, self.busy)


def replay(
    store: RecordStore, run: Rounds, first: int = 1, count: int = 4, *, quiet: bool = False
) -> Measured:
    return contest.recorded_rounds(store, KEY, run, EVENTS, first, count, quiet=quiet)


def test_a_rerun_replays_the_rounds_without_running_them(tmp_path: Path) -> None:
    run = Rounds(hung=frozenset({"tbb_bounded_queue"}))
    first = replay(RecordStore(tmp_path, "f"), run)
    assert run.asked == [(tuple(sorted(EVENTS)), 1, 4)]
    records = RecordStore(tmp_path, "f").keyed(RoundRecord, KEY)
    assert [r.round for r in records] == [1, 2, 3, 4]
    assert all(r.plan == tuple(sorted(EVENTS.items())) for r in records)
    again = Rounds()
    replayed = replay(RecordStore(tmp_path, "f"), again)
    assert again.asked == []
    assert sorted(replayed.samples, key=_order) == sorted(first.samples, key=_order)
    assert (
        replayed.failed
        == first.failed
        == {"tbb_bounded_queue": (Status.timeout, "exceeded the deadline")}
    )
    rows = contest.rows(replayed.samples, sorted(EVENTS), replayed.failed)
    assert rows == contest.rows(first.samples, sorted(EVENTS), first.failed)


def test_more_rounds_extend_the_recorded_ones(tmp_path: Path) -> None:
    store = RecordStore(tmp_path, "f")
    replay(store, Rounds(hung=frozenset({"tbb_bounded_queue"})), count=4)
    more = Rounds()
    extended = replay(RecordStore(tmp_path, "f"), more, count=6)
    # Only the rounds it lacks, and not the contender that failed in the recorded ones.
    assert more.asked == [(("boost_spsc_bulk", "tuned_consume"), 5, 2)]
    assert sorted({s.round for s in extended.samples}) == [1, 2, 3, 4, 5, 6]
    assert set(extended.failed) == {"tbb_bounded_queue"}
    rounds = RecordStore(tmp_path, "f").keyed(RoundRecord, KEY)
    assert [r.round for r in rounds] == [1, 2, 3, 4, 5, 6]
    assert all(
        a.status is Status.timeout for r in rounds for a in r.arms if a.arm.startswith("tbb")
    )
    assert replay(RecordStore(tmp_path, "f"), fresh := Rounds(), count=6) == extended
    assert fresh.asked == []


def test_rounds_of_other_events_or_inputs_are_not_replayed(tmp_path: Path) -> None:
    replay(RecordStore(tmp_path, "f"), Rounds())
    run = Rounds()
    resized = {**EVENTS, "boost_spsc_bulk": 3001}
    contest.recorded_rounds(RecordStore(tmp_path, "f"), KEY, run, resized, 1, 4)
    assert run.asked == [(tuple(sorted(EVENTS)), 1, 4)]
    other = contest_rounds.round_key("f", "g++", "-O3", "source", "how")
    contest.recorded_rounds(RecordStore(tmp_path, "f"), other, run, EVENTS, 1, 4)
    assert len(run.asked) == 2


@pytest.mark.parametrize(
    "changed",
    [
        {"cxxflags": "-O3"},
        {"compiler": "clang++"},
        {"workload": Workload(producer_ns=100)},
        {"params": ChannelParams(128, 0, 4, 16384, PARAMS.primitive, 0, 1)},
        {"fingerprint": "other-host"},
    ],
)
def test_the_key_names_every_input_of_a_round(tmp_path: Path, changed: dict[str, object]) -> None:
    header = tmp_path / "app_channel.hpp"
    header.write_text(HEADER)
    same = a_contest(header)
    before = contest.round_key(same)
    assert contest.round_key(dataclasses.replace(same)) == before
    assert contest.round_key(dataclasses.replace(same, **changed)) != before  # type: ignore[arg-type]
    header.write_text(HEADER + "// edited\n")
    assert contest.round_key(same) != before


def _order(sample: Sample) -> tuple[int, str]:
    return sample.round, sample.arm


def test_the_key_names_the_headers_the_users_code_includes(tmp_path: Path) -> None:
    """A header the user's code includes is reached through an include folder, not copied into
    the contest's files: an edit to it is other work, so the rounds are not replayed."""
    (tmp_path / "work.hpp").write_text("inline int work() { return 1; }\n")
    source = tmp_path / "consume.cpp"
    source.write_text('#include "work.hpp"\nvoid hspc_consume(const void*) { work(); }\n')
    header = tmp_path / "app_channel.hpp"
    header.write_text(HEADER)
    with_code = dataclasses.replace(a_contest(header), workload=Workload(consumer_source=source))
    before = contest.round_key(with_code)
    (tmp_path / "work.hpp").write_text("inline int work() { return 2; }\n")
    assert contest.round_key(with_code) != before


def test_rounds_measured_beside_load_are_measured_again_on_a_quiet_machine(tmp_path: Path) -> None:
    replay(RecordStore(tmp_path, "f"), Rounds(busy=True), count=4)
    assert all(r.busy for r in RecordStore(tmp_path, "f").keyed(RoundRecord, KEY))
    # Still busy now: the busy rounds are as good as any this run could measure.
    busy_again = Rounds(busy=True)
    replay(RecordStore(tmp_path, "f"), busy_again, count=4)
    assert busy_again.asked == []
    # Quiet now: every round is measured again, and recorded as quiet.
    quiet = Rounds()
    replay(RecordStore(tmp_path, "f"), quiet, count=4, quiet=True)
    assert quiet.asked == [(tuple(sorted(EVENTS)), 1, 4)]
    # ... and from then on replayed, busy or quiet.
    for run, is_quiet in ((Rounds(), True), (Rounds(busy=True), False)):
        replay(RecordStore(tmp_path, "f"), run, count=4, quiet=is_quiet)
        assert run.asked == []
    records = RecordStore(tmp_path, "f").keyed(RoundRecord, KEY)
    assert [(r.round, r.busy) for r in records] == [(n, True) for n in range(1, 5)] + [
        (n, False) for n in range(1, 5)
    ]


def test_a_quiet_rerun_keeps_the_quiet_rounds_before_the_first_busy_one(tmp_path: Path) -> None:
    replay(RecordStore(tmp_path, "f"), Rounds(), count=2)
    replay(RecordStore(tmp_path, "f"), Rounds(busy=True), count=4)  # rounds 3 and 4 beside load
    run = Rounds()
    replay(RecordStore(tmp_path, "f"), run, count=4, quiet=True)
    assert run.asked == [(tuple(sorted(EVENTS)), 3, 2)]


def test_a_round_recorded_before_busy_was_kept_reads_as_quiet() -> None:
    line = RoundRecord(KEY, 1, ()).to_dict()
    assert line["busy"] is False
    del line["busy"]
    assert RoundRecord.from_dict(line) == RoundRecord(KEY, 1, ())
    assert RoundRecord.from_dict({**line, "busy": True}).busy
    with pytest.raises(TypeError, match="busy"):
        RoundRecord.from_dict({**line, "busy": "yes"})
