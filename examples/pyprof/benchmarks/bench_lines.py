"""The benchmark's lines: one profiled run each, from start() to the moment its profile is complete
(finish()). Each profiler is imported only by the line that uses it, so a worker process loads
one profiler and a machine without one can still run the others.

What finish() includes, per line:
- none (the paper's Optimal): nothing is installed.
- hook-null: a profile hook that does nothing (`PyEval_SetProfile`, hspcprof's null mode), the
  interpreter's own tracing floor, whatever `builtins` says. With builtins it is hspcprof-null
  itself, so only `--no-builtins` runs it by default (`default_lines`), where hspcprof-null is
  the frame evaluation function that does nothing.
- hspcprof-null / -empty / -channel / -inline: `create_stats()`, i.e. disable() (which returns
  once the consumer thread has drained the channel and stopped) and the pstats dict, built by
  cProfile's own snapshot code: the same finishing work as the cprofile line.
- cprofile: `create_stats()` (disable() and the pstats dict).
- yappi: `stop()` and `get_func_stats()`; wall clock (`set_clock_type("wall")`).
- viztracer: `stop()`; its ring buffer is kept in memory, never parsed nor saved to disk (the
  buffer is cleared after the timed part).
- pyinstrument: `stop()`, which builds its session (a statistical profiler, 1 ms interval).
With `builtins` (the default), every deterministic line records C functions too, as cProfile
does by default: yappi runs with `builtins=True` (its default is False); VizTracer and hspcprof
record them by default. Without, none does (cProfile and yappi `builtins=False`, VizTracer
`ignore_c_function=True`), and hspcprof takes its fast producer, the frame evaluation function
(`producer` says which ran); pyinstrument samples either way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any


@dataclass
class Counts:
    """What a profiler says of its own run: hspcprof's counters; None where it has none."""

    events: int | None = None
    stalls: int | None = None
    consumer_cpu: float | None = None
    producer: str | None = None


class Line:
    """One run of a line: start(), the work, finish() are timed; counts() and close() are not.
    A line is made with `builtins`: whether C functions are profiled."""

    def __init__(self, builtins: bool = True) -> None:
        self.builtins = builtins

    def start(self) -> None:
        pass

    def finish(self) -> None:
        pass

    def counts(self) -> Counts:
        return Counts()

    def close(self) -> None:
        pass


class Hspcprof(Line):
    def __init__(self, mode: str, builtins: bool = True) -> None:
        import hspcprof  # noqa: PLC0415 - only the hspcprof lines need the extension

        self.profile = hspcprof.Profile(builtins=builtins, mode=mode)

    def start(self) -> None:
        self.profile.enable()

    def finish(self) -> None:
        self.profile.create_stats()

    def counts(self) -> Counts:
        p = self.profile
        return Counts(p.events, p.stalls, p.consumer_cpu, p.producer)


class CProfile(Line):
    def __init__(self, builtins: bool = True) -> None:
        import cProfile  # noqa: PLC0415 - imported by its own line only, as the others

        self.profile = cProfile.Profile(builtins=builtins)

    def start(self) -> None:
        self.profile.enable()

    def finish(self) -> None:
        self.profile.create_stats()


class Yappi(Line):
    def __init__(self, builtins: bool = True) -> None:
        import yappi  # noqa: PLC0415 - its own line only

        super().__init__(builtins)
        self.yappi = yappi
        yappi.set_clock_type("wall")
        self.stats: object = None

    def start(self) -> None:
        self.yappi.start(builtins=self.builtins)

    def finish(self) -> None:
        self.yappi.stop()
        self.stats = self.yappi.get_func_stats()

    def close(self) -> None:
        self.yappi.clear_stats()


_tracers: list[Any] = []


class VizTracer(Line):
    """One tracer a process: its ring buffer (a million entries) is allocated once, as a user's
    would be, and cleared between runs. (A worker runs one line, so one `builtins`.)"""

    def __init__(self, builtins: bool = True) -> None:
        if not _tracers:
            from viztracer import VizTracer as Tracer  # noqa: PLC0415

            tracer = Tracer(verbose=0, register_global=False, ignore_c_function=not builtins)
            _tracers.append(tracer)
        self.tracer = _tracers[0]

    def start(self) -> None:
        self.tracer.start()

    def finish(self) -> None:
        self.tracer.stop()

    def close(self) -> None:
        self.tracer.clear()


class Pyinstrument(Line):
    def __init__(self, builtins: bool = True) -> None:  # a sampler: it sees C functions anyway
        from pyinstrument import Profiler  # noqa: PLC0415 - its own line only

        self.profiler = Profiler()
        self.session: object = None

    def start(self) -> None:
        self.profiler.start()

    def finish(self) -> None:
        self.session = self.profiler.stop()


HSPCPROF_MODES = ("null", "empty", "channel", "inline")

# In the report's order: the floor, hspcprof from its tracing floor up to its upper bound, then
# the profilers people use.
LINES: dict[str, Callable[[bool], Line]] = {
    "none": Line,
    "hook-null": lambda _builtins: Hspcprof("null", builtins=True),
    **{f"hspcprof-{mode}": partial(Hspcprof, mode) for mode in HSPCPROF_MODES},
    "cprofile": CProfile,
    "yappi": Yappi,
    "viztracer": VizTracer,
    "pyinstrument": Pyinstrument,
}


def default_lines(builtins: bool) -> list[str]:
    """Every line, but hook-null where it would be hspcprof-null again."""
    return [name for name in LINES if not (builtins and name == "hook-null")]
