"""hspc_gen.search.contest and reports.bench without a compiler: the plan's interleaved rounds,
the sizing of samples, the rows paired against the tuned channel, the asserts copy's namespace,
the units a build may leave out (test_bench.py builds and runs them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contests import HEADER, PARAMS, a_contest, sample
from hspc_gen.errors import UserError
from hspc_gen.model import Status
from hspc_gen.model.bench import BenchReport
from hspc_gen.render import render_contest_files
from hspc_gen.reports import bench as bench_report
from hspc_gen.search import contest


def test_every_round_runs_every_arm_once_in_its_own_order() -> None:
    events = {"tuned_consume": 5000, "boost_spsc_bulk": 3000, "producer_alone": 7000}
    lines = contest.plan_text(a_contest(), events, first=1, rounds=4).splitlines()
    assert len(lines) == 12
    for r in range(1, 5):
        mine = [line for line in lines if line.startswith(f"r{r}/")]
        assert sorted(line.split()[0] for line in mine) == sorted(f"r{r}/{a}" for a in events)
    # A baseline runs as its own kind with the reference's event type; a peer as throughput.
    assert any(
        line.startswith("r1/producer_alone producer_alone tuned_consume 7000 ") for line in lines
    )
    assert any(
        line.startswith("r1/boost_spsc_bulk throughput boost_spsc_bulk 3000 ") for line in lines
    )
    orders = {
        tuple(line.split()[0].split("/")[1] for line in lines[i : i + 3]) for i in (0, 3, 6, 9)
    }
    assert len(orders) > 1  # shuffled, so drift does not fall on one arm
    assert contest.plan_text(a_contest(), events, 1, 4) == "\n".join(lines) + "\n"  # seeded


def test_samples_are_sized_to_last_about_the_same_time() -> None:
    probe = [sample("fast", 0, 1.0), sample("slow", 0, 200.0), sample("glacial", 0, 1e6)]
    sized = contest.sized(probe, ["fast", "slow", "glacial", "crashed"])
    assert sized["fast"] == int(contest.SAMPLE_SECONDS * 1e9)
    assert sized["slow"] == int(contest.SAMPLE_SECONDS * 1e9 / 200)
    assert sized["glacial"] == contest.MIN_EVENTS and "crashed" not in sized


def test_rows_pair_each_contender_with_the_tuned_channel_and_keep_failures() -> None:
    samples = [sample("tuned_consume", r, 1.0 + 0.01 * r) for r in range(8)]
    samples += [sample("boost_spsc_bulk", r, 2.0 + 0.02 * r) for r in range(8)]
    arms = ("tuned_consume", "boost_spsc_bulk", "tbb_bounded_queue")
    failed = {"tbb_bounded_queue": (Status.timeout, "hung")}
    rows = {row.contender.id: row for row in contest.rows(samples, arms, failed)}
    assert set(rows) == set(arms)
    assert rows["tuned_consume"].vs_reference is None
    speed = rows["boost_spsc_bulk"].vs_reference
    assert speed is not None and speed.median == pytest.approx(0.5) and speed.n == 8
    assert (
        rows["tbb_bounded_queue"].status is Status.timeout
        and rows["tbb_bounded_queue"].rate is None
    )
    report = BenchReport(
        "app", "f", 8, PARAMS, "h.hpp", "-O2", "g++", 8, "tuned_consume", tuple(rows.values())
    )
    text = bench_report.render(report)
    assert "| boost_spsc_bulk |" in text and "0.500 [" in text and "timeout: hung" in text
    assert bench_report.document(report)["rows"][2]["status"] == "timeout"


def test_the_asserts_copy_lives_in_its_own_namespace() -> None:
    files = render_contest_files(PARAMS, 8, HEADER, "app", tuned_rows=contest.TUNED_ROWS)
    assert "namespace app_asserts {" in files["tuned_asserts.hpp"]
    assert files["tuned.hpp"] == HEADER
    assert "run_tuned_consume_asserts" in files["tuned_asserts.cpp"]
    assert "-UNDEBUG" in files["meson.build"]
    assert all(f'{{"{row}", &run_{row}}}' in files["main.cpp"] for row in contest.TUNED_ROWS)
    with pytest.raises(ValueError, match="namespace other"):
        render_contest_files(PARAMS, 8, HEADER, "other", tuned_rows=contest.TUNED_ROWS)


def test_a_unit_left_out_takes_its_rows_and_its_place_in_the_build(tmp_path: Path) -> None:
    """The builder names each tuned row's unit, so that a unit that does not compile is left out
    with its rows only; the rest builds as before."""
    header = tmp_path / "app_channel.hpp"
    header.write_text(HEADER)
    whole = contest.project(a_contest(header=header))
    assert whole.variants == {
        **{row: "tuned.cpp" for row in contest.TUNED_ROWS if row not in contest.ASSERTS},
        **dict.fromkeys(contest.ASSERTS, "tuned_asserts.cpp"),
    }
    assert whole.options == ("--buildtype=plain", "-Dwarning_level=2", "-Dcpp_args=-O2 -DNDEBUG")
    kept = [c.id for c in contest.CONTENDERS if c.id not in contest.ASSERTS]
    without = contest.project(a_contest(header=header), kept)
    assert "tuned_asserts.cpp" not in without.files and "tuned.cpp" in without.files
    assert "static_library" not in without.files["meson.build"]
    assert "run_tuned_consume_asserts" not in without.files["main.cpp"]
    assert set(without.variants) == set(contest.TUNED_ROWS) - set(contest.ASSERTS)
    assert without.source_hash != whole.source_hash


def test_the_baselines_take_the_whole_buffer_line_s_event_type_when_the_reference_failed() -> None:
    events = {"whole_buffers": 5000, "producer_alone": 7000}
    lines = contest.plan_text(a_contest(), events, first=1, rounds=1).splitlines()
    assert any(
        line.startswith("r1/producer_alone producer_alone whole_buffers 7000 ") for line in lines
    )


def test_a_binary_that_cannot_list_its_contenders_fails_every_row_or_is_refused(
    tmp_path: Path,
) -> None:
    """A `--list_variants` that crashes (the app's static initialisers, say) leaves no
    contender silently out: each is a row with that status; a binary the OS will not start
    (a noexec cache) is one clear message."""
    crashing = tmp_path / "crashing"
    crashing.write_text("#!/bin/sh\necho 'static init failed' >&2\nexit 7\n")
    crashing.chmod(0o755)
    ids, failure = contest.available(crashing)
    assert ids == tuple(c.id for c in contest.CONTENDERS) and failure is not None
    assert failure == (Status.crashed, "--list_variants failed: static init failed")
    unstartable = tmp_path / "unstartable"
    unstartable.write_text("not a program\n")  # not executable
    with pytest.raises(UserError, match=r"could not start the benchmark program .*noexec"):
        contest.available(unstartable)
