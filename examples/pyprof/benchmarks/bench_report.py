"""The benchmark's table: reads bench_profilers' pyperf JSON and its counters and prints Markdown,
one table a workload, one row a line.

    python bench_report.py bench.json [--counters bench.counters.jsonl] [--seed 0]
    python bench_report.py results/bench.json.gz     # gzipped: the counters' .jsonl.gz beside

- slowdown: the line's time over the unprofiled run's (none), paired by round: each round's
  median value of the line over that round's median of none, then the median of those ratios
  (in logs) over the rounds; the interval is a 95% bootstrap over rounds.
- overhead ÷ cProfile's, ÷ null hook's: (slowdown - 1) over cProfile's, over the do-nothing
  profile hook's (the interpreter's tracing floor: hook-null where measured, else
  hspcprof-null, the same hook when C functions are profiled), from the same bootstrap
  resamples.
- vs cProfile: `pyperf compare_to`'s test, a two-sided Student two-sample t-test at 95% on all
  the values: `faster` or `slower` when significant, else `same`.
- counters (medians over the values that are not warmups): events/s the channel carried (events
  over the profiled run's wall time), stalls a run, and a run's CPU time: the interpreter
  thread's, hspcprof's consumer's (its own count) and the process's other threads' (process
  time less the interpreter's, for any profiler); preempted: the interpreter thread's involuntary
  context switches a run (another thread, a neighbour's or the profiler's own, took its CPU).
- hspcprof's lines name the producer that ran: (setprofile), the profile hook, or (frames), the
  frame evaluation function it takes without C functions (bench_profilers --no-builtins)."""

from __future__ import annotations

import argparse
import gzip
import json
import math
import statistics
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pyperf
from bench_lines import LINES
from bench_profilers import counters_path
from bench_workloads import WORKLOADS
from scipy import stats

RESAMPLES = 2000
BASE, CPROFILE = "none", "cprofile"
NULLS = ("hook-null", "hspcprof-null")  # the do-nothing hook, the first found
COLUMNS = (
    "line",
    "time",
    "slowdown (95% CI)",
    "overhead ÷ cProfile's",
    "overhead ÷ null hook's",
    "vs cProfile",
    "events/s",
    "stalls/run",
    "preempted/run",
    "interp. CPU",
    "consumer CPU",
    "other threads' CPU",
)

Rounds = dict[int, list[float]]  # a benchmark's values by round


def load_values(suite: Any) -> dict[str, Rounds]:
    """Every benchmark's values (warmups left out), by the round that took them."""
    found: dict[str, Rounds] = {}
    for bench in suite.get_benchmarks():
        rounds: Rounds = defaultdict(list)
        for run in bench.get_runs():
            if run.values:
                rounds[int(run.get_metadata().get("round", 0))].extend(run.values)
        found[bench.get_name()] = dict(rounds)
    return found


def counters_beside(path: Path) -> Path:
    """Where bench_profilers wrote the counters of `path`; for a gzipped JSON (pyperf reads
    those), the counters gzipped beside it: bench.json.gz, bench.counters.jsonl.gz."""
    if path.suffix == ".gz":
        plain = counters_path(path.with_suffix(""))
        return plain.with_name(plain.name + ".gz")
    return counters_path(path)


def load_counters(path: Path) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if path.exists():
        data = path.read_bytes()
        data = gzip.decompress(data) if path.suffix == ".gz" else data
        for text in data.decode("utf-8").splitlines():
            value = json.loads(text)
            if not value["warmup"]:
                found[value["benchmark"]].append(value)
    return found


def log_ratios(values: dict[str, Rounds], lines: list[str]) -> tuple[list[int], np.ndarray]:
    """Per round (rows) and line (columns): ln(median of the line / median of none); NaN where
    the line has no value in that round. Only the rounds where none has values count."""
    base = values[BASE]
    rounds = sorted(base)
    table = np.full((len(rounds), len(lines)), np.nan)
    for i, number in enumerate(rounds):
        for j, line in enumerate(lines):
            taken = values[line].get(number)
            if taken:
                table[i, j] = math.log(statistics.median(taken) / statistics.median(base[number]))
    return rounds, table


def derived(table: np.ndarray, lines: list[str]) -> np.ndarray:
    """Rows: slowdown, overhead ÷ cProfile's, overhead ÷ null hook's; columns: lines."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a line with no round: NaN, said so
        slowdown = np.exp(np.nanmedian(table, axis=0))
        over = slowdown - 1.0
        null = next((name for name in NULLS if name in lines), None)
        rel = [
            over / over[lines.index(ref)] if ref in lines else over * np.nan
            for ref in (CPROFILE, null)
        ]
    return np.vstack([slowdown, *rel])


def bootstrap(table: np.ndarray, lines: list[str], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The 2.5 and 97.5 percentiles of derived() over resamples of the rounds."""
    rng = np.random.default_rng(seed)
    rows = table.shape[0]
    draws = np.stack([derived(table[rng.integers(0, rows, rows)], lines) for _ in range(RESAMPLES)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanpercentile(draws, [2.5, 97.5], axis=0)
    return low, high


def versus(values: dict[str, Rounds], line: str) -> str:
    """pyperf compare_to's significance of the line against cProfile."""
    if line == CPROFILE or CPROFILE not in values:
        return "—"
    mine = [v for taken in values[line].values() for v in taken]
    theirs = [v for taken in values[CPROFILE].values() for v in taken]
    if min(len(mine), len(theirs)) < 2:
        return "n/a"
    test = stats.ttest_ind(mine, theirs)
    if not test.pvalue < 0.05:
        return "same"
    return "faster" if statistics.mean(mine) < statistics.mean(theirs) else "slower"


def seconds(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "—"
    if value < 1e-6:  # CPU clocks read a few ns apart: nothing measurable
        return "<1 µs"
    for unit, scale in (("s", 1.0), ("ms", 1e-3)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-6:.3g} µs"


def ratio(point: float, low: float, high: float, interval: bool) -> str:
    if math.isnan(point):
        return "—"
    return f"{point:.3g} [{low:.3g}, {high:.3g}]" if interval else f"{point:.3g}"


def count(value: float | None) -> str:
    if value is None:
        return "—"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g}"


def median_of(values: list[dict[str, Any]], top: str, per: str = "loops") -> float | None:
    """The median over the values of top / per (e.g. stalls a run), None where never counted."""
    taken = [v[top] / v[per] for v in values if v.get(top) is not None and v[per]]
    return statistics.median(taken) if taken else None


def counter_cells(values: list[dict[str, Any]]) -> list[str]:
    rate = median_of(values, "events", "wall")
    stalls = median_of(values, "stalls")
    return [
        count(rate),
        count(stalls),
        count(median_of(values, "preempted")),
        seconds(median_of(values, "interp_cpu")),
        seconds(median_of(values, "consumer_cpu")),
        seconds(median_of(values, "other_cpu")),
    ]


def workload_rows(
    workload: str, values: dict[str, Rounds], counters: dict[str, list[dict[str, Any]]], seed: int
) -> tuple[list[list[str]], int]:
    """One row a line measured on this workload, and how many rounds the ratios pair."""
    mine = {line: values[f"{workload}/{line}"] for line in LINES if f"{workload}/{line}" in values}
    lines = list(mine)
    if BASE in mine:
        rounds, table = log_ratios(mine, lines)
        point = derived(table, lines)
        low, high = bootstrap(table, lines, seed)
    else:
        rounds, point = [], np.full((3, len(lines)), np.nan)
        low = high = point
    rows = []
    for j, line in enumerate(lines):
        time = statistics.median(v for taken in mine[line].values() for v in taken)
        cells = [ratio(point[k, j], low[k, j], high[k, j], len(rounds) > 1) for k in range(3)]
        taken = counters.get(f"{workload}/{line}", [])
        label = " ".join(
            [line, *sorted({f"({v['producer']})" for v in taken if v.get("producer")})]
        )
        rows.append([label, seconds(time), *cells, versus(mine, line), *counter_cells(taken)])
    return rows, len(rounds)


def markdown(rows: list[list[str]]) -> list[str]:
    head = "| " + " | ".join(COLUMNS) + " |"
    rule = "|" + "|".join("---" if i == 0 else "---:" for i in range(len(COLUMNS))) + "|"
    return [head, rule, *("| " + " | ".join(row) + " |" for row in rows)]


def context(suite: Any) -> list[str]:
    """What the values were taken on: pyperf's metadata, and hspcprof's channel if measured."""
    found: dict[str, Any] = {}
    for bench in suite.get_benchmarks():
        found |= {k: v for k, v in bench.get_metadata().items() if k not in found}
    words = [f"{found.get(k, '?')}" for k in ("python_implementation", "python_version")]
    out = [f"Python {' '.join(words)} on {found.get('cpu_model_name', '?')}"]
    out[0] += f" ({found.get('cpu_count', '?')} CPUs), {found.get('size', '?')} size, "
    out[0] += f"C functions {'profiled' if found.get('builtins', 1) else 'not profiled'}."
    if "hspcprof_channel" in found:
        out.append(f"hspcprof's channel: `{found['hspcprof_channel']}`.")
    return out


def report(path: Path, counters_file: Path, seed: int) -> list[str]:
    suite = pyperf.BenchmarkSuite.load(str(path))
    values = load_values(suite)
    counters = load_counters(counters_file)
    names = {name.split("/", 1)[0] for name in values}
    out = [f"# Profilers side by side ({path.name})", "", *context(suite), ""]
    for workload in (w for w in WORKLOADS if w in names):
        rows, rounds = workload_rows(workload, values, counters, seed)
        out += [f"## {workload}: {WORKLOADS[workload].what}", ""]
        out += [f"Paired over {rounds} round(s); time: the median value of a run.", ""]
        out += [*markdown(rows), ""]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Markdown tables of bench_profilers' results.")
    parser.add_argument("json", type=Path, help="the pyperf JSON bench_profilers wrote")
    parser.add_argument("--counters", type=Path, help="its counters (default: beside the JSON)")
    parser.add_argument("--seed", type=int, default=0, help="the bootstrap's seed")
    args = parser.parse_args(argv)
    try:
        lines = report(args.json, args.counters or counters_beside(args.json), args.seed)
    except (OSError, ValueError) as error:  # missing, unreadable, or not bench_profilers' JSON
        parser.error(f"cannot read {args.json}: {error}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
