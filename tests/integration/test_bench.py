"""`hspc-gen bench` as a user meets it: a real build of the tuned header beside the host's peers,
real threads, every sample checked, every round recorded and replayed; a contender that does not
compile or crashes is a row with its status; and its refusals of bad input (one message, exit 2,
nothing written)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from command import EXAMPLE, assert_one_clear_error, hspc_gen, listing, user_target
from hspc_gen.model.bench_file import load_bench
from hspc_gen.model.result_file import read_result
from hspc_gen.reports import figure_threads, html
from hspc_gen.search import contest

PEERS = {"boost_spsc_bulk", "moodycamel_cq_bulk", "atomic_queue_spsc", "tbb_bounded_queue"}


@pytest.fixture(scope="module")
def estimated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled example tuned at --effort estimate: a header and its result, no measuring."""
    out = tmp_path_factory.mktemp("estimated")
    done = hspc_gen("--target", EXAMPLE, "--effort", "estimate", "--out", out, "--quiet")
    assert done.returncode == 0, done.stderr
    return out


def bench(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hspc_gen", "bench", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )


def test_bench_times_the_header_beside_every_peer_and_line(estimated: Path, tmp_path: Path) -> None:
    """Without --out, beside --from's result, whose page it redraws, not in the target's report
    folder; with --out elsewhere, hspc-bench.json alone, no page without its result."""
    cache, target = tmp_path / "cache", tmp_path / "app.yaml"
    shutil.copy2(EXAMPLE, target)  # its report folder: tmp_path / "example_report"
    args = ("--target", target, "--from", estimated / "hspc-result.json", "--rounds", "3")
    done = bench(*args, "--cache", cache)
    assert done.returncode == 0, done.stderr
    assert "| tuned_consume |" in done.stdout and "1 (the reference)" in done.stdout
    assert not (tmp_path / "example_report").exists()
    report = json.loads((estimated / "hspc-bench.json").read_text())
    rows = {row["id"]: row for row in report["rows"]}
    tuned = {"tuned_consume", "tuned_pop", "tuned_runs", "tuned_usage", "tuned_consume_asserts"}
    lines = {"whole_buffers", "p0_parallel", "producer_alone", "consumer_alone"}
    assert tuned | lines | PEERS <= set(rows)  # ./dev setup installs every peer's -dev package
    # A row measured surely faster than a side alone takes 3 more rounds and may stay unresolved.
    counted = 6 if report["remeasured"] else 3
    assert report["rounds"] == counted
    for row in rows.values():  # every contender delivered every event, checked by checksum
        assert row["status"] == "ok", row
        if row["unresolved"]:
            assert row["events_per_second"] is None and row["speed_vs_reference"] is None
            continue
        assert row["events_per_second"]["n"] == counted
        assert row["events_per_second"]["median"] > 0
    assert rows["tuned_consume"]["speed_vs_reference"] is None
    boost = rows["boost_spsc_bulk"]
    assert boost["unresolved"] or boost["speed_vs_reference"]["median"] > 0
    assert report["cxxflags"] == "-O2 -DNDEBUG" and report["missing"] == []
    # The report beside the result is redrawn with the bench's table in it.
    result, typed = read_result(estimated / "hspc-result.json"), load_bench(report)
    assert figure_threads.peers(result.result, typed).bars
    for name, content in html.files(result, typed).items():
        assert (estimated / name).read_bytes() == content, name
    replayed_alike(cache, counted, estimated / "hspc-bench.json", tmp_path / "elsewhere", args)


def replayed_alike(
    cache: Path, counted: int, written: Path, elsewhere: Path, args: tuple[str | Path, ...]
) -> None:
    """Every round is in the host's record store: the same bench again replays them, and writes
    the same bytes without timing anything (no line appended); in --out, the file alone. A round
    recorded beside other load is measured again on a quiet machine (README: bench), so only
    rounds measured quiet promise the same bytes."""
    (store,) = (cache / "records").glob("*.jsonl")
    recorded = store.read_text().splitlines()
    assert [json.loads(line)["round"] for line in recorded] == list(range(counted + 1))
    busy = any(json.loads(line)["busy"] for line in recorded)
    again = bench(*args, "--cache", cache, "--out", elsewhere)
    assert again.returncode == 0, again.stderr
    assert listing(elsewhere) == ["hspc-bench.json"]
    assert "without the report page: the page is drawn beside the result" in again.stderr
    if not busy:
        assert (elsewhere / "hspc-bench.json").read_bytes() == written.read_bytes()
        assert store.read_text().splitlines() == recorded


def test_bench_refuses_flags_that_do_not_build_and_writes_nothing(
    estimated: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    args = ("--target", EXAMPLE, "--from", estimated / "hspc-result.json", "--out", out)
    done = bench(*args, "--cxxflags", "-O2 -fno-such-flag", "--cache", tmp_path / "cache")
    assert_one_clear_error(done, "did not build with --cxxflags", "-fno-such-flag")
    assert not out.exists() or listing(out) == []


def test_a_result_the_report_cannot_read_is_refused_before_anything_runs(
    estimated: Path, tmp_path: Path
) -> None:
    """The page is redrawn after the rounds: a result of an older schema is refused first (one
    message, nothing built, measured or written), not after minutes of measuring."""
    older = tmp_path / "hspc-result.json"
    data = json.loads((estimated / "hspc-result.json").read_text(encoding="utf-8"))
    older.write_text(json.dumps({**data, "schema_version": 2}), encoding="utf-8")
    out, cache = tmp_path / "out", tmp_path / "cache"
    done = bench("--target", EXAMPLE, "--from", older, "--out", out, "--cache", cache)
    assert_one_clear_error(done, "the report cannot be drawn", "written with result schema 2")
    assert not out.exists() or listing(out) == []
    assert not (cache / "bench").exists()


def test_a_contender_that_does_not_compile_or_crashes_is_a_row_with_its_status(
    tmp_path: Path,
) -> None:
    """Failures are data: the asserts unit refuses to compile (the header says so when NDEBUG is
    off), and the app's consumer crashes on its 300,000th event, in whichever contender runs it;
    the others are measured, the report says which failed and why, and the exit status is 1:
    the comparison asked for did not happen."""
    target, out = user_target(tmp_path, "crash_late_consumer.cpp"), tmp_path / "out"
    done = hspc_gen("--target", target, "--effort", "estimate", "--out", out, "--quiet")
    assert done.returncode == 0, done.stderr
    (header,) = out.glob("*.hpp")
    refusal = "#ifndef NDEBUG\n#error this header refuses asserts\n#endif\n"
    header.write_text(header.read_text(encoding="utf-8") + refusal, encoding="utf-8")
    done = bench("--target", target, "--out", out, "--rounds", "3", "--cache", tmp_path / "cache")
    assert done.returncode == 1, done.stderr  # the tuned channel's own rows failed
    assert "the tuned channel's tuned_consume did not run: crashed" in done.stderr
    rows = {row["id"]: row for row in json.loads((out / "hspc-bench.json").read_text())["rows"]}
    for row in contest.ASSERTS:
        assert rows[row]["status"] == "compile_error", rows[row]
        assert "this header refuses asserts" in rows[row]["cause"]
    crash = "fatal signal SIGSEGV in the user's consumer code (hspc_consume)"
    assert rows["tuned_consume"]["status"] == "crashed" and crash in rows["tuned_consume"]["cause"]
    assert rows["producer_alone"]["status"] == "ok"  # it runs no consumer code
    assert rows["producer_alone"]["events_per_second"]["n"] == 3
    assert "| compile_error: " in done.stdout and "| crashed: " in done.stdout


@pytest.mark.parametrize("flags", [("--cxxflags", "-fbogus"), ("--cxxflags=-O3 -fbogus",)])
def test_a_flag_the_compiler_rejects_is_named_in_the_compilers_own_words(
    estimated: Path, tmp_path: Path, flags: tuple[str, ...]
) -> None:
    """One flag after --cxxflags is its value (argparse alone says "expected one argument"), and
    the compiler's line is the message, not where Meson's log is."""
    out = tmp_path / "out"
    args = ("--target", EXAMPLE, "--from", estimated / "hspc-result.json", "--out", out)
    done = bench(*args, *flags, "--cache", tmp_path / "cache")
    assert_one_clear_error(done, "did not build with --cxxflags", "-fbogus")
    assert "unrecognized command-line option" in done.stderr
    assert "meson-log.txt" not in done.stderr and "cannot compile programs" not in done.stderr
    assert not out.exists() or listing(out) == []


@pytest.mark.parametrize("flags", ["-O3", "-O3 -march=native", "--std=c++20"])
def test_cxxflags_takes_one_flag_as_its_value(tmp_path: Path, flags: str) -> None:
    # Past the parsing, the next check is the missing result: the flags were taken.
    done = bench("--target", EXAMPLE, "--out", tmp_path, "--cxxflags", flags)
    assert_one_clear_error(done, "no result at")


def test_bench_without_a_result_or_with_bad_rounds_says_what_is_missing(tmp_path: Path) -> None:
    assert_one_clear_error(bench("--target", EXAMPLE, "--out", tmp_path), "no result at")
    assert_one_clear_error(
        bench("--target", EXAMPLE, "--out", tmp_path, "--rounds", "1"), "--rounds"
    )
    assert listing(tmp_path) == []


def test_help_lists_bench() -> None:
    assert "bench" in hspc_gen("--help").stdout
