"""The report's thread curve and peer table, as plain data (see figure_data.py)."""

from __future__ import annotations

from collections.abc import Iterable

from hspc_gen.model import Figure
from hspc_gen.model.bench import BenchReport
from hspc_gen.model.result import TuneResult
from hspc_gen.model.threads import FIXED, CurvePoint, ThreadAdvice, ThreadEvidence
from hspc_gen.reports.figure_data import Bar, Bars, Curves, Interval, Series, interval

ROLE_KIND = {"tuned": "tuned", "peer": "peer", "line": "line"}


def _pairs(counts: Iterable[tuple[int, int]]) -> str:
    return ", ".join(f"{p}+{c}" for p, c in counts)


def _measured(result: TuneResult) -> tuple[ThreadAdvice, ThreadEvidence] | None:
    advice = result.threads
    if isinstance(advice, ThreadAdvice) and advice.evidence is not None:
        return advice, advice.evidence
    return None


def said(result: TuneResult) -> str:
    """What the report's page says in words beside the thread figure: the counts equally good
    (the recommendation is the one with the fewest threads) and why more threads than CPUs, if
    the answer has them; empty where no search measured."""
    measured = _measured(result)
    if measured is None:
        return ""
    advice, evidence = measured
    words = [f"Equally good, producers+consumers: {_pairs(advice.equally_good)}."]
    cpus = evidence.capacity.cpus
    if advice.producers + advice.consumers > cpus:
        why = evidence.oversubscription or "the fewest threads searched are already more"
        words.append(f"More threads than CPUs ({cpus}): {why}.")
    return " ".join(words)


def threads(result: TuneResult) -> Curves:
    """Events/s against the thread count, a line per placement, the recommendation marked and
    what ended the search named."""
    if not isinstance(result.threads, ThreadAdvice):
        why = f"the thread search failed: {result.threads.error}"
        return Curves("Threads", "", "", (), empty=why)
    measured = _measured(result)
    if measured is None:
        return Curves("Threads", "", "", (), empty="no thread search ran (--effort estimate)")
    advice, evidence = measured
    lines: dict[str, dict[float, Interval]] = {}
    for point in evidence.curve:
        value = interval(_rate(point), 1e6)
        if value is not None:
            lines.setdefault(_line_of(point), {})[float(point.threads)] = value
    if not lines:
        return Curves("Threads", "", "", (), empty=_unmeasured(advice, evidence))
    series = tuple(
        Series(name, tuple(sorted(pts)), tuple(pts[x] for x in sorted(pts)))
        for name, pts in sorted(lines.items())
    )
    same = advice.equally_good
    return Curves(
        title=(
            f"Threads: recommended {advice.producers} producer(s) + {advice.consumers}"
            f" consumer(s), {advice.placement}"
        ),
        x_axis="threads (producers + consumers)",
        y_axis="million events/s, all channels (median, 95% interval)",
        series=series,
        marked=(float(advice.producers + advice.consumers),),
        note=(
            f"search ended by: {evidence.termination}"
            + (f"; as good as the best: {_pairs(same)}" if same else "")
        ),
    )


def _unmeasured(advice: ThreadAdvice, evidence: ThreadEvidence) -> str:
    if evidence.termination == FIXED:
        return (
            f"the target fixes the counts ({advice.producers}+{advice.consumers}) and no"
            " placement was raced against unpinned: no point was measured"
        )
    return "the thread search measured no point"


def _rate(point: CurvePoint) -> Figure:
    return Figure(point.events_per_s, point.ci95_low, point.ci95_high, point.samples)


def _line_of(point: CurvePoint) -> str:
    """A line of the curve: one placement, one shape (consumers per producer), so that a thread
    count appears once on it."""
    per = point.consumers / max(1, point.producers)
    return f"{point.placement}, {per:g} consumer(s) per producer"


def peers(result: TuneResult, bench: BenchReport | None) -> Bars:
    """`hspc-gen bench`'s table: every contender's rate with its interval."""
    if bench is None:
        return Bars("Peers", "", (), empty="hspc-gen bench has not run for this header")
    if bench.channel != result.winner:
        return Bars("Peers", "", (), empty="hspc-bench.json times another channel than this one")
    bars = [
        Bar(row.contender.label, value, ROLE_KIND.get(str(row.contender.role), "peer"))
        for row in bench.rows
        if (value := interval(row.rate, 1e6)) is not None
    ]
    if not bars:
        return Bars("Peers", "", (), empty="the bench measured no contender")
    return Bars(
        title=(
            f"Side by side with the peer queues ({bench.rounds} interleaved rounds,"
            f" {bench.cxxflags})"
        ),
        axis="million events/s (median, 95% interval)",
        bars=tuple(bars),
    )
