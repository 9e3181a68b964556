"""`hspc-gen host` (hspc_gen.cli.host): the host as sysfs declares it and as its CPU pairs
measure, on this machine (the real probe) and on recorded trees with their recorded matrices."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from command import SYSFS, assert_one_clear_error, hspc_gen


def test_the_live_host_is_measured_once_then_kept(tmp_path: Path) -> None:
    done = hspc_gen("host", "--cache", tmp_path)
    assert done.returncode == 0, done.stderr
    for heading in ("Packages", "Cores", "Caches", "Allowed", "Measured", "Classes"):
        assert heading in done.stdout
    assert "CPU pairs: measured now" in done.stdout
    again = hspc_gen("host", "--cache", tmp_path, "--json", "--no-measure")
    measured = json.loads(again.stdout)["topology"]
    assert measured["status"] == "stored"  # measured once per host, then kept
    cpus = measured["matrix"]["cpus"]
    assert len(measured["matrix"]["pairs"]) == len(cpus) * (len(cpus) - 1) // 2


def test_host_measures_nothing_when_told_not_to(tmp_path: Path) -> None:
    done = hspc_gen("host", "--no-measure", "--cache", tmp_path, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["topology"] == {
        "status": "not_measured",
        "note": "the CPU pairs were never measured on this host: the structure is sysfs's alone",
    }
    assert not (tmp_path / "host").exists()


def test_host_saves_a_matrix_the_tests_can_classify(tmp_path: Path) -> None:
    saved = tmp_path / "matrix.json"
    done = hspc_gen("host", "--save-matrix", saved, "--cache", tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    recorded = hspc_gen("host", "--json", "--matrix", saved)
    measured = json.loads(recorded.stdout)["topology"]
    assert measured["status"] == "recorded" and measured["note"] == str(saved)
    assert measured["matrix"] == json.loads(saved.read_text())


def test_host_classes_a_recorded_tree_by_the_matrix_beside_it() -> None:
    done = hspc_gen("host", "--sysfs-root", SYSFS / "2s-8c-2t" / "sys")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "CPU pairs: a recorded matrix" in text and "the measured classes agree" in text
    classes = text.split("  Classes\n")[1].split("\n  sysfs")[0].splitlines()[1:]
    assert [line.split()[0] for line in classes] == ["smt_sibling", "shared_l3", "other_socket"]
    matrix = text.split("  Matrix")[1].splitlines()
    assert len(matrix) == 1 + 1 + 32  # the title, the CPUs, a row each


def test_host_says_where_sysfs_hides_siblings() -> None:
    tree = SYSFS / "vm-16c"
    done = hspc_gen(
        "host", "--sysfs-root", tree / "sys", "--matrix", tree / "matrix-hidden-smt.json"
    )
    assert done.returncode == 0, done.stderr
    assert "Kind       CMP SMT (measured; sysfs: CMP)" in done.stdout
    assert "as SMT siblings do (e.g. CPUs 0 and 8)" in done.stdout
    document = json.loads(
        hspc_gen(
            "host",
            "--json",
            "--sysfs-root",
            tree / "sys",
            "--matrix",
            tree / "matrix-hidden-smt.json",
        ).stdout
    )
    measured = document["topology"]
    assert document["kind"] == ["CMP"] and measured["kind"] == ["CMP", "SMT"]
    assert [c["name"] for c in measured["classes"]] == ["smt_sibling", "shared_l3"]
    assert measured["classes"][0]["representative"] == [0, 8]
    assert [d["kind"] for d in measured["disagreements"]] == ["sibling_latency"]


def test_host_on_a_tree_without_a_matrix_says_there_is_nothing_to_measure() -> None:
    done = hspc_gen("host", "--sysfs-root", SYSFS / "1s-4c-8t" / "sys")
    assert done.returncode == 0, done.stderr
    assert "CPU pairs: not measured (a recorded sysfs tree: nothing to measure here" in done.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--save-matrix", "m.json", "--sysfs-root", SYSFS / "1s-4c-8t" / "sys"], "--save-matrix"),
        (["--matrix", SYSFS / "make_trees.py"], "is not a recorded topology matrix"),
        (["--matrix", "/nonexistent.json"], "cannot read the matrix"),
        # 32 CPUs of a Xeon's on whatever runs the tests: CPU 999 is on no machine here.
        (["--matrix", "far.json"], "a matrix of another machine (CPUs 999 are not among"),
    ],
)
def test_host_refuses_what_it_cannot_do_with_one_clear_error(
    args: list[str | Path], said: str, tmp_path: Path
) -> None:
    recorded = json.loads((SYSFS / "2s-8c-2t" / "matrix.json").read_text())
    recorded["cpus"] = [0, 999]
    recorded["pairs"] = [[0, 999, *recorded["pairs"][0][2:]]]
    (tmp_path / "far.json").write_text(json.dumps(recorded))
    assert_one_clear_error(hspc_gen("host", *args, cwd=tmp_path), said)


def test_a_reader_that_stops_reading_ends_the_command_without_a_traceback() -> None:
    """`hspc-gen host | head -1`: the reader is gone before the command prints (its end of
    the pipe closed first, so the write fails whatever the timing)."""
    tree = SYSFS / "2s-8c-2t"
    command = [sys.executable, "-m", "hspc_gen", "host", "--sysfs-root", str(tree / "sys")]
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [*command, "--matrix", str(tree / "matrix.json")],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 128 + signal.SIGPIPE and done.stderr == ""
