"""hspc_gen.reports.caveats: one typed list of what a person must know, read from the result;
the summary's notes and hspc-result.json's caveats are that list, word for word, and the HTML
page states each (in Chromium: test_html.py)."""

from __future__ import annotations

import dataclasses
import html as htmllib
import json
from pathlib import Path

import pytest

from caveat_results import (
    beside_the_sides,
    every_result,
    noisy_over_budget,
    rate,
    replayed_unconfirmed,
    summary_notes,
)
from command import EXAMPLE, hspc_gen
from hspc_gen.model import Figure
from hspc_gen.model.caveat import CaveatKind
from hspc_gen.model.result import TuneResult
from hspc_gen.model.result_file import ResultFile, load_result
from hspc_gen.reports import figure_data, html
from hspc_gen.reports.caveats import caveats
from hspc_gen.reports.result import document
from hspc_gen.reports.summary import render
from search_results import ESTIMATED, RUN, WINNER, searched


def written(result: TuneResult) -> ResultFile:
    """`result` as the report reads it: its hspc-result.json, through the model's loader."""
    return load_result(json.loads(json.dumps(document(result))))


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, TuneResult]:
    return every_result(tmp_path_factory.mktemp("caveats"))


def test_between_them_the_results_carry_every_kind_of_caveat(
    results: dict[str, TuneResult],
) -> None:
    kinds = {c.kind for r in results.values() for c in caveats(r)}
    assert kinds == set(CaveatKind)


def test_the_summarys_notes_are_the_caveats_and_the_document_carries_them(
    results: dict[str, TuneResult],
) -> None:
    for name, result in results.items():
        listed = [c.text for c in caveats(result)]
        assert summary_notes(result) == listed, name
        carried = json.loads(json.dumps(document(result)))["caveats"]
        assert carried == [{"kind": str(c.kind), "text": c.text} for c in caveats(result)]


def test_each_condition_gives_its_caveat(results: dict[str, TuneResult]) -> None:
    def kinds(name: str) -> set[CaveatKind]:
        return {c.kind for c in caveats(results[name])}

    assert {
        CaveatKind.not_confirmed, CaveatKind.budget, CaveatKind.busy, CaveatKind.threads,
        CaveatKind.replayed,
    } <= kinds("replayed")  # fmt: skip
    assert CaveatKind.efficiency in kinds("unresolved") and CaveatKind.failure in kinds(
        "unresolved"
    )
    assert CaveatKind.remeasured in kinds("remeasured")
    assert CaveatKind.efficiency in kinds("at_bound")
    assert {CaveatKind.host_noise, CaveatKind.latency, CaveatKind.over_budget} <= kinds("noisy")
    assert kinds("estimate") == {CaveatKind.estimate}


def test_a_replay_says_its_seconds_are_the_replays(tmp_path: Path) -> None:
    result = replayed_unconfirmed(tmp_path)
    assert result.search is not None and result.search.measured_plans == 0
    said = [c.text for c in caveats(result) if c.kind is CaveatKind.replayed]
    assert said and "none measured: the 0.993 s this run took is the replay's" in said[0]
    page = html.files(written(result), None)[figure_data.REPORT_FILE].decode()
    assert "replayed from the record store in 0.993 s (nothing measured by this run)" in page
    assert "Not confirmed: the budget ran out before the winner was measured again" in page


def test_unpinned_cpus_are_named_so_in_the_summary_and_the_page() -> None:
    result = noisy_over_budget()
    assert result.search is not None and result.winner.producer_cpu == -1
    result = dataclasses.replace(
        result, search=dataclasses.replace(result.search, placement="unpinned")
    )
    text = render(result)
    assert "| producer_cpu | unpinned |" in text and "| -1 |" not in text
    assert "Placement: unpinned (the scheduler places the threads)." in text
    page = html.files(written(result), None)[figure_data.REPORT_FILE].decode()
    assert "<th>producer_cpu</th><td>unpinned</td>" in page and "<td>-1</td>" not in page
    assert "<th>placement</th><td>unpinned (the scheduler places the threads)</td>" in page


def test_the_command_line_run_writes_its_caveats_on_the_page_as_in_the_summary(
    tmp_path: Path,
) -> None:
    """Through the real command: the summary printed and hspc-summary.md end with the caveats,
    and hspc-report.html states each of them."""
    done = hspc_gen("--target", EXAMPLE, "--effort", "estimate", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    summary = (tmp_path / "hspc-summary.md").read_text(encoding="utf-8")
    page = htmllib.unescape((tmp_path / figure_data.REPORT_FILE).read_text(encoding="utf-8"))
    carried = json.loads((tmp_path / "hspc-result.json").read_text(encoding="utf-8"))["caveats"]
    assert carried and carried[0]["kind"] == "estimate"
    for caveat in carried:
        assert f"- {caveat['text']}" in summary and f"- {caveat['text']}" in done.stdout
        assert f'<li class="caveat {caveat["kind"]}">{caveat["text"]}</li>' in page


def test_a_confirmation_that_measured_nothing_is_said_not_confirmed(
    results: dict[str, TuneResult],
) -> None:
    """Its summary says "channel: not measured" and its banner "NOT confirmed": the caveats,
    and so the page, must say it too (a new user's hour on b50c1fb found them silent)."""
    result = results["remeasured"]
    assert result.search is not None and result.search.confirmed is not None
    empty = dataclasses.replace(result.search.confirmed, rate=None)
    for exhausted in (False, True):
        search = dataclasses.replace(result.search, confirmed=empty, budget_exhausted=exhausted)
        said = caveats(dataclasses.replace(result, search=search))
        texts = [c.text for c in said if c.kind is CaveatKind.not_confirmed]
        assert len(texts) == 1 and texts[0].startswith("Not confirmed: ")
        assert ("budget ran out" in texts[0]) == exhausted


def efficiency_note(result: TuneResult) -> str:
    (note,) = [c.text for c in caveats(result) if c.kind is CaveatKind.efficiency]
    return note


def test_the_channel_beside_its_slower_side_is_said_as_the_printed_figures_show() -> None:
    """A new user's report: "the channel measured 11.27 M events/s, faster than producer_alone
    at 11.3 M". Both figures now print at one precision that tells them apart, and a channel
    whose interval overlaps the side's is "as fast as" it within the noise, never "faster"."""
    at_bound = Figure(1.004, 0.99, 1.02, 20)
    note = efficiency_note(beside_the_sides(rate(11.27), rate(11.30), rate(243), at_bound))
    assert "11.27 M events/s, as fast as producer_alone at 11.30 M within the noise" in note
    assert "faster than" not in note and "consumer_alone" not in note
    apart = efficiency_note(beside_the_sides(rate(12.0), rate(11.3), rate(243), at_bound))
    assert "12.0 M events/s, faster than producer_alone at 11.3 M" in apart
    # The medians the other way round, beyond the noise: the paired rounds made it faster.
    below = efficiency_note(
        beside_the_sides(rate(11.0, 0.01), rate(11.5, 0.01), rate(243), at_bound)
    )
    assert "11.0 M events/s, producer_alone 11.5 M; paired round by round" in below
    sure = Figure(1.2, 1.1, 1.3, 20)
    unresolved = efficiency_note(beside_the_sides(rate(30), rate(10), rate(243), sure))
    assert "which cannot be" in unresolved
    assert "30.0 M events/s, faster than producer_alone at 10.0 M" in unresolved


def test_plans_measured_again_because_their_records_were_busy_are_said() -> None:
    """A quiet re-run of a run measured beside load measures those plans again: the caveat
    says why it measured what it could have replayed."""
    search = searched(measured_plans=7, cached_plans=19, remeasured_plans=7)
    said = [c.text for c in caveats(TuneResult(RUN, WINNER, search, ESTIMATED))]
    assert (
        "19 plan(s) replayed from the record store, 7 measured (7 of them recorded beside other"
        " load, and measured again now that the machine is quiet)."
    ) in said
    plain = searched(measured_plans=7, cached_plans=19)
    texts = [c.text for c in caveats(TuneResult(RUN, WINNER, plain, ESTIMATED))]
    assert "19 plan(s) replayed from the record store, 7 measured." in texts
