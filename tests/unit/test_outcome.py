"""reports.outcome: what a finished run did not do that was asked of it."""

from __future__ import annotations

import dataclasses

from hspc_gen.model.result import TuneResult
from hspc_gen.reports import outcome
from search_results import ESTIMATED, RUN, WINNER, searched


def test_a_latency_bound_nothing_measured_within_the_budget_is_not_verified() -> None:
    """A 3 s budget measured nothing: the bound asked for was never checked, which must not end
    as if it had been (exit 1), while `--effort estimate` (no search) asked for no check."""
    asked = dataclasses.replace(RUN, max_latency_us=2000.0)
    unmeasured = TuneResult(asked, WINNER, searched(confirmed=None), ESTIMATED)
    said = outcome.latency_unmet(unmeasured)
    assert said is not None
    assert said.startswith("constraints.max_latency_us (2000 us) was not verified: nothing was")
    assert outcome.latency_unmet(TuneResult(asked, WINNER, None, ESTIMATED)) is None
    unasked = TuneResult(RUN, WINNER, searched(confirmed=None), ESTIMATED)
    assert outcome.latency_unmet(unasked) is None
