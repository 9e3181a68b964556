#!/usr/bin/env python3
"""Build and run the developer benchmarks; print medians, spread and ratios side by side.

    benchmarks/run.py                      # both programs, 10 interleaved repetitions each
    benchmarks/run.py --only peers --repetitions 20 --filter throughput
    benchmarks/run.py --tuned-header hspc-out/example_channel.hpp    # the winner among the peers
    benchmarks/run.py --native             # a separate build with -march=native

Google Benchmark's JSON of every run is kept under build/benchmarks-results/. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "build" / "benchmarks-results"
PROGRAMS = ("ladder", "peers")
# Rows whose events/s (or latency) the other rows of a group are compared with.
REFERENCES = {
    "ladder/1B/": "ladder/1B/baseline_producer",
    "ladder/8B/": "ladder/8B/baseline_producer",
    "peers/throughput/": "peers/throughput/boost_spsc_bulk",
    "peers/round_trip/": "peers/round_trip/boost_spsc_bulk",
}
_NAMESPACE = re.compile(r"^namespace (\w+) \{$", re.MULTILINE)
_NAME_NOISE = re.compile(r"/(iterations:\d+|repeats:\d+|manual_time)")


@dataclass(frozen=True)
class Rep:
    """One repetition (one sample) of one benchmark, from Google Benchmark's JSON."""

    events_per_s: float
    p50_ns: float | None
    p99_ns: float | None
    preemptions: float
    verified: bool


@dataclass(frozen=True)
class Summary:
    name: str
    n: int
    median: float  # events/s, or for latency rows the p50 latency in ns
    low: float  # first quartile (or minimum with fewer than 4 repetitions)
    high: float
    p99_ns: float | None
    preemptions: float
    verified: bool

    @property
    def latency(self) -> bool:
        return self.p99_ns is not None

    @property
    def spread_pct(self) -> float:
        return 100.0 * (self.high - self.low) / self.median if self.median else 0.0


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--only", choices=PROGRAMS, help="run one program only")
    p.add_argument("--repetitions", type=int, default=10, help="samples per benchmark")
    p.add_argument("--filter", default="", help="Google Benchmark --benchmark_filter regex")
    p.add_argument("--tuned-header", type=Path, help="a generated header to add to hspc_peers")
    p.add_argument("--native", action="store_true", help="build with -march=native")
    p.add_argument("--no-build", action="store_true", help="run what is already built")
    p.add_argument("--deadline-s", type=float, default=120.0, help="per-sample watchdog")
    args = p.parse_args(argv)
    if args.repetitions < 1:
        p.error("--repetitions must be >= 1")
    return args


def call(command: list[str], *, quiet: bool = False) -> None:
    """Runs one of our own commands (an argument list, never a shell); stops on failure."""
    stdout = subprocess.DEVNULL if quiet else None
    subprocess.run(command, cwd=ROOT, check=True, stdout=stdout)


def meson() -> list[str]:
    beside_python = Path(sys.executable).parent / "meson"
    found = str(beside_python) if beside_python.exists() else shutil.which("meson")
    if found is None:
        sys.exit("run.py: meson not found (run ./dev setup, then use .venv/bin/python)")
    return [found]


def tuned_cpp_args(header: Path) -> list[str]:
    """The defines that compile a generated header into hspc_peers (see benchmarks/tuned.cpp)."""
    path = header.resolve()
    if not path.is_file() or any(c in str(path) for c in "\"'\\ "):
        sys.exit(f"run.py: {header}: not a readable file with a plain path")
    spaces = _NAMESPACE.findall(path.read_text(encoding="utf-8"))
    if not spaces:
        sys.exit(f"run.py: {header}: no top-level `namespace NAME {{` line")
    return [f'-DHSPC_TUNED_HEADER="{path}"', f"-DHSPC_TUNED_NAMESPACE={spaces[0]}"]


def build(args: argparse.Namespace, programs: list[str]) -> Path:
    """Configure (once) and build the programs; returns the build directory."""
    cpp_args = tuned_cpp_args(args.tuned_header) if args.tuned_header else []
    if args.native:
        cpp_args.append("-march=native")
    suffix = ("-tuned" if args.tuned_header else "") + ("-native" if args.native else "")
    build_dir = ROOT / "build" / f"benchmarks{suffix}"
    if args.no_build:
        return build_dir
    setup = [*meson(), "setup", str(build_dir), "--buildtype=release"]
    if cpp_args:
        setup.append("-Dcpp_args=[" + ", ".join(f"'{a}'" for a in cpp_args) + "]")
    if (build_dir / "build.ninja").exists():
        setup.append("--reconfigure")
    call(setup, quiet=True)
    targets = [f"hspc_{p}" for p in programs]
    call([*meson(), "compile", "-C", str(build_dir), "-j", "2", *targets])
    return build_dir


def run_program(build_dir: Path, program: str, args: argparse.Namespace) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"{program}-{stamp}.json"
    command = [
        str(build_dir / "benchmarks" / f"hspc_{program}"),
        f"--benchmark_repetitions={args.repetitions}",
        "--benchmark_enable_random_interleaving=true",
        f"--benchmark_out={out}",
        "--benchmark_out_format=json",
        f"--deadline_s={args.deadline_s}",
    ]
    if args.filter:
        command.append(f"--benchmark_filter={args.filter}")
    print(f"run.py: {' '.join(command)}", file=sys.stderr)
    call(command, quiet=True)
    return out


def load_reps(path: Path) -> dict[str, list[Rep]]:
    """Repetitions by clean benchmark name, in the order the program registered them."""
    data = json.loads(path.read_text(encoding="utf-8"))
    runs = [b for b in data["benchmarks"] if b.get("run_type") == "iteration"]
    # Random interleaving ran them shuffled; family_index is the registration order.
    runs.sort(key=lambda b: (b.get("family_index", 0), b.get("repetition_index", 0)))
    reps: dict[str, list[Rep]] = {}
    for b in runs:
        name = _NAME_NOISE.sub("", b["run_name"])
        reps.setdefault(name, []).append(
            Rep(
                events_per_s=float(b.get("items_per_second", 0.0)),
                p50_ns=b.get("latency_p50_ns"),
                p99_ns=b.get("latency_p99_ns"),
                preemptions=float(b.get("nivcsw_producer", 0)) + float(b.get("nivcsw_consumer", 0)),
                verified=b.get("verified", 0) == 1,
            )
        )
    return reps


def summarize(name: str, reps: list[Rep]) -> Summary:
    latency = reps[0].p50_ns is not None
    values = sorted(float(r.p50_ns) if r.p50_ns is not None else r.events_per_s for r in reps)
    if len(values) >= 4:
        q = statistics.quantiles(values, n=4)
        low, high = q[0], q[2]
    else:
        low, high = values[0], values[-1]
    p99s = [float(r.p99_ns) for r in reps if r.p99_ns is not None]
    return Summary(
        name=name,
        n=len(values),
        median=statistics.median(values),
        low=low,
        high=high,
        p99_ns=statistics.median(p99s) if latency and p99s else None,
        preemptions=statistics.median(r.preemptions for r in reps),
        verified=all(r.verified for r in reps),
    )


def rate(events_per_s: float) -> str:
    return f"{events_per_s / 1e6:.4g} M/s"


def micros(ns: float) -> str:
    return f"{ns / 1e3:.3g} us"


def ratio(s: Summary, by_name: dict[str, Summary]) -> str:
    refs = (by_name.get(r) for prefix, r in REFERENCES.items() if s.name.startswith(prefix))
    ref = next(refs, None)
    if ref is None or not ref.median or ref.latency != s.latency:
        return ""
    return f"{s.median / ref.median:.2f}x"


def format_row(s: Summary, by_name: dict[str, Summary]) -> str:
    show = micros if s.latency else rate
    p99 = micros(s.p99_ns) if s.p99_ns is not None else ""
    flag = "" if s.verified else "  WRONG ANSWER"
    return (
        f"{s.name:<44} {show(s.median):>13} {show(s.low):>13} {show(s.high):>13}"
        f" {s.spread_pct / 2:>5.0f}% {p99:>10} {ratio(s, by_name):>7} {s.preemptions:>7.0f}{flag}"
    )


def table(path: Path) -> str:
    reps = load_reps(path)
    summaries = [summarize(name, r) for name, r in reps.items()]
    by_name = {s.name: s for s in summaries}
    n = max((s.n for s in summaries), default=0)
    header = (
        f"{f'benchmark ({n} samples each)':<44} {'median':>13} {'q1':>13} {'q3':>13}"
        f" {'±IQR/2':>6} {'p99':>10} {'ratio':>7} {'preempt':>7}"
    )
    return "\n".join([header, *(format_row(s, by_name) for s in summaries)])


def host_load() -> str:
    """Load average and CPU pressure: the noise these numbers were taken in."""
    parts = []
    for label, path in (("loadavg", "/proc/loadavg"), ("cpu pressure", "/proc/pressure/cpu")):
        try:
            parts.append(f"{label}: {Path(path).read_text(encoding='utf-8').splitlines()[0]}")
        except OSError:
            parts.append(f"{label}: n/a")
    return "; ".join(parts)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    programs = [args.only] if args.only else list(PROGRAMS)
    build_dir = build(args, programs)
    for program in programs:
        before = host_load()
        out = run_program(build_dir, program, args)
        print(f"\n== hspc_{program}  ({out.relative_to(ROOT)})")
        print(f"   before: {before}\n   after:  {host_load()}")
        print(table(out))
    print(
        "\nthroughput rows: events/s; latency rows (round_trip, handoff): p50 per sample."
        " median, q1, q3 over samples (q1/q3 = min/max below 4 samples); ratio = median / the"
        " group's reference (baseline_producer, boost_spsc_bulk); preempt = median involuntary"
        " context switches per sample, both threads."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
