"""Issue 13's benchmark: each workload of bench_workloads under each line of bench_lines (no
profiler, hspcprof's four modes, cProfile, yappi, VizTracer, pyinstrument), side by side, with
pyperf: worker processes, its calibration of loops, its warmups and values. One pyperf benchmark
a pair, named `<workload>/<line>`, all in one JSON file.

    python bench_profilers.py -o bench.json [--rounds 10] [--processes 2] [--fast]
        [--workloads fib,go] [--lines none,cprofile] [--size full|smoke] [--no-builtins]
        [pyperf options]

Interleaving: the command runs `--rounds` rounds; each round is one pyperf run (this script
again, with --round) over every pair, workloads in a fresh seeded random order and each
workload's lines in another, `--processes` worker processes per pair, `--append`ing to the JSON
(pyperf merges the runs of a name). A neighbour's burst or a slow drift so lands on every line
instead of on whichever ran then; the report pairs lines by round. The first round calibrates
each pair's loops with pyperf's own calibration; later rounds reuse that number, so every value
of a pair is the same work.

Counters: every value's worker appends one JSON line to `--counters` (default: the output's name
with `.counters.jsonl`): the pair, its round, whether pyperf calls it a warmup or calibration,
loops, and the sums over those loops of wall time, the interpreter thread's CPU time
(time.thread_time), the CPU time of the process's other threads (time.process_time less the
former: hspcprof's consumer, any profiler's helper), the interpreter thread's involuntary
context switches (getrusage RUSAGE_THREAD: another thread took its CPU), and hspcprof's own
events, stalls, consumer_cpu and producer. A side file, because pyperf's run metadata is fixed
before the values are taken and keeps only what every run of a benchmark shares."""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from functools import cache
from importlib import metadata as dist
from pathlib import Path
from typing import Any

import pyperf
from bench_lines import LINES, Line, default_lines
from bench_workloads import SIZES, WORKLOADS, Work

ROUND_FLAG = "--round"
PACKAGED = ("yappi", "viztracer", "pyinstrument")  # lines named as their distributions


def counters_path(output: str | Path) -> Path:
    return Path(output).with_suffix(".counters.jsonl")


def listed(text: str, known: dict[str, Any], what: str) -> list[str]:
    """A comma-separated subset of `known`, in known's order (an unknown name is refused)."""
    wanted = [w.strip() for w in text.split(",") if w.strip()]
    unknown = sorted(set(wanted) - set(known))
    if unknown or not wanted:
        raise argparse.ArgumentTypeError(
            f"unknown {what} {', '.join(unknown) or '(none given)'}: choose from {', '.join(known)}"
        )
    return [name for name in known if name in wanted]


def add_selection(parser: argparse.ArgumentParser) -> None:
    """The options the command and each round share."""
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated")
    parser.add_argument(
        "--lines", help="comma-separated (default: all, hook-null only with --no-builtins)"
    )
    parser.add_argument("--size", choices=SIZES, default="full", help="the workloads' size")
    parser.add_argument("--seed", type=int, default=13, help="the rounds' random orders")
    parser.add_argument(
        "--no-builtins",
        dest="builtins",
        action="store_false",
        help="profile no C functions (hspcprof: its fast producer), see bench_lines",
    )


def add_round_arguments(parser: argparse.ArgumentParser) -> None:
    add_selection(parser)
    parser.add_argument(ROUND_FLAG, type=int, required=True, help="(set by the command)")
    parser.add_argument("--counters", required=True, help="(set by the command)")


def round_options(args: argparse.Namespace, number: int, counters: str | Path) -> list[str]:
    """What decides a round's order and its work: from the command to the round's pyperf
    master, and from that to each of its workers."""
    words = [ROUND_FLAG, str(number), "--seed", str(args.seed), "--size", args.size]
    words += ["--workloads", args.workloads, "--lines", args.lines, "--counters", str(counters)]
    return words + ([] if args.builtins else ["--no-builtins"])


def pass_to_workers(cmd: list[str], args: argparse.Namespace) -> None:
    """pyperf's add_cmdline_args."""
    cmd += round_options(args, args.round, args.counters)


def pairs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The round's order: blocked by workload, both levels shuffled with the round's seed."""
    rng = random.Random(f"{args.seed}/{args.round}")
    workloads = listed(args.workloads, WORKLOADS, "workload")
    lines = listed(args.lines, LINES, "line")
    rng.shuffle(workloads)
    order = []
    for workload in workloads:
        rng.shuffle(lines)
        order += [(workload, line) for line in lines]
    return order


@cache
def prepared(workload: str, size: str) -> Work:
    return WORKLOADS[workload].prepare(size)


@dataclass
class Value:
    """One pyperf value: `loops` profiled runs of one pair, with their sums."""

    benchmark: str
    round: int
    warmup: bool
    calibration: bool
    loops: int
    wall: float = 0.0
    interp_cpu: float = 0.0
    other_cpu: float = 0.0
    preempted: int = 0
    consumer_cpu: float | None = None
    events: int | None = None
    stalls: int | None = None
    producer: str | None = None


def _add(total: int | float | None, more: int | float | None) -> Any:
    return None if more is None else (total or 0) + more


@dataclass
class Timing:
    """The time function given to pyperf, keeping a Value per call for the counters file."""

    args: argparse.Namespace
    values: list[Value] = field(default_factory=list)

    def __call__(self, loops: int, workload: str, line: str) -> float:
        work = prepared(workload, self.args.size)
        value = self.new_value(f"{workload}/{line}", loops)
        for _ in range(loops):
            self.profiled(work, LINES[line](self.args.builtins), value)
        self.values.append(value)
        return value.wall

    def new_value(self, name: str, loops: int) -> Value:
        args = self.args
        calibration = bool(args.calibrate_loops or args.recalibrate_loops)
        calibration |= bool(args.calibrate_warmups or args.recalibrate_warmups)
        warmup = calibration or sum(v.benchmark == name for v in self.values) < args.warmups
        return Value(name, args.round, warmup, calibration, loops)

    @staticmethod
    def profiled(work: Work, session: Line, value: Value) -> None:
        switches = resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw
        cpu0, process0 = time.thread_time(), time.process_time()
        start = time.perf_counter()
        session.start()
        work()
        session.finish()
        wall = time.perf_counter() - start
        cpu, process = time.thread_time() - cpu0, time.process_time() - process0
        switches = resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw - switches
        session.close()
        counts = session.counts()
        value.wall += wall
        value.interp_cpu += cpu
        value.preempted += switches
        value.other_cpu += max(0.0, process - cpu)
        value.consumer_cpu = _add(value.consumer_cpu, counts.consumer_cpu)
        value.events = _add(value.events, counts.events)
        value.stalls = _add(value.stalls, counts.stalls)
        value.producer = counts.producer

    def write(self, path: str) -> None:
        with Path(path).open("a", encoding="utf-8") as out:
            for value in self.values:
                out.write(json.dumps(asdict(value), sort_keys=True) + "\n")


def known_loops(output: str | None) -> dict[str, int]:
    """Each benchmark's loops as an earlier round calibrated them (none before the first)."""
    if not output or not Path(output).exists():
        return {}
    suite = pyperf.BenchmarkSuite.load(output)
    found = {}
    for bench in suite.get_benchmarks():
        runs = [run for run in bench.get_runs() if run.values]
        if runs:
            found[bench.get_name()] = runs[-1].get_loops()
    return found


def line_metadata(workload: str, line: str, args: argparse.Namespace) -> dict[str, Any]:
    found: dict[str, Any] = {"workload": workload, "line": line, "round": args.round}
    found["size"], found["builtins"] = args.size, int(args.builtins)
    if line.startswith("hspcprof"):
        import hspcprof  # noqa: PLC0415 - only the hspcprof lines need the extension

        found["hspcprof_channel"] = json.dumps(hspcprof.channel_info(), sort_keys=True)
    elif line in PACKAGED:
        found["profiler_version"] = dist.version(line)
    return found


def run_round() -> None:
    """One pyperf run over every pair (this process is pyperf's master or one of its workers)."""
    runner = pyperf.Runner(add_cmdline_args=pass_to_workers)
    add_round_arguments(runner.argparser)
    args = runner.parse_args()
    loops = {} if args.worker else known_loops(args.append)
    timing = Timing(args)
    for workload, line in pairs(args):
        name = f"{workload}/{line}"
        if name in loops:
            runner.args.loops = loops[name]
        meta = line_metadata(workload, line, args)
        runner.bench_time_func(name, timing, workload, line, metadata=meta)
    if args.worker:
        timing.write(args.counters)


def command_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Time each workload under each profiler with pyperf, in interleaved rounds.",
        epilog="Other options (--values, --warmups, --min-time, --affinity, ...) go to pyperf.",
    )
    parser.add_argument("-o", "--output", required=True, help="the pyperf JSON file to write")
    parser.add_argument("--counters", help="the counters' JSONL file (default: beside -o)")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds (10)")
    parser.add_argument("--processes", type=int, default=2, help="per pair and round (2)")
    parser.add_argument(
        "--fast", action="store_true", help="a smoke run: 2 rounds of 1 process of 1 value"
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="the interpreter that runs the rounds, with pyperf, the profilers and hspcprof "
        "installed (default: this one)",
    )
    add_selection(parser)
    return parser


def round_command(args: argparse.Namespace, counters: Path, number: int) -> list[str]:
    cmd = [args.python, str(Path(__file__).resolve()), *round_options(args, number, counters)]
    cmd += ["--append", args.output, "--processes", str(args.processes)]
    return cmd + (["--values", "1"] if args.fast else [])


def run_command(argv: list[str]) -> int:
    """The rounds, one pyperf run each; the output files must not exist yet."""
    parser = command_parser()
    args, to_pyperf = parser.parse_known_args(argv)
    counters = Path(args.counters) if args.counters else counters_path(args.output)
    args.lines = args.lines or ",".join(default_lines(args.builtins))
    for names, known, what in (
        (args.workloads, WORKLOADS, "workload"),
        (args.lines, LINES, "line"),
    ):
        try:
            listed(names, known, what)
        except argparse.ArgumentTypeError as error:
            parser.error(str(error))
    if not os.access(args.python, os.X_OK) or Path(args.python).is_dir():
        parser.error(f"--python {args.python}: not an interpreter that can be run")
    if args.fast:
        args.rounds, args.processes = 2, 1
    for path in (Path(args.output), counters):
        if path.exists():
            parser.error(f"{path} exists already: give a new name or remove it")
    for number in range(1, args.rounds + 1):
        print(f"bench_profilers: round {number}/{args.rounds}", flush=True)
        done = subprocess.run([*round_command(args, counters, number), *to_pyperf], check=False)
        if done.returncode != 0:
            return done.returncode
    print(f"bench_profilers: wrote {args.output} and {counters}", flush=True)
    return 0


if __name__ == "__main__":
    if ROUND_FLAG in sys.argv:
        run_round()
    else:
        sys.exit(run_command(sys.argv[1:]))
