"""hspc_gen.search.api, the search's face, over the simulated toolchain (fake_runner): the
stages as the pipeline calls them, and what they return is the model's typed result."""

from __future__ import annotations

from pathlib import Path

import fake_runner as fr
from fake_runner import machinery, settings
from hspc_gen.search import api
from hspc_gen.search.channel import final_winner, measure_confirmation


def test_confirm_returns_the_typed_result_of_the_confirmed_search(tmp_path: Path) -> None:
    space, s = fr.stage_two_space(), settings()
    searched = api.search_channel(
        space, space.start(), s, machinery(tmp_path, fr.SimulatedToolchain())
    )
    replayed = fr.SimulatedToolchain()
    found = api.confirm(searched, s, machinery(tmp_path, replayed))
    # The face measured the confirmation; the same records answer it again, measuring nothing.
    again = measure_confirmation(searched, s, machinery(tmp_path, replayed))
    assert replayed.runs > 0 and again is not None
    assert found.winner == final_winner(searched, again, s) == searched.winner
    assert found.confirmed is not None and found.confirmed.rate is not None
    assert len(found.trail) == len(searched.evaluations)
    assert found.measured_plans > 0 and found.seed == s.seed


def test_nothing_searched_is_a_result_with_nothing_confirmed(tmp_path: Path) -> None:
    start = fr.stage_two_space().start()
    empty = api.Searched(start, (), budget_exhausted=True)
    found = api.confirm(empty, settings(), machinery(tmp_path, fr.SimulatedToolchain()))
    assert found.winner == start and found.confirmed is None and found.budget_exhausted


def test_compare_measures_the_distinct_winners_side_by_side(tmp_path: Path) -> None:
    one = fr.stage_two_space().start()
    two = one.replace(padding_bytes=128)
    named = api.distinct_winners(["a", "b", "c"], [one, two, one])
    assert [row.labels for row in named] == [("a", "c"), ("b",)]
    compared = api.compare(named, 6, settings(), machinery(tmp_path, fr.SimulatedToolchain()))
    assert compared.rounds == 6 and [row.params for row in compared.results] == [one, two]
    assert all(row.rate is not None for row in compared.results)
    assert compared.results[1].speed_vs_first is not None
