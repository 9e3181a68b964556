"""The report's axes fitted to their data: which limit lines share the buffer figure's scale
(one far above the measured points would squeeze them into a sliver: it is named off the scale
instead), and the decision trail's ratio axis (fitted to the candidates and the margin bands, a
far-off candidate written at the edge, ticks at round ratios that leave each label room)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hspc_gen.reports.figure_data import Forest, Level, Series

DATA_SHARE = 0.4
"""The least share of the y axis the measured points keep: a limit line further off than that
is named off the scale rather than drawn."""
PAD = 0.06  # of an axis's span, either side, so a point is not drawn on the frame
OFF_SCALE = 4.0
"""A candidate costing more than this many times its step's winner (or less than its
reciprocal) is no close call: the ratio axis stops there, and the row's figure is written."""
TICK_GAP = 0.1
"""The least distance between two ratio ticks, as a share of the axis: room for their labels."""
NICE_RATIOS = (
    (1.0,),
    (0.1, 10.0, 0.5, 2.0),
    (0.2, 5.0, 0.25, 4.0, 3.0, 1.5),
    (0.8, 1.25, 0.9, 1.1, 0.7, 1.2, 0.6, 1.3),
    (0.95, 1.05, 0.98, 1.02, 0.97, 1.03, 0.99, 1.01),
)
"""Candidate tick ratios, the roundest first: each tier is tried only where the rounder ones
left room."""


@dataclass(frozen=True)
class Fitted:
    """The buffer figure's y range, the limit lines drawn within it, and those off the scale."""

    low: float
    high: float
    drawn: tuple[Level, ...]
    above: tuple[Level, ...]
    below: tuple[Level, ...]


def fit_levels(series: Sequence[Series], levels: Sequence[Level]) -> Fitted:
    """Keep the limit lines nearest the data while the data keeps DATA_SHARE of the axis."""
    low = min(v.low for s in series for v in s.y)
    high = max(v.high for s in series for v in s.y)
    data_span = max(high - low, abs(high) * 1e-3, 1e-12)
    drawn: list[Level] = []
    for level in sorted(levels, key=lambda lv: _distance(lv.value, low, high)):
        top, bottom = max(high, level.value), min(low, level.value)
        if data_span / max(top - bottom, data_span) < DATA_SHARE:
            break
        low, high, drawn = bottom, top, [*drawn, level]
    span = max(high - low, data_span)
    above = tuple(lv for lv in levels if lv not in drawn and lv.value > high)
    below = tuple(lv for lv in levels if lv not in drawn and lv.value <= high)
    ordered = tuple(lv for lv in levels if lv in drawn)
    return Fitted(low - PAD * span, high + PAD * span, ordered, above, below)


def _distance(value: float, low: float, high: float) -> float:
    return max(0.0, low - value, value - high)


def forest_limits(data: Forest) -> tuple[float, float]:
    """The ratio axis: the rows' medians and intervals and the margin bands, those within
    OFF_SCALE (a row further off is drawn at the edge, its ratio written)."""
    ends: list[float] = [1.0]
    for row in data.rows:
        ends += [row.ratio.low, row.ratio.median, row.ratio.high]
    for _, delta in data.margins:
        if math.isfinite(delta) and delta > 0:
            ends += [1 / (1 + delta), 1 + delta]
    logs = [math.log(x) for x in ends if 1 / OFF_SCALE <= x <= OFF_SCALE]
    low, high = min(logs), max(logs)
    pad = PAD * max(high - low, math.log(1.02))
    return math.exp(low - pad), math.exp(high + pad)


def off_scale(x: float, limits: tuple[float, float]) -> bool:
    return not limits[0] <= x <= limits[1]


def ratio_ticks(limits: tuple[float, float]) -> tuple[float, ...]:
    """Round ratios inside `limits`, the roundest first, each at least TICK_GAP of the (log)
    axis from the others."""
    low, high = math.log(limits[0]), math.log(limits[1])
    chosen: list[float] = []
    for tier in NICE_RATIOS:
        for ratio in _scaled(tier):
            at = (math.log(ratio) - low) / (high - low)
            if 0.0 <= at <= 1.0 and all(abs(at - c) >= TICK_GAP for c in _at(chosen, low, high)):
                chosen.append(ratio)
    return tuple(sorted(chosen))


def _scaled(tier: Iterable[float]) -> list[float]:
    """A tier's ratios, with their powers of ten for the wide axes."""
    return [r * 10.0**e for r in tier for e in (0, -1, 1)]


def _at(ratios: Sequence[float], low: float, high: float) -> list[float]:
    return [(math.log(r) - low) / (high - low) for r in ratios]


def ratio_label(ratio: float) -> str:
    return f"{ratio:g}\N{MULTIPLICATION SIGN}"
