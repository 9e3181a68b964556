"""The report's thread curve and peer table, as plain data (see figure_data.py)."""

from __future__ import annotations

from collections.abc import Sequence

from hspc_gen.reports.figure_data import Bar, Bars, Curves, Doc, Interval, Series, interval

ROLE_KIND = {"tuned": "tuned", "peer": "peer", "line": "line"}


def _pairs(counts: Sequence[Doc]) -> str:
    return ", ".join(f"{c['producers']}+{c['consumers']}" for c in counts)


def said(result: Doc) -> str:
    """What the report's page says in words beside the thread figure: the counts equally good
    (the recommendation is the one with the fewest threads) and why more threads than CPUs, if
    the answer has them; empty where no search measured."""
    advice = result.get("recommendation") or {}
    evidence = advice.get("evidence")
    if "error" in advice or not evidence:
        return ""
    words = [f"Equally good, producers+consumers: {_pairs(evidence.get('equally_good') or ())}."]
    cpus = (evidence.get("capacity") or {}).get("cpus")
    if cpus is not None and advice["producers"] + advice["consumers"] > cpus:
        why = evidence.get("oversubscription") or "the fewest threads searched are already more"
        words.append(f"More threads than CPUs ({cpus}): {why}.")
    return " ".join(words)


def threads(result: Doc) -> Curves:
    """Events/s against the thread count, a line per placement, the recommendation marked and
    what ended the search named."""
    advice = result.get("recommendation")
    if not advice:
        return Curves("Threads", "", "", (), empty="no thread search ran (--effort estimate)")
    if "error" in advice:
        return Curves("Threads", "", "", (), empty=f"the thread search failed: {advice['error']}")
    evidence = advice.get("evidence") or {}
    lines: dict[str, dict[float, Interval]] = {}
    for point in evidence.get("curve") or ():
        value = interval({"median": point["events_per_s"], "ci95": point.get("ci95")}, 1e6)
        if value is not None:
            line = lines.setdefault(_line_of(point), {})
            line[float(point["threads"])] = value
    if not lines:
        return Curves("Threads", "", "", (), empty="the thread search measured no point")
    series = tuple(
        Series(name, tuple(sorted(pts)), tuple(pts[x] for x in sorted(pts)))
        for name, pts in sorted(lines.items())
    )
    recommended = advice["producers"] + advice["consumers"]
    same = evidence.get("equally_good") or ()
    return Curves(
        title=(
            f"Threads: recommended {advice['producers']} producer(s) + {advice['consumers']}"
            f" consumer(s), {advice.get('placement', '')}"
        ),
        x_axis="threads (producers + consumers)",
        y_axis="million events/s, all channels (median, 95% interval)",
        series=series,
        marked=(float(recommended),),
        note=(
            f"search ended by: {evidence.get('termination', '?')}"
            + (f"; as good as the best: {_pairs(same)}" if same else "")
        ),
    )


def _line_of(point: Doc) -> str:
    """A line of the curve: one placement, one shape (consumers per producer), so that a thread
    count appears once on it."""
    per = point["consumers"] / max(1, point["producers"])
    return f"{point['placement']}, {per:g} consumer(s) per producer"


def _same_channel(result: Doc, bench: Doc) -> bool:
    return bool(bench.get("channel") == (result.get("winner") or {}).get("params"))


def peers(result: Doc, bench: Doc | None) -> Bars:
    """`hspc-gen bench`'s table: every contender's rate with its interval."""
    if bench is None:
        return Bars("Peers", "", (), empty="hspc-gen bench has not run for this header")
    if not _same_channel(result, bench):
        return Bars("Peers", "", (), empty="hspc-bench.json times another channel than this one")
    bars = []
    for row in bench.get("rows") or ():
        value = interval(row.get("events_per_second"), 1e6)
        if value is not None:
            bars.append(Bar(str(row["what"]), value, ROLE_KIND.get(str(row["role"]), "peer")))
    if not bars:
        return Bars("Peers", "", (), empty="the bench measured no contender")
    return Bars(
        title=(
            f"Side by side with the peer queues ({bench.get('rounds')} interleaved rounds,"
            f" {bench.get('cxxflags')})"
        ),
        axis="million events/s (median, 95% interval)",
        bars=tuple(bars),
    )
