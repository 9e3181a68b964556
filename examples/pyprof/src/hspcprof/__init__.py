"""cProfile's deterministic profile, with the bookkeeping moved off the interpreter thread.

The interpreter (the producer) pushes a 16-byte event per call and return into a channel that
hspc-gen tuned for this machine when the package was built; C++ threads (the consumers) compute
what cProfile computes. The result is cProfile's: `pstats.Stats(profile)` reads it the same way.

Every Python thread is profiled, each through a channel of its own, all drained by one pool of
consumers (at most one per usable CPU, `Profile.consumers` the most it ran): enable() covers
the threads running then and, through threading.setprofile, those started later. The
threads' profiles are summed, as pstats.Stats.add would sum one cProfile per thread. In a
forked child, a profiler enabled at fork is off: the consumers stayed in the parent.

Beside cProfile's totals the consumers keep every distinct stack with its exact times
(`Profile.stacks()`), written as collapsed stacks, speedscope JSON or a flame graph
(`Profile.dump(file, format)`, hspcprof.stacks, hspcprof.flame).
"""

from __future__ import annotations

import cProfile
import marshal
import os
from collections.abc import Callable
from pathlib import Path
from types import CodeType, TracebackType
from typing import Any, NamedTuple, ParamSpec, TypeVar

from hspcprof import flame
from hspcprof import stacks as stacks_out
from hspcprof._core import Profiler, _after_fork_in_child, channel_info, clock_info
from hspcprof.stacks import Stack

__all__ = ["FORMATS", "Profile", "Stack", "channel_info", "clock_info", "run", "runctx"]

# What dump() writes: pstats' marshal file (cProfile's -o), collapsed stacks, speedscope JSON,
# or an SVG flame graph.
FORMATS = ("pstats", "collapsed", "speedscope", "flamegraph")

os.register_at_fork(after_in_child=_after_fork_in_child)

P = ParamSpec("P")
R = TypeVar("R")


class SubEntry(NamedTuple):
    """A caller -> callee edge, with the fields of `_lsprof.profiler_subentry`."""

    code: CodeType | str
    callcount: int
    reccallcount: int
    totaltime: float
    inlinetime: float


class Entry(NamedTuple):
    """A function, with the fields of `_lsprof.profiler_entry`."""

    code: CodeType | str
    callcount: int
    reccallcount: int
    totaltime: float
    inlinetime: float
    calls: list[SubEntry]


class Profile(Profiler):
    """A drop-in for `cProfile.Profile` (without a custom timer)."""

    stats: dict[tuple[str, int, str], tuple[Any, ...]]

    def getstats(self) -> list[Entry]:
        return [
            Entry(*head, [SubEntry(*callee) for callee in callees])
            for head, callees in self._getstats()
        ]

    # cProfile's own code turns the entries into pstats' dict, so both agree by construction
    # (label collisions and the callers tuple's order included).
    def snapshot_stats(self) -> None:
        cProfile.Profile.snapshot_stats(self)  # type: ignore[arg-type]

    def create_stats(self) -> None:
        self.disable()
        self.snapshot_stats()

    def print_stats(self, sort: str | int = -1) -> None:
        import pstats  # noqa: PLC0415 - as cProfile does: only printing needs it

        pstats.Stats(self).strip_dirs().sort_stats(sort).print_stats()  # type: ignore[arg-type]

    def dump_stats(self, file: str) -> None:
        self.create_stats()
        with open(file, "wb") as f:  # noqa: PTH123 - cProfile's signature: a plain file name
            marshal.dump(self.stats, f)

    def stacks(self) -> list[Stack]:
        """Every distinct stack with its exact calls, total and own time (disables first)."""
        self.disable()
        return stacks_out.from_tree(self._getstacks())

    def dump(self, file: str, format: str = "pstats", name: str = "hspcprof") -> None:
        """Writes the profile in one of FORMATS; `name` titles the speedscope profile and the
        flame graph."""
        if format == "pstats":
            self.dump_stats(file)
            return
        found = self.stacks()
        if format == "collapsed":
            text = stacks_out.collapsed(found)
        elif format == "speedscope":
            text = stacks_out.speedscope_text(found, name)
        elif format == "flamegraph":
            text = flame.svg(found, name)
        else:
            raise ValueError(
                f"hspcprof: format must be one of {', '.join(FORMATS)}, not {format!r}"
            )
        Path(file).write_text(text, encoding="utf-8")

    def run(self, cmd: str) -> Profile:
        import __main__  # noqa: PLC0415

        namespace = __main__.__dict__
        return self.runctx(cmd, namespace, namespace)

    def runctx(
        self,
        cmd: str | CodeType,
        globals: dict[str, Any],
        locals: dict[str, Any] | None,
    ) -> Profile:
        self.enable()
        try:
            exec(cmd, globals, locals)
        finally:
            self.disable()
        return self

    def runcall(self, func: Callable[P, R], /, *args: P.args, **kw: P.kwargs) -> R:
        self.enable()
        try:
            return func(*args, **kw)
        finally:
            self.disable()

    def __enter__(self) -> Profile:
        self.enable()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.disable()


def run(statement: str, filename: str | None = None, sort: str | int = -1) -> None:
    """`cProfile.run`: profile a statement in __main__'s namespace; print or dump the stats."""
    profile = Profile()
    try:
        profile.run(statement)
    finally:
        _report(profile, filename, sort)


def runctx(
    statement: str | CodeType,
    globals: dict[str, Any],
    locals: dict[str, Any] | None,
    filename: str | None = None,
    sort: str | int = -1,
    *,
    builtins: bool = True,
    format: str = "pstats",
    name: str = "hspcprof",
) -> None:
    """`cProfile.runctx`: as run(), in the namespaces given; the file in `format` (FORMATS),
    `name` its title."""
    profile = Profile(builtins=builtins)
    try:
        profile.runctx(statement, globals, locals)
    finally:
        _report(profile, filename, sort, format, name)


def _report(
    profile: Profile,
    filename: str | None,
    sort: str | int,
    format: str = "pstats",
    name: str = "hspcprof",
) -> None:
    if filename is not None:
        profile.dump(filename, format, name)
    else:
        profile.print_stats(sort)
