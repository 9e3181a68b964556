"""`hspc-gen compare` (reports/comparison.py, findings.named_winners, pipeline.compare): the
distinct winners of the results given are measured, results that share one are named together,
and results that all name one winner are a yes, not an error (issue 24, item 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from command import hspc_gen, listing
from hspc_gen.model import ChannelParams, Figure, Objective, Primitive, Status, Summary
from hspc_gen.model.result import Compared, Comparison
from hspc_gen.reports import comparison as comparison_report
from hspc_gen.search.decisions import findings
from hspc_gen.search.decisions.findings import named_winners
from hspc_gen.search.measure.plan import RunResult
from hspc_gen.search.racing import RaceSettings, race_and_decide
from hspc_gen.search.strategies.base import make_batch

SMALL = "name: small\nevent:\n  size: 8\n"
ONE = ChannelParams(64, 0, 4, 4096, Primitive.futex)
TWO = ONE.replace(buffers=8)


def estimated(folder: Path, name: str, *settings: str) -> Path:
    """An hspc-result.json the estimate wrote (nothing measured), with --set NAME=VALUE."""
    sets = [arg for setting in settings for arg in ("--set", setting)]
    done = hspc_gen(
        "--target", "app.yaml", "--effort", "estimate", "--out", name, *sets, cwd=folder
    )
    assert done.returncode == 0, done.stderr
    return folder / name / "hspc-result.json"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "app.yaml").write_text(SMALL)
    return tmp_path


def test_results_that_all_name_one_winner_are_a_yes_and_nothing_is_measured(folder: Path) -> None:
    """The README's check (does --effort measure find what exhaustive finds?) ended in 'bad
    input' exactly when the answer was yes."""
    results = [estimated(folder, name) for name in ("a", "b", "c")]
    before = listing(folder)
    done = hspc_gen("compare", "--target", "app.yaml", *results, "--cache", "cache", cwd=folder)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "all 3 results name the same winner: nothing to measure"
    winner = json.loads(results[0].read_text())["winner"]["params"]
    assert lines[1].startswith("  ")
    assert sorted(lines[1].split()) == sorted(f"{name}={value}" for name, value in winner.items())
    assert listing(folder) == before  # no cache made: nothing built or measured
    document = json.loads(
        hspc_gen("compare", "--target", "app.yaml", *results, "--json", cwd=folder).stdout
    )
    assert document["same_winner"] is True and document["rounds"] == 0
    assert document["measured"] is False
    (row,) = document["results"]
    assert row["results"] == [str(path) for path in results] and row["params"] == winner
    assert row["events_per_second"] is None and row["speed_vs_first"] is None
    assert document["aa"] is None


def test_an_unmeasured_a_a_copy_says_the_hosts_spread_is_unknown() -> None:
    comparison = Comparison(6, (Compared(("x.json",), ONE, None, None),))
    assert comparison_report.render(comparison).splitlines()[-1] == (
        "A/A: the first winner's copy has no paired rounds: the host's spread is unknown"
    )


@pytest.mark.slow
def test_two_results_that_share_a_winner_beside_one_that_does_not_are_compared(
    folder: Path,
) -> None:
    """Builds the harness and measures two winners for the fewest rounds compare takes."""
    a, other, b = (
        estimated(folder, "a"),
        estimated(folder, "other", "buffers=8"),
        estimated(folder, "b"),
    )
    done = hspc_gen(
        "compare", "--target", "app.yaml", a, other, b, "--rounds", "6", "--cache", "cache",
        cwd=folder,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("| results |") and len(lines) == 7
    assert lines[2].startswith(f"| {a}, {b} | ") and lines[2].endswith(" | 1.000 [1.000, 1.000] |")
    assert lines[3].startswith(f"| {other} | ")
    assert lines[5].startswith("A/A: a copy of the first winner in the same rounds, ")
    assert lines[6] == f"{a} and {b} name the same winner: measured once"


@pytest.mark.slow
def test_aa_measures_one_results_winner_against_a_copy_of_itself(folder: Path) -> None:
    """The A/A check on its own: how far apart this host puts two copies of one program."""
    a = estimated(folder, "a")
    done = hspc_gen(
        "compare", "--target", "app.yaml", a, "--aa", "--rounds", "6", "--cache", "cache", "--json",
        cwd=folder,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["same_winner"] is True and document["rounds"] == 6
    (row,) = document["results"]
    assert row["results"] == [str(a)] and row["events_per_second"]["n"] == 6
    aa = document["aa"]
    assert aa["ci95"][0] <= aa["median"] <= aa["ci95"][1] and aa["median"] > 0


def test_the_distinct_winners_keep_the_order_they_were_first_named_in() -> None:
    named = named_winners(["a", "b", "c", "d"], [TWO, ONE, TWO, TWO])
    assert [(row.labels, row.params) for row in named] == [(("a", "c", "d"), TWO), (("b",), ONE)]
    assert all(row.rate is None and row.speed_vs_first is None for row in named)
    assert len(named_winners(["a", "b"], [ONE, ONE])) == 1


def test_the_table_names_every_result_and_says_which_share_a_winner() -> None:
    rate = Summary(2e7, 1.9e7, 2.1e7, 6, q1=1.95e7, q3=2.05e7, preempted_fraction=0.0)
    speed = Figure(1.1, 1.05, 1.15, 6)
    comparison = Comparison(
        6,
        (
            Compared(("x.json", "y.json", "z.json"), ONE, rate, Figure(1.0, 1.0, 1.0, 6)),
            Compared(("w.json",), TWO, rate, speed),
            Compared(("u.json", "v.json"), ONE.replace(buffers=2), None, None),
        ),
        aa=Figure(0.99, 0.97, 1.02, 6),
    )
    assert comparison_report.render(comparison).splitlines()[2:] == [
        "| x.json, y.json, z.json | 2e+07 [1.9e+07, 2.1e+07] | 1.000 [1.000, 1.000] |",
        "| w.json | 2e+07 [1.9e+07, 2.1e+07] | 1.100 [1.050, 1.150] |",
        "| u.json, v.json | — | — |",
        "",
        "A/A: a copy of the first winner in the same rounds, 0.990 [0.970, 1.020]: a speed inside"
        " that spread is this host's own noise",
        "x.json, y.json and z.json name the same winner: measured once",
        "u.json and v.json name the same winner: measured once",
    ]
    document = comparison_report.to_json(comparison)
    assert document["same_winner"] is False
    assert document["aa"] == {"median": 0.99, "ci95": [0.97, 1.02]}
    assert [row["results"] for row in document["results"]] == [
        ["x.json", "y.json", "z.json"],
        ["w.json"],
        ["u.json", "v.json"],
    ]


def test_a_run_that_fails_whole_names_every_winner_unmeasured_and_says_so() -> None:
    """The sizing probe runs the first winner and its copy; when it times out nothing is
    measured, and compare says how instead of 'nothing to measure'."""
    objective = Objective.throughput
    for winners in ((ONE, TWO), (ONE,)):
        batch = make_batch("compare", "compare", list(winners), ONE, 6)
        evaluation = race_and_decide(
            batch,
            lambda _plan: RunResult(Status.ok, ()),
            settings=RaceSettings(6, 1000, 1, objective, drop=False),
            oversubscribed=False,
            failed=RunResult(Status.timeout, ()),
        )
        named = named_winners([f"{i}.json" for i in range(len(winners))], list(winners))
        comparison = findings.comparison(evaluation, named, objective)
        assert comparison.measured and comparison.rounds == 0
        assert comparison.unmeasured == comparison.results
        lines = comparison_report.render(comparison).splitlines()
        assert lines[0].startswith("| results |")
        assert all(line.endswith(" | — (timeout) | — |") for line in lines[2 : 2 + len(winners)])
        assert lines[-1] == "A/A: the first winner has no rounds"
        document = comparison_report.to_json(comparison)
        assert [row["status"] for row in document["results"]] == ["timeout"] * len(winners)
