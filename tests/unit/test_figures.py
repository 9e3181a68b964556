"""The report's figures as drawn, on the example's recorded documents: axes that fit their data
(a limit line far off is named, not squeezing the points into a sliver; the decision trail's
ratio axis stops short of a far-off candidate), a legend no line runs through, and tick labels
that do not overlap (measured on the rendered figure, as a person sees it)."""

from __future__ import annotations

import copy
import itertools
import math
from typing import Any

import matplotlib as mpl
import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from documents import RESULT, RESULT_DOC, typed
from hspc_gen.model.result import TuneResult
from hspc_gen.reports import figure_data, figure_scales, figure_threads, figures
from hspc_gen.reports.figure_data import Curves, Forest


def drawn(figure: Figure) -> Axes:
    """The figure's (first) axes, after a draw by the Agg canvas the PNGs come from: every
    position is the rendered one."""
    with mpl.rc_context(figures.STYLE):
        FigureCanvasAgg(figure).draw()  # type: ignore[no-untyped-call]
    return figure.axes[0]


def renderer(axes: Axes) -> RendererAgg:
    canvas = axes.get_figure(root=True).canvas  # type: ignore[union-attr]
    assert isinstance(canvas, FigureCanvasAgg)
    drew: RendererAgg = canvas.get_renderer()  # type: ignore[no-untyped-call]
    return drew


def tick_labels(axes: Axes, axis: str) -> list[Bbox]:
    """Every visible tick label of an axis, the minor ticks' too (a log axis labels them)."""
    get = axes.get_xticklabels if axis == "x" else axes.get_yticklabels
    ticks = [*get(), *get(minor=True)]
    return [t.get_window_extent(renderer(axes)) for t in ticks if t.get_visible() and t.get_text()]


def assert_apart(boxes: list[Bbox]) -> None:
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), (a, b)


def with_optimal(result: dict[str, Any], factor: float) -> TuneResult:
    """The example with the sweep step's Optimal line `factor` times as high (a producer whose
    work alone runs far faster than any channel can carry its events)."""
    changed = copy.deepcopy(result)
    for decision in changed["decisions"]:
        optimal = (decision.get("baselines") or {}).get("optimal")
        if optimal:
            rate = optimal["events_per_second"]
            rate["median"] *= factor
            rate["ci95"] = [x * factor for x in rate["ci95"]]
    return typed(changed)


def points(data: Curves) -> tuple[float, float]:
    return (
        min(v.low for s in data.series for v in s.y),
        max(v.high for s in data.series for v in s.y),
    )


def test_the_buffer_figure_fits_its_points_and_names_a_far_optimal_off_the_scale() -> None:
    data = figure_data.curves(with_optimal(RESULT_DOC, 4.0))
    optimal = next(lv for lv in data.levels if lv.label.startswith("Optimal"))
    axes = drawn(figures.curves_figure(data))
    low, high = points(data)
    bottom, top = axes.get_ylim()
    assert top < optimal.value  # the points keep the axis
    assert (high - low) / (top - bottom) >= figure_scales.DATA_SHARE
    assert bottom <= low and high <= top
    legend = axes.get_legend()
    assert legend is not None
    said = [t.get_text() for t in legend.get_texts()]
    assert any(t.startswith("Optimal") and "off the scale (above)" in t for t in said), said


def test_the_buffer_figure_draws_the_limit_lines_near_its_points() -> None:
    data = figure_data.curves(RESULT)  # the example: all three lines within reach
    axes = drawn(figures.curves_figure(data))
    bottom, top = axes.get_ylim()
    assert all(bottom <= level.value <= top for level in data.levels)
    said = [t.get_text() for t in axes.get_legend().get_texts()]  # type: ignore[union-attr]
    assert not any("off the scale" in t for t in said)


@pytest.mark.parametrize("draw", ["buffers", "threads"])
def test_no_line_runs_through_a_legend_and_no_tick_labels_overlap(draw: str) -> None:
    data = figure_data.curves(RESULT) if draw == "buffers" else figure_threads.threads(RESULT)
    axes = drawn(figures.curves_figure(data, log_x=draw == "buffers"))
    legend = axes.get_legend()
    assert legend is not None
    drew = renderer(axes)
    assert not legend.get_window_extent(drew).overlaps(axes.get_window_extent(drew))
    assert_apart(tick_labels(axes, "x"))
    assert_apart(tick_labels(axes, "y"))


def widened(result: dict[str, Any], low: float, high: float) -> TuneResult:
    """The example with one candidate of the first step measured from `low` to `high` times the
    winner's cost (its median between): the ratio axis spans that range."""
    changed = copy.deepcopy(result)
    other = _first_steps_other(changed)
    median = math.sqrt(low * high)
    other["cost_vs_winner"] = {"median": median, "ci95": [low, high], "n": 20}
    return typed(changed)


def _first_steps_other(changed: dict[str, Any]) -> dict[str, Any]:
    first = changed["decisions"][0]
    found: dict[str, Any] = next(
        c
        for c in changed["candidates"]
        if (c["stage"], c["step"]) == (first["stage"], first["step"])
        and c["id"] != first["winner"]
        and c.get("cost_vs_winner")
    )
    return found


def far_off(result: dict[str, Any], ratio: float) -> TuneResult:
    """The example with one candidate of the first step costing `ratio` times the winner's."""
    changed = copy.deepcopy(result)
    other = _first_steps_other(changed)
    other["cost_vs_winner"] = {"median": ratio, "ci95": [ratio * 0.9, ratio * 1.1], "n": 20}
    return typed(changed)


def spread(data: Forest) -> tuple[float, float]:
    ends = [x for r in data.rows for x in (r.ratio.low, r.ratio.high)]
    ends += [x for _, d in data.margins for x in (1 / (1 + d), 1 + d)]
    return min(ends), max(ends)


def test_the_decision_trails_axis_fits_the_rows_and_margins() -> None:
    data = figure_data.forest(RESULT)
    axes = drawn(figures.forest_figure(data))
    left, right = axes.get_xlim()
    low, high = spread(data)
    assert left <= low and high <= right
    # No wider than the data and a small pad: close calls stay wide enough to see.
    assert math.log(right / left) <= math.log(high / low) * (1 + 3 * figure_scales.PAD)
    assert_apart(tick_labels(axes, "x"))
    assert_apart(tick_labels(axes, "y"))
    assert len(tick_labels(axes, "x")) >= 3


def test_a_far_off_candidate_is_written_at_the_edge_not_stretching_the_axis() -> None:
    data = figure_data.forest(far_off(RESULT_DOC, 100.0))
    axes = drawn(figures.forest_figure(data))
    left, right = axes.get_xlim()
    near = figure_data.forest(RESULT)  # the same rows but the far one: the same axis
    assert (left, right) == pytest.approx(figure_scales.forest_limits(near))
    assert right <= figure_scales.OFF_SCALE
    assert figure_scales.ratio_label(100) in [t.get_text() for t in axes.texts]
    assert_apart(tick_labels(axes, "x"))


@pytest.mark.parametrize("ratio", [0.2, 0.3, 1.04, 3.0, 5.0, 100.0])
def test_ratio_ticks_stay_apart_on_any_axis(ratio: float) -> None:
    data = figure_data.forest(far_off(RESULT_DOC, ratio))
    axes = drawn(figures.forest_figure(data))
    assert_apart(tick_labels(axes, "x"))
    ticks = figure_scales.ratio_ticks(axes.get_xlim())
    assert 1.0 in ticks and len(ticks) >= 2


@pytest.mark.parametrize(
    ("low", "high"),
    [(0.26, 3.9), (0.26, 1.0), (1.0, 3.9), (0.5, 2.0), (0.9, 1.6), (0.3, 0.31), (1.9, 3.8)],
)
def test_the_decision_trails_tick_labels_stay_apart_on_a_wide_axis(low: float, high: float) -> None:
    """The recorded result with a candidate spanning up to the whole axis the figure allows
    (OFF_SCALE either side): every x tick label, as rendered, clear of the others, 1x among
    them, and the axis reaching the candidate's interval."""
    axes = drawn(figures.forest_figure(figure_data.forest(widened(RESULT_DOC, low, high))))
    labels = tick_labels(axes, "x")
    assert_apart(labels)
    assert len(labels) >= 3
    shown = [t.get_text() for t in axes.get_xticklabels() if t.get_text()]
    assert figure_scales.ratio_label(1.0) in shown
    left, right = axes.get_xlim()
    assert left <= low and high <= right
