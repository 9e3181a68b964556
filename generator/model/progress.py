"""Where a measuring run stands between two plans: what a live line on a terminal shows."""

from __future__ import annotations

from dataclasses import dataclass

from hspc_gen.model import Figure


@dataclass(frozen=True)
class Progress:
    stage: str
    step: str
    candidates: int  # the step's batch
    left: int  # still racing (the others were beaten, or failed)
    rounds: int  # rounds run so far
    planned_rounds: int
    best: str  # the best so far, in words
    best_rate: Figure | None  # its events/s so far: median and 95% interval
    seconds_left: float  # before the search's deadline
