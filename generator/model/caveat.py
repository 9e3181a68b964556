"""What a person must know before trusting a run's numbers, as the result carries them: a kind
and the words (reports/caveats.py finds them; hspc-result.json keeps them for the HTML page)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class CaveatKind(StrEnum):
    estimate = "estimate"  # nothing measured: the host heuristics' parameters
    not_confirmed = "not_confirmed"  # the winner was not measured again in a fresh process
    budget = "budget"  # the budget ran out or cut races short
    efficiency = "efficiency"  # unresolved, or at the bound 1.0 within the noise
    latency = "latency"  # constraints.max_latency_us not kept, or not verified
    remeasured = "remeasured"  # the figures are a second measurement's
    host_noise = "host_noise"  # the host's own noise made a step's floor wide
    busy = "busy"  # other processes used CPUs before measuring
    failure = "failure"  # candidates that failed (one caveat per kind of failure)
    threads = "threads"  # the thread search failed: the advice is the estimate
    replayed = "replayed"  # figures from the record store, not measured by this run
    over_budget = "over_budget"  # the run took longer than its budget
    note = "note"  # the run's own notes (unread records, oversubscription, calibration)


@dataclass(frozen=True)
class Caveat:
    kind: CaveatKind
    text: str
