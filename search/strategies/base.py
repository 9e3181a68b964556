"""What every strategy shares: the Batch it proposes, the history it reads, and checked options.

A strategy is a pure function of its history: `propose(history)` looks only at the batches already
decided (and its fixed inputs), so a search replays exactly from its records.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from hspc_gen.errors import UserError
from hspc_gen.model import ChannelParams, Effort
from hspc_gen.search.decisions import stats
from hspc_gen.search.decisions.decide import Decision
from hspc_gen.search.records.samples import Candidate


@dataclass(frozen=True)
class Batch:
    """Candidates of one step that share one build (one benchmark binary).

    The incumbent (the best point so far) is one of the candidates: it is every paired ratio's
    reference and the A/A copy's original.
    """

    stage: str
    step: str
    candidates: tuple[Candidate, ...]
    incumbent: Candidate
    rounds: int

    def __post_init__(self) -> None:
        ids = [c.id for c in self.candidates]
        if self.incumbent.id not in ids:
            raise ValueError(f"batch {self.step}: the incumbent is not among the candidates")
        if len(set(ids)) != len(ids):
            raise ValueError(f"batch {self.step}: duplicate candidates")

    @property
    def compiled_points(self) -> int:
        """The distinct code its build compiles: candidates differing only in their CPUs share
        one compile-time point."""
        return len({c.params.replace(producer_cpu=-1, consumer_cpu=-1) for c in self.candidates})

    def params_of(self, arm: str) -> ChannelParams:
        for c in self.candidates:
            if c.id == arm:
                return c.params
        raise KeyError(arm)


def make_batch(
    stage: str, step: str, points: Sequence[ChannelParams], incumbent: ChannelParams, rounds: int
) -> Batch:
    """A batch of `points` (deduplicated, order kept) with the incumbent added if missing."""
    unique = list(dict.fromkeys([*points, incumbent]))
    cands = tuple(Candidate(params=p, stage=stage, step=step) for p in unique)
    return Batch(stage, step, cands, Candidate(incumbent, stage, step), rounds)


@dataclass(frozen=True)
class StepResult:
    """A finished batch and its decision: one entry of a strategy's history."""

    batch: Batch
    decision: Decision

    def winner(self) -> ChannelParams | None:
        w = self.decision.winner
        return None if w is None else self.batch.params_of(w)


@dataclass(frozen=True)
class Outline:
    """A step a strategy will propose, foreseen from its start point (for the time plan)."""

    step: str
    points: int
    rounds: int
    compiled: int = 0  # distinct compile-time points (0: one per point)


class Strategy(Protocol):
    name: str

    def propose(self, history: Sequence[StepResult]) -> Batch | None:
        """The next batch to measure, or None when the search is over."""
        ...

    def outline(self) -> tuple[Outline, ...]:
        """Every step it will propose, as seen from the start point, before measuring."""
        ...


def outline_of(stage: str, steps: Sequence[tuple[str, Sequence[ChannelParams]]],
               start: ChannelParams, rounds: int) -> tuple[Outline, ...]:  # fmt: skip
    """The steps (name, points around `start`) that have something to compare."""
    out = []
    for step, points in steps:
        batch = make_batch(stage, step, points, start, rounds)
        if len(batch.candidates) > 1:
            out.append(Outline(step, len(batch.candidates), rounds, batch.compiled_points))
    return tuple(out)


def best_so_far(start: ChannelParams, history: Sequence[StepResult]) -> ChannelParams:
    """The latest decided winner; a batch without one (every arm failed) changes nothing."""
    best = start
    for result in history:
        best = result.winner() or best
    return best


# Options: a frozen dataclass per strategy is its declared table.
OptionsT = TypeVar("OptionsT")


def option(default: Any, doc: str, low: int | None = None, high: int | None = None) -> Any:
    """A declared option: its default, its documentation and, for integers, its allowed range."""
    return dataclasses.field(default=default, metadata={"doc": doc, "range": (low, high)})


def rounds_option() -> Any:
    return option(30, "most rounds per batch (0: measure nothing)", 0, stats.MAX_ROUNDS)


def option_table(options_type: type[Any]) -> dict[str, str]:
    """Option name -> its documentation (the `doc` metadata of the dataclass field)."""
    return {f.name: str(f.metadata.get("doc", "")) for f in dataclasses.fields(options_type)}


def make_options(
    strategy: str,
    options_type: type[OptionsT],
    effort_presets: Mapping[Effort, Mapping[str, object]],
    effort: Effort,
    overrides: Mapping[str, object],
) -> OptionsT:
    """The effort's preset with the user's overrides; unknown names and wrong types are refused."""
    hints = typing.get_type_hints(options_type)
    known = option_table(options_type)
    values = {**effort_presets[effort], **overrides}
    for name, value in values.items():
        if name not in known:
            raise UserError(
                f"strategy {strategy} has no option {name!r}; its options: {', '.join(known)}"
            )
        if not _has_type(value, hints[name]):
            raise UserError(f"strategy {strategy} option {name}: {value!r} is not {hints[name]}")
        _check_range(strategy, options_type, name, value)
    return options_type(**values)


def _check_range(strategy: str, options_type: type[Any], name: str, value: object) -> None:
    (spec,) = [f for f in dataclasses.fields(options_type) if f.name == name]
    low, high = spec.metadata.get("range", (None, None))
    if not isinstance(value, int):
        return
    if (low is not None and value < low) or (high is not None and value > high):
        raise UserError(f"strategy {strategy} option {name}: {value} is outside {low}..{high}")


def _has_type(value: object, hint: object) -> bool:
    origin = typing.get_origin(hint)
    if origin is tuple:
        (item, _ellipsis) = typing.get_args(hint)
        return isinstance(value, tuple) and all(_has_type(v, item) for v in value)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    assert isinstance(hint, type)
    return isinstance(value, hint)
