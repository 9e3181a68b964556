"""The phase benchmark's table and figure from hspc_pool_phases' CSV output (one file per rep).

Per phase (windows of --window_ms; steady = the windows from STEADY_S after the phase began):
  throughput   the median events/s over the steady windows, and its ratio to the best fixed
               size's in the same rep (the best fixed size chosen per phase and rep);
  whole phase  all the phase's events against the best fixed size's (transition included);
  re-converge  seconds from the phase's start until the consumer count enters its steady band
               (the counts seen in the steady windows) and stays there;
  oscillation  count changes between steady windows, and the band's width (max - min).
Summed over the run: every window's events, the pool against the hill climber and each fixed
size. Medians over reps with [min, max].

usage: python3 analyse.py OUT_DIR rep0.csv rep1.csv ...   (writes table.md and phases.png)
"""

from __future__ import annotations

import csv
import itertools
import statistics as st
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib as mpl

mpl.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes

STEADY_S = 2.0
PHASES = ("light", "heavy", "blocking", "light again")


def load(paths: list[str]) -> dict[tuple[str, int], list[dict[str, float | str]]]:
    runs: dict[tuple[str, int], list[dict[str, float | str]]] = defaultdict(list)
    for path in paths:
        with Path(path).open() as f:
            for row in csv.DictReader(f):
                runs[(row["config"], int(row["rep"]))].append(
                    {k: (v if k in ("config", "phase") else float(v)) for k, v in row.items()}
                )
    return runs


def split(rows: list, phases: int = 4) -> list[list]:
    n = len(rows) // phases
    return [rows[i * n : (i + 1) * n] for i in range(phases)]


def phase_stats(rows: list, window_s: float) -> dict[str, float]:
    first = round(STEADY_S / window_s)
    steady = rows[first:]
    counts = [int(r["consumers"]) for r in steady]
    lo, hi = min(counts), max(counts)
    conv = len(rows)
    while conv > 0 and lo <= int(rows[conv - 1]["consumers"]) <= hi:
        conv -= 1
    return {
        "steady": st.median(float(r["events_per_s"]) for r in steady),
        "total": sum(float(r["events_per_s"]) for r in rows),
        "conv_s": conv * window_s,
        "moves": sum(1 for a, b in itertools.pairwise(counts) if a != b),
        "band": hi - lo,
        "count": st.median(counts),
    }


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    return (fmt + " [" + fmt + ", " + fmt + "]").format(st.median(values), min(values), max(values))


def phase_table(p: int, stats: dict, configs: list[str], reps: list[int]) -> list[str]:
    fixed = [c for c in configs if c.startswith("fixed")]
    best = {r: max(fixed, key=lambda c: stats[(c, r)][p]["steady"]) for r in reps}
    lines = [f"\n### {PHASES[p]}\n", "best fixed size per rep: " + ", ".join(best[r] for r in reps)]
    lines += [
        "\n| config | events/s (steady) | / best fixed | whole phase / best fixed |"
        " re-converge s | moves in steady | band | count |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in configs:
        s = [stats[(c, r)][p] for r in reps]
        b = [stats[(best[r], r)][p] for r in reps]
        for x, y in zip(s, b, strict=True):
            x["ratio"] = x["steady"] / y["steady"]
        lines.append(
            f"| {c} | {spread([x['steady'] for x in s], '{:.0f}')} "
            f"| {spread([x['ratio'] for x in s])} "
            f"| {spread([x['total'] / y['total'] for x, y in zip(s, b, strict=True)])} "
            f"| {spread([x['conv_s'] for x in s], '{:.1f}')} "
            f"| {spread([x['moves'] for x in s], '{:.0f}')} "
            f"| {spread([x['band'] for x in s], '{:.0f}')} "
            f"| {spread([x['count'] for x in s], '{:.1f}')} |"
        )
    return lines


def summed_table(runs: dict, stats: dict, configs: list[str], reps: list[int], window_s: float):
    lines = [
        "\n### summed over the run\n",
        "events: every window's; mean ratio: the four phases' steady / best fixed, averaged"
        " (each phase weighs the same, whatever its events/s)\n",
        "| config | events | pool / config (events) | mean ratio to best fixed |",
        "|---|---|---|---|",
    ]
    total = {k: sum(float(r["events_per_s"]) * window_s for r in rows) for k, rows in runs.items()}
    for c in configs:
        mean = [st.mean(x["ratio"] for x in stats[(c, r)]) for r in reps]
        lines.append(
            f"| {c} | {spread([total[(c, r)] for r in reps], '{:.3g}')} "
            f"| {spread([total[('pool', r)] / total[(c, r)] for r in reps])} "
            f"| {spread(mean)} |"
        )
    return lines


def main() -> None:
    out = Path(sys.argv[1])
    runs = load(sys.argv[2:])
    reps = sorted({rep for _, rep in runs})
    configs = sorted({c for c, _ in runs}, key=lambda c: (not c.startswith("fixed"), len(c), c))
    any_rows = next(iter(runs.values()))
    window_s = float(any_rows[1]["t_s"]) - float(any_rows[0]["t_s"])
    stats = {key: [phase_stats(p, window_s) for p in split(rows)] for key, rows in runs.items()}
    lines = [f"reps: {len(reps)}; steady = from {STEADY_S} s after each phase began"]
    for p in range(len(PHASES)):
        lines += phase_table(p, stats, configs, reps)
    lines += summed_table(runs, stats, configs, reps, window_s)
    (out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    figure(out, runs, reps, window_s)


def figure(out: Path, runs: dict, reps: list[int], window_s: float) -> None:
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
    shown = {
        "pool": "tab:blue",
        "hill": "tab:red",
        "fixed1": "0.75",
        "fixed2": "0.5",
        "fixed8": "0.25",
    }
    for c, colour in shown.items():
        for i, r in enumerate(reps):
            rows = runs.get((c, r))
            if not rows:
                continue
            t = [float(x["t_s"]) for x in rows]
            label = c if i == 0 else None
            width = 1.4 if c in ("pool", "hill") else 0.8
            top.plot(
                t,
                [float(x["events_per_s"]) for x in rows],
                color=colour,
                lw=width,
                alpha=0.8,
                label=label,
            )
            bottom.step(
                t,
                [int(x["consumers"]) for x in rows],
                color=colour,
                lw=width,
                alpha=0.8,
                where="post",
                label=label,
            )
    mark_phases(top, bottom, runs[("pool", reps[0])], window_s)
    top.legend(loc="lower left", fontsize=8, ncol=5)
    top.set_title(f"phase benchmark, every rep overlaid ({len(reps)} reps)")
    fig.tight_layout()
    fig.savefig(out / "phases.png", dpi=110)


def mark_phases(top: Axes, bottom: Axes, rows: list, window_s: float) -> None:
    top.set_yscale("log")
    top.set_ylabel("events/s (100 ms windows)")
    bottom.set_ylabel("consumer threads")
    bottom.set_xlabel("s")
    n = len(rows) // 4
    for p, name in enumerate(PHASES):
        x = float(rows[p * n]["t_s"]) - window_s
        for ax in (top, bottom):
            ax.axvline(x, color="k", lw=0.5, ls=":")
        top.text(x + 0.05, top.get_ylim()[1], name, va="top", fontsize=9)


if __name__ == "__main__":
    main()
