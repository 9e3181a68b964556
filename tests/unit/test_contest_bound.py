"""`hspc-gen bench`'s rows held to the slower side alone, from constructed rounds: a row measured
surely faster than it, which cannot be, is run again with as many rounds more and, still past
it, unresolved (no figure printed); one faster only within the noise is at the bound; the others
are as they were."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from contests import HEADER, PARAMS, a_contest, sample
from hspc_gen.model import Status
from hspc_gen.model.bench import BenchReport, BenchRow
from hspc_gen.model.bench_file import load_bench
from hspc_gen.reports import bench as bench_report
from hspc_gen.search import contest
from hspc_gen.search.contest import Measured
from hspc_gen.search.decisions import stats
from hspc_gen.search.records.samples import Sample
from hspc_gen.search.records.store import RecordStore

ARMS = ("tuned_consume", "boost_spsc_bulk", "whole_buffers", "p0_parallel")
SIDES = ("producer_alone", "consumer_alone")
ROUNDS = 8
# ns per event of each round: the producer alone is the slower side (10 ns), the consumer's 5.
JITTER = (1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01, 0.99)
NEAR = (0.98, 0.99, 0.97, 0.995, 0.985, 1.01, 1.02, 1.015)  # a median just above the bound


def rounds(first: int, count: int, p0: Sequence[float]) -> list[Sample]:
    """`count` rounds from `first`: the sides, the tuned channel and a peer slower than the
    producer alone, the whole-buffer line within the noise of it, p0 at `p0` ns per event."""
    out = []
    for r in range(first, first + count):
        jitter = JITTER[r % len(JITTER)]
        out += [sample("producer_alone", r, 10.0 * jitter), sample("consumer_alone", r, 5.0)]
        out += [sample("tuned_consume", r, 12.0 * jitter), sample("boost_spsc_bulk", r, 15.0)]
        out += [sample("whole_buffers", r, 10.0 * jitter * NEAR[r % len(NEAR)])]
        out.append(sample("p0_parallel", r, p0[r % len(p0)] * jitter))
    return out


def rows(samples: Sequence[Sample]) -> dict[str, BenchRow]:
    found = contest.rows(samples, (*ARMS, *SIDES), {})
    return {row.contender.id: row for row in found}


def report(found: Sequence[BenchRow], remeasured: tuple[str, ...] = ()) -> BenchReport:
    count = 2 * ROUNDS if remeasured else ROUNDS
    return BenchReport(
        "app",
        "f",
        8,
        PARAMS,
        "h.hpp",
        "-O2",
        "g++",
        count,
        "tuned_consume",
        tuple(found),
        remeasured=remeasured,
    )


def test_a_row_surely_faster_than_the_slower_side_alone_is_not_given() -> None:
    found = rows(rounds(1, ROUNDS, (7.0,)))  # p0 at 7 ns against the producer's 10: 1.43
    p0 = found["p0_parallel"]
    assert p0.status is Status.ok and p0.rate is None and p0.vs_reference is None
    assert p0.unresolved.startswith("measured faster than producer_alone alone (ratio 1.429")
    text = bench_report.render(report(tuple(found.values())))
    line = next(line for line in text.splitlines() if line.startswith("| p0_parallel |"))
    assert "unresolved: measured faster than producer_alone alone (ratio 1.429, 95% CI" in line
    assert line.endswith("which cannot be | — |")
    row = bench_report.document(report(tuple(found.values())))["rows"][3]
    assert row["id"] == "p0_parallel" and row["unresolved"] == p0.unresolved
    assert row["events_per_second"] is None and row["speed_vs_reference"] is None


def test_a_row_faster_within_the_noise_is_at_the_bound() -> None:
    samples = rounds(1, ROUNDS, (10.5,))
    ratio = stats.efficiency(stats.group_by_arm(samples), "whole_buffers")
    assert ratio.ci95_low <= 1.0 < ratio.median  # above the bound, but not surely
    whole = rows(samples)["whole_buffers"]
    assert whole.rate is not None and whole.vs_reference is not None and not whole.unresolved
    assert whole.at_bound.startswith("as fast as producer_alone alone within the noise (ratio")
    text = bench_report.render(report(tuple(rows(samples).values())))
    line = next(line for line in text.splitlines() if line.startswith("| whole_buffers |"))
    assert "; at the bound: as fast as producer_alone alone within the noise" in line


def test_rows_slower_than_the_sides_and_the_sides_are_as_they_were() -> None:
    found = rows(rounds(1, ROUNDS, (10.5,)))
    for arm in ("tuned_consume", "boost_spsc_bulk", "p0_parallel", *SIDES):
        assert not found[arm].unresolved and not found[arm].at_bound and found[arm].rate
    speed = found["boost_spsc_bulk"].vs_reference
    assert speed is not None and 0.75 < speed.median < 0.85
    assert "unresolved" not in bench_report.render(report(tuple(found.values())))


def test_the_bound_comes_back_from_the_document() -> None:
    found = rows(rounds(1, ROUNDS, (7.0,)))
    written = bench_report.document(report(tuple(found.values()), ("p0_parallel",)))
    loaded = load_bench(written)
    assert bench_report.document(loaded) == written and loaded.remeasured == ("p0_parallel",)
    assert loaded.rows[3].unresolved == found["p0_parallel"].unresolved
    assert loaded.rows[2].at_bound == found["whole_buffers"].at_bound != ""


class Extended:
    """The bench's rounds: the first `count`, p0 at `first` ns per event in the rounds asked
    for and at `later` in those after them; keeps how many it was asked for."""

    def __init__(self, first: float, later: float) -> None:
        self.asked: list[int] = []
        self.first, self.later = first, later

    def __call__(self, count: int) -> Measured:
        self.asked.append(count)
        later = rounds(ROUNDS + 1, count - ROUNDS, (self.later,)) if count > ROUNDS else []
        return Measured((*rounds(1, min(count, ROUNDS), (self.first,)), *later), {})


def within_bound(run: Extended) -> contest.Counted:
    return contest.within_bound(run, ROUNDS, (*ARMS, *SIDES), {}, lambda _: None)


def test_a_row_past_the_bound_is_measured_again_with_as_many_rounds_more() -> None:
    run = Extended(7.0, 7.0)
    counted = within_bound(run)
    assert run.asked == [ROUNDS, 2 * ROUNDS] and counted.rounds == 2 * ROUNDS
    assert counted.remeasured == ("p0_parallel",)
    p0 = next(row for row in counted.rows if row.contender.id == "p0_parallel")
    assert p0.rate is None and p0.unresolved.endswith("; measured again, the same (16 rounds)")
    text = bench_report.render(report(counted.rows, ("p0_parallel",)))
    assert "p0_parallel measured faster than a side alone in the 8 rounds asked for" in text
    assert "8 more rounds were run, and the table is of all 16." in text


def test_more_rounds_can_bring_a_row_back_within_the_bound() -> None:
    run = Extended(7.0, 12.0)
    counted = within_bound(run)
    assert run.asked == [ROUNDS, 2 * ROUNDS] and counted.remeasured == ("p0_parallel",)
    p0 = next(row for row in counted.rows if row.contender.id == "p0_parallel")
    assert p0.rate is not None and not p0.unresolved


def test_rows_within_the_bound_run_the_rounds_asked_for_only() -> None:
    run = Extended(10.5, 7.0)
    counted = within_bound(run)
    assert run.asked == [ROUNDS] and counted.rounds == ROUNDS and counted.remeasured == ()


def test_the_bench_extends_its_recorded_rounds_and_replays_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """measure() through the record store, the build and the executor stood in for: p0 faster
    than the producer alone in every round takes 4 more rounds, recorded; the same bench again
    replays all 8 and runs nothing."""
    asked: list[tuple[int, int]] = []

    def run_rounds(
        _exe: Path, _c: object, events: Mapping[str, int], first: int, count: int
    ) -> Measured:
        asked.append((first, count))
        return Measured(tuple(s for s in rounds(first, count, (7.0,)) if s.arm in events), {})

    every = (*ARMS, *SIDES)
    monkeypatch.setattr(contest, "built", lambda *_: (tmp_path / "bench", {}))
    monkeypatch.setattr(contest, "available", lambda _: (every, None))
    monkeypatch.setattr(contest, "run_rounds", run_rounds)
    header = tmp_path / "app_channel.hpp"
    header.write_text(HEADER)
    bench = a_contest(header=header, rounds=4)
    first = contest.measure(bench, tmp_path, lambda _: None, RecordStore(tmp_path, "f"))
    assert asked == [(0, 1), (1, 4), (5, 4)] and first.rounds == 8
    assert "p0_parallel" in first.remeasured
    assert next(r for r in first.rows if r.contender.id == "p0_parallel").unresolved
    again = contest.measure(bench, tmp_path, lambda _: None, RecordStore(tmp_path, "f"))
    assert again == first and len(asked) == 3
