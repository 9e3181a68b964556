from __future__ import annotations

from typing import Any

from hspc_gen.reports.summary import render


def document(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "target": {"name": "demo", "objective": "throughput"},
        "effort": "measure",
        "host": {"model_name": "Test CPU"},
        "fingerprint": "abc",
        "winner": {"params": {"buffers": 4, "primitive": "futex"}, "events_per_second": None},
    }
    base.update(extra)
    return base


def test_an_estimate_says_nothing_was_measured() -> None:
    text = render(document(effort="estimate"))
    assert "| buffers | 4 |" in text and "| primitive | futex |" in text
    assert "Not measured" in text


def test_a_tuned_result_shows_figures_trail_and_notes() -> None:
    rate = {"median": 5.0e8, "ci95": [4.8e8, 5.2e8], "n": 20}
    text = render(
        document(
            winner={"params": {"buffers": 4}, "events_per_second": rate},
            baselines={"producer_alone": {"events_per_second": rate}},
            efficiency={"median": 0.97, "ci95": [0.95, 0.99]},
            decisions=[
                {"stage": "one", "step": "padding", "rounds": 12, "margin": 0.05, "winner": "c1"},
                {"stage": "two", "step": "primitive", "rounds": 6, "margin": None, "winner": None},
            ],
            budget_exhausted=True,
            busy=True,
            load_before=1.5,
            failures=[{"id": "c9", "status": "compile_error"}],
            cached_plans=3,
            measured_plans=0,
        )
    )
    assert "channel: 500 M events/s (95% CI 480 M to 520 M, n=20)" in text
    assert "producer_alone: 500 M" in text
    assert "efficiency: 0.970 (95% CI 0.950 to 0.990)" in text
    assert "| one | padding | 12 | 5.0% | c1 |" in text
    assert "| two | primitive | 6 | — | none |" in text
    for note in ("budget ran out", "busy (load 1.50)", "c9: compile_error", "3 plan(s) replayed"):
        assert note in text
