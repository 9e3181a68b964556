"""The report's figures, drawn with matplotlib from figure_data's plain data, as PNG bytes.

No pyplot: each figure is its own `matplotlib.figure.Figure` rendered by the Agg canvas, so
drawing keeps no global state and needs no display. PNGs carry no date or software stamp, so the
same data gives the same bytes (for the same matplotlib). A figure with nothing to show is a
picture of the reason, in words.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from hspc_gen.reports import figure_scales
from hspc_gen.reports.figure_data import Bars, Curves, Forest, Interval
from hspc_gen.reports.figure_topology import Heatmap

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType as RcKey
else:
    RcKey = str

WIDTH_INCHES = 9.0
DPI = 100
TIE_COLOUR = "#f2a541"
COLOURS = {"line": "#9e9e9e", "step": "#4c78a8", "tuned": "#e45756", "peer": "#72b7b2"}
STYLE: dict[RcKey, Any] = {
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def png(figure: Figure) -> bytes:
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=DPI, metadata={"Software": None})
    return out.getvalue()


def _figure(height: float) -> tuple[Figure, Axes]:
    figure = Figure(figsize=(WIDTH_INCHES, height), layout="constrained")
    return figure, figure.add_subplot()


styled = mpl.rc_context(STYLE)  # rcParams are read as each artist is made: the whole drawing


@styled
def words(title: str, reason: str) -> bytes:
    figure, axes = _figure(1.2)
    axes.set_axis_off()
    axes.set_title(title, loc="left")
    axes.text(0.0, 0.5, reason, transform=axes.transAxes, va="center")
    return png(figure)


@styled
def bars(panels: Sequence[Bars]) -> bytes:
    """Horizontal bars with their intervals, a panel each, top to bottom in the data's order."""
    shown = [p for p in panels if p.bars]
    if not shown:
        return words(panels[0].title, panels[0].empty)
    heights = [0.6 + 0.3 * len(p.bars) for p in shown]
    figure = Figure(figsize=(WIDTH_INCHES, sum(heights) + 0.4), layout="constrained")
    grid = figure.add_gridspec(len(shown), 1, height_ratios=heights)
    for i, panel in enumerate(shown):
        _bar_panel(figure.add_subplot(grid[i]), panel)
    return png(figure)


def _bar_panel(axes: Axes, data: Bars) -> None:
    ys = list(range(len(data.bars)))[::-1]
    values = [b.value for b in data.bars]
    errors = [[v.median - v.low for v in values], [v.high - v.median for v in values]]
    colours = [COLOURS[b.kind] for b in data.bars]
    axes.barh(ys, [v.median for v in values], xerr=errors, color=colours, capsize=3)
    axes.set_yticks(ys, [b.label for b in data.bars])
    for y, v in zip(ys, values, strict=True):
        axes.annotate(f" {v.median:.4g}", (v.high, y), va="center", fontsize=8)
    axes.set_xlabel(data.axis)
    axes.set_title(data.title, loc="left")
    axes.margins(x=0.12)


@styled
def curves(data: Curves, log_x: bool = True) -> bytes:
    """Lines with interval bars; horizontal limit lines where they share the data's scale (one
    far off is named in the legend instead); marked x values. The legend stands beside the
    plot, so no line runs through it."""
    return png(curves_figure(data, log_x)) if data.series else words(data.title, data.empty)


@styled
def curves_figure(data: Curves, log_x: bool = True) -> Figure:
    """`curves`' drawing, before it is a PNG (its axes are checked in the tests)."""
    figure, axes = _figure(4.2)
    for s in data.series:
        errors = [[v.median - v.low for v in s.y], [v.high - v.median for v in s.y]]
        medians = [v.median for v in s.y]
        axes.errorbar(s.x, medians, yerr=errors, label=s.label, marker="o", ms=3, capsize=2)
    fitted = figure_scales.fit_levels(data.series, data.levels)
    styles = dict(zip(data.levels, ("--", "-.", ":"), strict=False))
    for level in fitted.drawn:
        axes.axhline(level.value, color="#555555", linestyle=styles[level], label=level.label)
    for side, off in (("above", fitted.above), ("below", fitted.below)):
        for level in off:  # a legend entry without a line in view: its value, and where
            label = f"{level.label}: {level.value:.4g}, off the scale ({side})"
            axes.plot([], [], color="#555555", linestyle=styles[level], label=label)
    for x in data.marked:
        axes.axvline(x, color=COLOURS["tuned"], linewidth=1.0, label="recommended")
    if log_x:
        axes.set_xscale("log", base=2)
    axes.set_ylim(fitted.low, fitted.high)
    axes.set_xlabel(data.x_axis)
    axes.set_ylabel(data.y_axis)
    axes.set_title(data.title, loc="left")
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    if data.note:
        figure.supxlabel(data.note, fontsize=8, x=0.01, ha="left")
    return figure


@styled
def forest(data: Forest) -> bytes:
    """Each candidate's paired cost ratio to its step's winner, with the step's margin band, on
    a ratio axis fitted to them (a candidate far off is written at the edge)."""
    return png(forest_figure(data)) if data.rows else words(data.title, data.empty)


@styled
def forest_figure(data: Forest) -> Figure:
    """`forest`'s drawing, before it is a PNG (its axes are checked in the tests)."""
    figure, axes = _figure(1.4 + 0.22 * len(data.rows))
    limits = figure_scales.forest_limits(data)
    ys = list(range(len(data.rows)))[::-1]
    margin = dict(data.margins)
    for y, row in zip(ys, data.rows, strict=True):
        delta = margin.get(row.step, 0.0)
        axes.fill_betweenx([y - 0.45, y + 0.45], 1 / (1 + delta), 1 + delta, color="#eeeeee")
        colour = COLOURS["tuned"] if row.winner else (TIE_COLOUR if row.tied else COLOURS["step"])
        _forest_point(axes, y, row.ratio, colour, limits)
    axes.axvline(1.0, color="#333333", linewidth=0.8)
    labels = [
        f"{r.step} | {r.label}{' (tie)' if r.tied and not r.winner else ''}" for r in data.rows
    ]
    axes.set_yticks(ys, labels, fontsize=7)
    axes.set_ylim(-0.6, len(data.rows) - 0.4)
    axes.set_xscale("log")
    axes.set_xlim(*limits)
    axes.xaxis.set_major_locator(FixedLocator(figure_scales.ratio_ticks(limits)))
    axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: figure_scales.ratio_label(x)))
    axes.xaxis.set_minor_locator(NullLocator())  # a log axis's minor labels crowd a short range
    axes.set_xlabel(
        "cost over the winner's, paired by round (above 1: slower)\ngrey: the step's margin"
    )
    figure.suptitle(data.title, x=0.01, ha="left", fontsize=10)  # long row labels: the figure's
    if data.note:
        figure.supxlabel(data.note, fontsize=8, x=0.01, ha="left")
    return figure


def _forest_point(
    axes: Axes, y: float, r: Interval, colour: str, limits: tuple[float, float]
) -> None:
    """One row's median and interval; a median off the axis is drawn at its edge, its ratio
    written beside it."""
    if figure_scales.off_scale(r.median, limits):
        edge = limits[1] if r.median > limits[1] else limits[0]
        marker = ">" if edge == limits[1] else "<"
        axes.plot([edge], [y], marker=marker, color=colour, ms=5, clip_on=False)
        axes.annotate(
            figure_scales.ratio_label(float(f"{r.median:.3g}")),
            (edge, y),
            xytext=(-4 if edge == limits[1] else 4, 0),
            textcoords="offset points",
            ha="right" if edge == limits[1] else "left",
            va="center",
            fontsize=7,
        )
        return
    xerr = [[r.median - r.low], [r.high - r.median]]
    axes.errorbar([r.median], [y], xerr=xerr, fmt="o", color=colour, ms=4, capsize=2)


MAX_TICKED_CPUS = 32  # beyond, every CPU's number on the axes runs together


@styled
def heatmap(data: Heatmap) -> bytes:
    """A square of CPU pairs, coloured by round trip on a log scale (the classes differ by
    multiples); pairs not measured stay blank. The colour bar marks each class's median."""
    if not data.values:
        return words(data.title, data.empty)
    grid = np.array([[np.nan if v is None else v for v in row] for row in data.values])
    figure = Figure(figsize=(WIDTH_INCHES, 7.0), layout="constrained")
    axes = figure.add_subplot()
    colours = mpl.colormaps["viridis"].with_extremes(bad="#f4f4f4")
    low, high = float(np.nanmin(grid)), float(np.nanmax(grid))
    image = axes.imshow(
        np.ma.masked_invalid(grid), cmap=colours, norm=LogNorm(low, max(high, low * 1.01))
    )
    step = max(1, -(-len(data.cpus) // MAX_TICKED_CPUS))
    ticks = list(range(0, len(data.cpus), step))
    axes.set_xticks(ticks, [str(data.cpus[i]) for i in ticks], fontsize=7)
    axes.set_yticks(ticks, [str(data.cpus[i]) for i in ticks], fontsize=7)
    axes.set_xlabel("CPU (reads the block, answers the round trip)")
    axes.set_ylabel("CPU")
    axes.set_title(data.title, loc="left")
    bar = figure.colorbar(image, ax=axes, shrink=0.8)
    bar.set_ticks([v for _, v in data.classes], labels=[f"{n} {v:.0f}" for n, v in data.classes])
    bar.minorticks_off()
    if data.note:
        figure.supxlabel(data.note, fontsize=8, x=0.01, ha="left")
    return png(figure)
