"""hspc-report.html and its figures: one self-contained page (the figures inline as PNG data, no
network), and the same figures as PNG files beside hspc-summary.md for a repository page to show.

Drawn from the documents a run leaves, as the model's loaders read them (see figure_data.py), so
`hspc-gen bench` redraws the page with its peer table once it has run.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from hspc_gen.model.bench import BenchReport
from hspc_gen.model.caveat import Caveat
from hspc_gen.model.result import TuneResult
from hspc_gen.model.result_file import ResultFile
from hspc_gen.reports import figure_data, figure_threads, figure_topology, figures
from hspc_gen.reports.figure_data import FIGURES, REPORT_FILE
from hspc_gen.reports.wording import (
    POOL_COLUMNS,
    TRAIL_COLUMNS,
    duration,
    param_value,
    placement,
    placement_raced,
    pool_heading,
    pool_rows,
    trail_row,
)


@dataclass(frozen=True)
class Panel:
    """One figure of the report: its file, what it shows, and how it is drawn."""

    file: str
    heading: str
    explains: str
    draw: Callable[[], bytes]


def panels(result: TuneResult, bench: BenchReport | None) -> tuple[Panel, ...]:
    drawn = (
        (ROADMAP, lambda: figures.bars(figure_data.roadmap(result))),
        (_curves_caption(result), lambda: figures.curves(figure_data.curves(result))),
        (FOREST, lambda: figures.forest(figure_data.forest(result))),
        (
            " ".join(filter(None, (THREADS, figure_threads.said(result)))),
            lambda: figures.curves(figure_threads.threads(result), log_x=False),
        ),
        (PEERS, lambda: figures.bars((figure_threads.peers(result, bench),))),
        (TOPOLOGY, lambda: figures.heatmap(figure_topology.topology(result))),
    )
    return tuple(
        Panel(name, heading, *how)
        for (name, heading), how in zip(FIGURES.items(), drawn, strict=True)
    )


def _curves_caption(result: TuneResult) -> str:
    """The buffer figure's caption, naming what its lines are as drawn: a line per primitive,
    or per buffer count where the step measured one primitive (Stage One's)."""
    try:
        lines_are = figure_data.curves(result).lines_are
    except Exception:  # as _drawn: the figure's own panel then says what went wrong
        lines_are = ""
    return CURVES.format(lines_are=lines_are or "primitive")


ROADMAP = (
    "After the paper's Figure 1: what the producer and consumer loops reach alone (and, beside"
    " the confirmation, both at once without a channel: p0), then the winner of each step of the"
    " search, each in its own rounds, and the winner confirmed in a fresh process."
)
CURVES = (
    "After the paper's Figures 3-8: the step that tried the most buffer sizes, events/s against"
    " the bytes per buffer, one line per {lines_are}; the dashed lines are the paper's Optimal,"
    " Achievable and Upper bound where the target has work to time them with (one far from the"
    " measured points is named in the legend, off the scale, rather than drawn)."
)
FOREST = (
    "Every step's candidates as their cost over the step's winner, paired round by round, with"
    " 95% intervals. The grey band is the step's margin: a candidate is beaten only when its"
    " whole interval lies right of it; inside it, a tie, settled by the documented tie order."
)
THREADS = (
    "The thread-count recommendation's evidence: all channels' events/s against the number of"
    " threads, the recommended count marked, and the guard that ended the search."
)
TOPOLOGY = (
    "The host's CPU pairs as measured once per host: a cache line's round trip between each pair"
    " (the colour, on a log scale), the classes they fall into marked on the colour bar. Pairs"
    " that measure alike sit alike wherever sysfs puts them: hspc-gen host says where the two"
    " disagree."
)
PEERS = (
    "hspc-gen bench: the tuned channel and the peer queues on this host, driven by the same"
    " loops in interleaved rounds, beside the limit lines."
)


def files(loaded: ResultFile, bench: BenchReport | None) -> dict[str, bytes]:
    """Every file of the report by name: the PNGs and the page that holds them."""
    shown = panels(loaded.result, bench)
    drawn = {p.file: _drawn(p) for p in shown}
    page = render(loaded, shown, drawn)
    return {**drawn, REPORT_FILE: page.encode()}


def _drawn(panel: Panel) -> bytes:
    """The panel's picture; one whose drawing fails (a number matplotlib refuses) says so in
    words, and the run that wrote its header and result is
    not undone by a figure (failures are data)."""
    try:
        return panel.draw()
    except Exception as error:  # any drawing error, matplotlib's included
        return figures.words(panel.heading, f"this figure could not be drawn: {error}")


def _figure_html(panel: Panel, image: bytes) -> str:
    data = base64.b64encode(image).decode("ascii")
    return (
        f"<section><h2>{html.escape(panel.heading)}</h2><p>{html.escape(panel.explains)}</p>\n"
        f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(panel.heading)}">'
        "</figure></section>\n"
    )


def _winner_html(result: TuneResult) -> str:
    params = result.winner.as_dict()
    rows = [(str(k), param_value(str(k), v)) for k, v in sorted(params.items())]
    search = result.search
    if search is not None and search.placement:
        cpus = (params["producer_cpu"], params["consumer_cpu"])
        measured = ((c.params.producer_cpu, c.params.consumer_cpu) for c in search.candidates)
        raced = placement_raced(cpus, measured)
        rows.append(("placement", placement(search.placement, *cpus, raced=raced)))
    cells = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f"<table><caption>the chosen channel</caption>{cells}</table>\n"


def _caveats_html(said: Sequence[Caveat] | None) -> str:
    """The caveats the result carries: the summary's notes, word for word."""
    if said is None:
        items = [
            ("note", "This result does not list its caveats (an older hspc-gen wrote it): the"
             " hspc-summary.md written with it has them.")
        ]  # fmt: skip
    else:
        items = [(str(c.kind), c.text) for c in said]
    if not items:
        return ""
    listed = "".join(
        f'<li class="caveat {html.escape(kind)}">{html.escape(text)}</li>' for kind, text in items
    )
    return f'<section id="caveats"><h2>Caveats</h2><ul>{listed}</ul></section>\n'


def _trail_html(result: TuneResult) -> str:
    """The per-step table, cell for cell the summary's."""
    decisions = result.search.trail if result.search is not None else ()
    if not decisions:
        return ""
    rows = _rows_html(TRAIL_COLUMNS, (trail_row(d) for d in decisions))
    return f'<table id="trail"><caption>each step of the search</caption>{rows}</table>\n'


def _rows_html(columns: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A table's heading row, then its rows, every cell escaped."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<tr>{head}</tr>{body}"


def _pool_html(result: TuneResult) -> str:
    """threads.consumers: adaptive: the pool's parameters, in the summary's words and cells;
    nothing without the switch."""
    if result.pool is None:
        return ""
    rows = _rows_html(POOL_COLUMNS, pool_rows(result.pool))
    heading = html.escape(pool_heading(result.pool))
    return f'<section id="pool"><p>{heading}</p><table>{rows}</table></section>\n'


def _facts(result: TuneResult) -> str:
    run = result.run
    cpus = run.host.get("logical_cpus")
    count = len(cpus) if isinstance(cpus, list) else 0
    return (
        f"{run.event_bytes}-byte events, objective {run.objective};"
        f" host {run.host_model or '?'} ({count} CPUs,"
        f" fingerprint {run.fingerprint}); effort {run.effort},"
        f" {duration(result)}; hspc-gen {run.tool_version}"
    )


def render(loaded: ResultFile, shown: tuple[Panel, ...], images: Mapping[str, bytes]) -> str:
    result = loaded.result
    title = f"hspc-gen report: {result.run.target}"
    body = "".join(_figure_html(p, images[p.file]) for p in shown)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n<body>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(_facts(result))}</p>\n"
        f"{_caveats_html(loaded.caveats)}{_winner_html(result)}{_trail_html(result)}"
        f"{_pool_html(result)}{body}"
        "</body></html>\n"
    )


STYLE = (
    "body{font-family:sans-serif;max-width:960px;margin:2em auto;color:#222}"
    "img{max-width:100%}"
    "table{border-collapse:collapse;margin:1em 0}th,td{padding:2px 8px;text-align:left;"
    "border-bottom:1px solid #ddd}caption{text-align:left;font-weight:bold}"
    "li.caveat{margin:0.3em 0}"
)
