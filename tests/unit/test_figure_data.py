"""The report's figures as data, from recorded documents: what each figure shows is checked here
(and against a golden file), not in pixels."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from documents import BENCH, BENCH_DOC, DATA, RESULT, RESULT_DOC, typed
from hspc_gen.model import Figure
from hspc_gen.model.bench import BenchReport
from hspc_gen.model.result import TuneResult
from hspc_gen.model.threads import CurvePoint, ThreadAdvice
from hspc_gen.reports import figure_data, figure_threads
from hspc_gen.reports.figure_data import Bars, Forest

GOLDEN = DATA / "golden" / "report_figures.json"


def everything(result: TuneResult, bench: BenchReport | None) -> dict[str, Any]:
    return {
        "roadmap": [dataclasses.asdict(b) for b in figure_data.roadmap(result)],
        "curves": dataclasses.asdict(figure_data.curves(result)),
        "forest": dataclasses.asdict(figure_data.forest(result)),
        "threads": dataclasses.asdict(figure_threads.threads(result)),
        "peers": dataclasses.asdict(figure_threads.peers(result, bench)),
    }


def test_the_figures_data_is_unchanged(request: pytest.FixtureRequest) -> None:
    """A change to what a figure shows appears here as a diff to review; regenerate with
    `pytest tests/unit/test_figure_data.py --regen-golden`."""
    text = json.dumps(everything(RESULT, BENCH), indent=1, sort_keys=True) + "\n"
    if request.config.getoption("--regen-golden"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")


def test_the_roadmap_shows_each_steps_winner_beside_its_stages_limit_lines() -> None:
    panels = figure_data.roadmap(RESULT)
    assert len(panels) == len({d["stage"] for d in RESULT_DOC["decisions"]})
    first = panels[0]
    lines = [b.label for b in first.bars if b.kind == "line"]
    assert lines == ["producer alone", "consumer alone"]
    # The last stage's lines are the confirmation's, p0 among them.
    last = [b.label for b in panels[-1].bars if b.kind == "line"]
    assert "both alone in parallel (p0)" in last and "p0_parallel" in RESULT_DOC["baselines"]
    producer = RESULT_DOC["decisions"][0]["baselines"]["producer_alone"]["events_per_second"]
    assert first.bars[0].value.median == pytest.approx(producer["median"] / 1e6)
    # Each winner's rate is the one measured in its own step (an id recurs across steps).
    rates = {
        (c["stage"], c["step"], c["id"]): c["events_per_second"] for c in RESULT_DOC["candidates"]
    }
    steps = [b for b in first.bars if b.kind == "step"]
    for decision, bar in zip(RESULT_DOC["decisions"], steps, strict=False):
        own = rates[decision["stage"], decision["step"], decision["winner"]]
        assert bar.value.median == pytest.approx(own["median"] / 1e6)
    confirmed = [b for p in panels for b in p.bars if b.kind == "tuned"]
    rate = RESULT_DOC["winner"]["events_per_second"]
    expected = [pytest.approx(rate["median"] / 1e6)] if rate else []
    assert [b.value.median for b in confirmed] == expected


def test_an_estimate_has_nothing_to_draw_and_every_figure_says_why() -> None:
    estimate = typed({**RESULT_DOC, "decisions": [], "candidates": [], "recommendation": None})
    shown = everything(estimate, None)
    assert "estimate" in shown["roadmap"][0]["empty"]
    for name in ("curves", "forest", "threads", "peers"):
        assert shown[name]["empty"], name


def test_buffer_curves_come_from_the_step_that_tried_the_most_sizes() -> None:
    curves = figure_data.curves(RESULT)
    assert "stage two: primitive" in curves.title  # 7 primitives x 7 sizes in one batch
    step = [c for c in RESULT_DOC["candidates"] if (c["stage"], c["step"]) == ("two", "primitive")]
    assert {s.label for s in curves.series} == {c["params"]["primitive"] for c in step}
    decided = next(d for d in RESULT_DOC["decisions"] if d["step"] == "primitive")
    optimal = decided["baselines"]["optimal"]["events_per_second"]["median"] / 1e6
    assert curves.levels[0].value == pytest.approx(optimal)  # that step's own lines
    # With one primitive only (Stage One's buffers step), a line per buffer count.
    one = typed(
        {**RESULT_DOC, "candidates": [c for c in RESULT_DOC["candidates"] if c["stage"] == "one"]}
    )
    single = figure_data.curves(one)
    assert "stage one: buffers" in single.title
    assert all(s.label.startswith("futex, ") for s in single.series)


def test_the_forest_puts_each_winner_first_and_marks_ties() -> None:
    forest = figure_data.forest(RESULT)
    assert isinstance(forest, Forest) and forest.rows
    steps = [m[0] for m in forest.margins]
    assert steps == list(dict.fromkeys(r.step for r in forest.rows))
    for step in steps:
        rows = [r for r in forest.rows if r.step == step]
        assert rows[0].winner and rows[0].ratio.median == 1.0
        assert not any(r.winner for r in rows[1:])
    ties = {t for d in RESULT_DOC["decisions"] for t in d["ties"][1:]}
    assert any(r.tied for r in forest.rows if not r.winner) == bool(ties)


def test_the_thread_curve_marks_the_recommendation_and_names_the_guard() -> None:
    advice = RESULT_DOC["recommendation"]
    curve = figure_threads.threads(RESULT)
    assert curve.marked == (float(advice["producers"] + advice["consumers"]),)
    assert advice["evidence"]["termination"] in curve.note
    points = sum(len(s.x) for s in curve.series)
    assert points == len(advice["evidence"]["curve"])


def test_a_failed_thread_search_says_so() -> None:
    failed = {"status": "skipped", "error": "the budget ran out before the thread counts"}
    shown = figure_threads.threads(typed({**RESULT_DOC, "recommendation": failed}))
    assert failed["error"] in shown.empty


def test_peers_show_only_a_bench_of_this_channel() -> None:
    peers = figure_threads.peers(RESULT, BENCH)
    assert isinstance(peers, Bars) and len(peers.bars) == len(BENCH_DOC["rows"])
    assert {b.kind for b in peers.bars} == {"tuned", "peer", "line"}
    other = dataclasses.replace(
        BENCH, channel=BENCH.channel.replace(buffers=BENCH.channel.buffers * 2)
    )
    assert "another channel" in figure_threads.peers(RESULT, other).empty
    assert "has not run" in figure_threads.peers(RESULT, None).empty


def test_a_thread_count_reached_by_two_shapes_is_a_point_on_each_shapes_line() -> None:
    measured = RESULT.threads
    assert isinstance(measured, ThreadAdvice) and measured.evidence is not None

    def point(producers: int, consumers: int, rate: float) -> CurvePoint:
        return CurvePoint(
            producers, consumers, "unpinned", rate, rate, rate, 12, 0.0, 0.0, 0.0, 0.0
        )

    curve = (point(1, 1, 2e7), point(2, 2, 3e7), point(1, 3, 2.5e7))  # 4 threads twice
    evidence = dataclasses.replace(measured.evidence, curve=curve)
    advice = dataclasses.replace(measured, producers=2, consumers=2, evidence=evidence)
    shown = figure_threads.threads(dataclasses.replace(RESULT, threads=advice))
    by_label = {s.label: dict(zip(s.x, s.y, strict=True)) for s in shown.series}
    assert by_label["unpinned, 1 consumer(s) per producer"][4.0].median == 30.0
    assert by_label["unpinned, 3 consumer(s) per producer"][4.0].median == 25.0


def test_a_median_rounded_outside_its_interval_is_kept_inside_it() -> None:
    inside = figure_data.interval(Figure(10.0000004, 10.0000005, 12.0, 12))
    assert inside is not None and inside.low <= inside.median <= inside.high


def test_an_unpinned_candidate_is_labelled_unpinned_not_minus_one() -> None:
    """The placement step with a pinned winner: the unpinned candidate beside it reads so."""
    changed = json.loads(json.dumps(RESULT_DOC))
    placement = next(d for d in changed["decisions"] if d["step"] == "placement")
    pinned = next(
        c for c in changed["candidates"]
        if c["step"] == "placement" and c["params"]["producer_cpu"] != -1 and c["cost_vs_winner"]
    )  # fmt: skip
    unpinned = next(c for c in changed["candidates"] if c["id"] == placement["winner"])
    placement["winner"] = pinned["id"]
    unpinned["cost_vs_winner"] = {"median": 1.01, "ci95": [0.99, 1.03], "n": 12}
    labels = [
        r.label for r in figure_data.forest(typed(changed)).rows if r.step == "two: placement"
    ]
    assert any("producer_cpu=unpinned" in label for label in labels), labels
    assert not any("=-1" in label for label in labels)
