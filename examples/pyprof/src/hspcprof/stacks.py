"""Exact stacks: the calling-context tree the consumer threads aggregate beside cProfile's
totals (stacks.hpp), and the files people open it in.

Each distinct stack (the functions open from a thread's first profiled call down) carries the
exact own time, total time and call count of the calls made on it; the threads' trees are summed
as their pstats are. Own times sum to the pstats own times. Written as:
- collapsed stacks (flamegraph.pl, inferno, speedscope's import): one `frame;frame;frame value`
  line per stack, outermost frame first, value = own time in integer nanoseconds;
- speedscope JSON: one "sampled" profile whose samples are the stacks and whose weights are their
  own times in nanoseconds (https://www.speedscope.app/file-format-schema.json).
Nanoseconds are rounded on the running sum, so the values add up to the rounded total own time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import CodeType
from typing import Any

TRUNCATED = "[truncated]"
SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"


@dataclass(frozen=True, order=True)
class Frame:
    """A function as the outputs name it: a Python function by its qualified name and where it
    starts, a C function by cProfile's name for it (file ""), a folded subtree as [truncated]."""

    name: str
    file: str = ""
    line: int = 0

    def label(self) -> str:
        """The collapsed format's text for it: no ';' (the frame separator) and no line break."""
        text = f"{self.name} ({self.file}:{self.line})" if self.file else self.name
        return text.replace(";", ",").replace("\n", " ").replace("\r", " ")


@dataclass(frozen=True)
class Stack:
    """One calling context: its frames (outermost first), calls, total and own time (seconds)."""

    frames: tuple[Frame, ...]
    calls: int
    total: float
    own: float


def frame_of(label: CodeType | str | None) -> Frame:
    if label is None:
        return Frame(TRUNCATED)
    if isinstance(label, str):
        return Frame(label)
    return Frame(label.co_qualname, label.co_filename, label.co_firstlineno)


def from_tree(nodes: Iterable[tuple[int, Any, int, float, float]]) -> list[Stack]:
    """The stacks of a calling-context tree as _core hands it: (parent, label, calls, total, own)
    per node, parents first, node i + 1 at list index i (0 is the root). Sorted by frames."""
    paths: list[tuple[Frame, ...]] = [()]
    found = []
    for parent, label, calls, total, own in nodes:
        frames = (*paths[parent], frame_of(label))
        paths.append(frames)
        found.append(Stack(frames, calls, total, own))
    return sorted(found, key=lambda stack: stack.frames)


def nanoseconds(seconds: Sequence[float]) -> list[int]:
    """Each value in integer nanoseconds, rounded on the running sum: they add up to the total's
    rounding, not to the sum of each one's."""
    out, done, running = [], 0, 0.0
    for value in seconds:
        running += value
        upto = round(running * 1e9)
        out.append(upto - done)
        done = upto
    return out


def collapsed(stacks: Sequence[Stack]) -> str:
    """flamegraph.pl's input: one line per stack with own time, in nanoseconds; none for 0."""
    weights = nanoseconds([stack.own for stack in stacks])
    lines = [
        f"{';'.join(frame.label() for frame in stack.frames)} {weight}"
        for stack, weight in zip(stacks, weights, strict=True)
        if weight > 0
    ]
    return "".join(f"{line}\n" for line in lines)


def speedscope(stacks: Sequence[Stack], name: str) -> dict[str, Any]:
    """A speedscope file: one sampled profile, a sample per stack weighed by its own time."""
    frames = sorted({frame for stack in stacks for frame in stack.frames})
    index = {frame: i for i, frame in enumerate(frames)}
    weights = nanoseconds([stack.own for stack in stacks])
    kept = [(s, w) for s, w in zip(stacks, weights, strict=True) if w > 0]
    return {
        "$schema": SPEEDSCOPE_SCHEMA,
        "name": name,
        "exporter": "hspcprof",
        "activeProfileIndex": 0,
        "shared": {"frames": [frame_json(frame) for frame in frames]},
        "profiles": [
            {
                "type": "sampled",
                "name": name,
                "unit": "nanoseconds",
                "startValue": 0,
                "endValue": sum(w for _, w in kept),
                "samples": [[index[frame] for frame in s.frames] for s, _ in kept],
                "weights": [w for _, w in kept],
            }
        ],
    }


def frame_json(frame: Frame) -> dict[str, Any]:
    if not frame.file:
        return {"name": frame.name}
    return {"name": frame.name, "file": frame.file, "line": frame.line}


def speedscope_text(stacks: Sequence[Stack], name: str) -> str:
    return json.dumps(speedscope(stacks, name), separators=(",", ":")) + "\n"
