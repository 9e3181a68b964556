"""Record the profile events of a real program, for hspc-gen's Stage Two (app.yaml's workload).

The program is pyperformance's richards (`Richards().run(1)`: 1.09 million events on CPython
3.11). The recording is what hspcprof's producer would push, in order: (function, call or return)
for Python functions and for the builtins its hook reports (PyCFunction objects only), and the
time from each event to the next as the interpreter with hspcprof's C hook spends it.

Order: taken with sys.setprofile, which sees the same events in the same order as the C hook.
The program is deterministic, so the order is the same on every recording (checked across runs).

Pace: a Python-level hook costs several times what the interpreter does between two events, so
its gaps are not the C hook's. Each gap is modelled as the interpreter's own work (the recorded
gap less the Python hook's cost per call, the median gap of an empty function called in a loop
under the same hook just before; the median over several runs) plus a constant per event for
the C hook (its call, clock read and push), fitted so that the segment's mean equals the real
producer's pace: the time of the same run under hspcprof (median of runs) over its events. So
the mean is measured on the real producer and only the spread between events is modelled.

The recording keeps a balanced segment (every call returns inside it) from the middle of the run,
so a cyclic replay never leaves calls open.

Run on an idle machine, from the project's .venv with hspcprof installed (see ../README.md):
    python examples/pyprof/stage2/record.py          # writes recording.inc beside this file
The order is byte-identical on every run; the gaps are measurements and vary with the machine.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import platform
import statistics
import sys
import time
import types
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CALLS = {"call": 0, "c_call": 0, "return": 1, "c_return": 1, "c_exception": 1}  # hspcprof's kinds
PER_LINE = 10  # events per line of the .inc
PAD = 7919  # entries a run's recording list starts with, times the run's number


def richards() -> Callable[[], object]:
    """pyperformance's richards benchmark, loaded from the installed package, warmed up once."""
    import pyperformance  # noqa: PLC0415 - only to record (the dev extra installs it)

    root = Path(pyperformance.__file__).parent / "data-files" / "benchmarks" / "bm_richards"
    spec = importlib.util.spec_from_file_location("bm_richards", root / "run_benchmark.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    program = module.Richards()
    program.run(1)
    return lambda: program.run(1)


Hooked = tuple[str, Any, int]  # (what, code object or callable, perf_counter_ns)


def hooked(program: Callable[[], object], pad: int = 0) -> list[Hooked]:
    """Every profile hook call of one run, with the time it was made (the collector off: the
    recording's own list would otherwise start collections no profiled run makes). The list
    starts with `pad` entries of its own, so that where it grows (a copy of the whole list) and
    where the allocator takes fresh memory fall on other events in another run."""
    calls: list[Hooked] = [("", None, i) for i in range(pad)]
    append, now = calls.append, time.perf_counter_ns

    def hook(frame: types.FrameType, what: str, arg: Any) -> None:
        append((what, frame.f_code if what in ("call", "return") else arg, now()))

    gc.disable()
    sys.setprofile(hook)
    try:
        program()
    finally:
        sys.setprofile(None)
        gc.enable()
    return calls[pad:-1]  # the last is the c_call of setprofile(None)


def label(what: str, target: Any) -> str | None:
    """The function an event names, as hspcprof keys it; None for one its hook ignores."""
    if what in ("call", "return"):
        return f"{target.co_qualname} ({Path(target.co_filename).name}:{target.co_firstlineno})"
    if isinstance(target, types.BuiltinFunctionType):  # PyCFunction_Check: one PyMethodDef
        owner = target.__self__
        where = owner.__name__ if isinstance(owner, types.ModuleType) else type(owner).__name__
        return f"<built-in {where}.{target.__name__}>"
    return None


@dataclass(frozen=True)
class Events:
    """A run's events as hspcprof's hook sees them: the function, call (0) or return (1), the
    time since the previous event and how many hook calls that span holds (ignored ones too)."""

    labels: list[str]
    kinds: list[int]
    gaps_ns: list[int]
    hook_calls: list[int]
    hook_ns: float  # what one call of the hook cost in this run


def events_of(calls: list[Hooked], hook_ns: float = 0.0) -> Events:
    events = Events([], [], [], [], hook_ns)
    last, pending = calls[0][2], 0
    for what, target, now in calls:
        pending += 1
        name = label(what, target)
        if name is None:
            continue
        events.labels.append(name)
        events.kinds.append(CALLS[what])
        events.gaps_ns.append(now - last)
        events.hook_calls.append(pending)
        last, pending = now, 0
    return events


def balanced_segment(kinds: list[int], skip: int, length: int) -> tuple[int, int]:
    """[first, end) of at least `length` events from `skip` on, starting and ending at the
    shallowest depth of the run's middle (the benchmark's scheduler loop): every call in it
    returns in it, and it never returns from a call made before it."""
    depth, before = 0, []
    for kind in kinds:
        before.append(depth)
        depth += 1 if kind == 0 else -1
    n = len(kinds)
    floor = min(before[n // 10 : n - n // 10])
    first = next(i for i in range(skip, n) if before[i] == floor)
    end = next(i for i in range(first + length, n) if before[i] == floor)
    if min(before[first:end]) != floor:
        raise SystemExit(f"no balanced segment of {length} events from event {skip}")
    return first, end


def hook_cost_ns() -> float:
    """What the recording hook costs per call, as it runs now: the median gap between the events
    of an empty function called in a loop under it (the hook, plus the least work an event can
    follow: a loop step or an empty body)."""

    def empty() -> None:
        pass

    def loop() -> None:
        for _ in range(20_000):
            empty()

    return statistics.median(events_of(hooked(loop)).gaps_ns[1:])


def recorded(program: Callable[[], object], run: int) -> Events:
    """Run `run`'s events, with the hook's cost measured just before it. Each run pads its list
    differently: the recorder's own pauses then fall on other events, and the median over the
    runs takes them out."""
    hook_ns = hook_cost_ns()
    return events_of(hooked(program, pad=run * PAD), hook_ns)


def timed(program: Callable[[], object]) -> int:
    t0 = time.perf_counter_ns()
    program()
    return time.perf_counter_ns() - t0


def real_pace_ns(program: Callable[[], object], events: int, repeats: int) -> float:
    """The real producer's time per event: the run under hspcprof (the C hook, the clock and
    the push into its tuned channel) over its events, the median of `repeats`."""
    import hspcprof  # noqa: PLC0415 - built from ../ (see ../README.md), only to record

    times, stalls = [], 0
    for _ in range(repeats):
        profile = hspcprof.Profile()
        profile.enable()
        times.append(timed(program))
        profile.disable()
        stalls += profile.stalls
    if stalls:  # a wait for a full channel: the consumer's pace, not the producer's, in the time
        print(f"record: the producer waited for its channel {stalls} time(s) in {repeats} runs")
    return statistics.median(times) / events


@dataclass(frozen=True)
class Recording:
    functions: list[str]  # by index, in the order first seen
    events: list[tuple[int, int, int]]  # (function index, kind, gap in ns before it)
    hook_ns: float  # the Python hook's cost per call, taken out of each gap
    pace_ns: float  # the real producer's mean time per event, the segment's mean gap
    c_hook_ns: float  # the constant per event that makes it so

    def builtin(self, index: int) -> bool:
        return self.functions[index].startswith("<built-in ")


def fitted(runs: list[Events], first: int, end: int, pace_ns: float) -> Recording:
    """The segment with each gap the interpreter's own work (the median over the runs less the
    Python hook's calls in it) plus the constant that brings the mean to the real pace."""
    base = runs[0]
    for run in runs[1:]:
        same = run.labels[first:end] == base.labels[first:end]
        if not same or run.kinds[first:end] != base.kinds[first:end]:
            raise SystemExit("the program's events differ between runs: not deterministic")
    work = [
        max(
            0.0, statistics.median(run.gaps_ns[i] - run.hook_ns * run.hook_calls[i] for run in runs)
        )
        for i in range(first, end)
    ]
    mean = statistics.fmean(work)
    if mean >= pace_ns:  # a run disturbed by other load: the gaps, scaled to the pace, are all
        print(f"record: the gaps exceed the real pace by {mean - pace_ns:.1f} ns/event: scaled")
        work, mean = [own * pace_ns / mean for own in work], pace_ns
    c_hook = pace_ns - mean
    index: dict[str, int] = {}
    events = []
    for i, own in zip(range(first, end), work, strict=True):
        function = index.setdefault(base.labels[i], len(index))
        events.append((function, base.kinds[i], round(own + c_hook)))
    hook_ns = statistics.median(run.hook_ns for run in runs)
    return Recording(list(index), events, hook_ns, pace_ns, c_hook)


def inc_text(recording: Recording, source: str) -> str:
    """The recording as C++ (included inside a namespace by replay.hpp): the functions and the
    events, one uint32 each, `gap_ns << 8 | function << 1 | kind`."""
    gaps = [gap for _, _, gap in recording.events]
    assert len(recording.functions) <= 128 and max(gaps) < 1 << 24
    deciles = statistics.quantiles(gaps, n=10)
    lines = [
        "// Generated by examples/pyprof/stage2/record.py; re-record rather than edit.",
        f"// {source}; CPython {platform.python_version()} ({platform.machine()}).",
        f"// {len(gaps)} events, a balanced segment of the run; {len(recording.functions)}"
        " functions.",
        f"// Pace: {recording.pace_ns:.1f} ns/event measured under hspcprof; the Python hook's"
        f" {recording.hook_ns:.1f} ns/call",
        f"// taken out of each recorded gap, {recording.c_hook_ns:.1f} ns/event added for the"
        f" C hook. Gaps: p10 {deciles[0]:.0f}, median {deciles[4]:.0f}, p90 {deciles[8]:.0f},"
        f" max {max(gaps)} ns.",
        "",
        f"constexpr int kFunctions = {len(recording.functions)};",
        "// 1: a builtin (hspcprof keys it by its PyMethodDef), 0: a Python function (its code).",
        "constexpr bool kBuiltin[kFunctions] = {",
        *(
            f"    {int(recording.builtin(i))},  // {i}: {name}"
            for i, name in enumerate(recording.functions)
        ),
        "};",
        "",
        "// Each event: gap_ns << 8 | function << 1 | kind (0 call, 1 return).",
        f"constexpr std::uint32_t kEvents[{len(gaps)}] = {{",
    ]
    packed = [gap << 8 | function << 1 | kind for function, kind, gap in recording.events]
    for at in range(0, len(packed), PER_LINE):
        lines.append("    " + ", ".join(str(word) for word in packed[at : at + PER_LINE]) + ",")
    lines.append("};")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "recording.inc")
    parser.add_argument("--events", type=int, default=20_000, help="segment length, at least")
    parser.add_argument("--skip", type=int, default=100_000, help="events before the segment")
    parser.add_argument("--runs", type=int, default=5, help="runs whose median gaps are kept")
    args = parser.parse_args(argv)
    program = richards()
    # The real pace first, while the heap is small: the recordings' lists would make every
    # collection in a profiled run slower than the program's own.
    alone = statistics.median(timed(program) for _ in range(args.runs))
    profiled = real_pace_ns(program, 1, args.runs)  # per run, until the events are counted
    runs = [recorded(program, run) for run in range(args.runs)]
    first, end = balanced_segment(runs[0].kinds, args.skip, args.events)
    pace_ns = profiled / len(runs[0].kinds)
    recording = fitted(runs, first, end, pace_ns)
    source = f"pyperformance {version('pyperformance')} bm_richards, Richards().run(1)"
    args.out.write_text(inc_text(recording, source), encoding="utf-8")
    print(
        f"record: {args.out.name}: events {first}..{end} of {len(runs[0].kinds)},"
        f" {len(recording.functions)} functions; hook {recording.hook_ns:.1f} ns/call, real pace"
        f" {pace_ns:.1f} ns/event, C hook {recording.c_hook_ns:.1f} ns/event; the program"
        f" alone {alone / len(runs[0].kinds):.1f} ns/event, its modelled work"
        f" {pace_ns - recording.c_hook_ns:.1f} ns/event"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
