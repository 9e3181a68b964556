"""hspc_gen.reports.summary: the Markdown a person reads, from the typed result."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from caveat_results import beside_the_sides, rate
from hspc_gen.host.machine import read_host
from hspc_gen.model import Effort, Figure, Status
from hspc_gen.model.result import CandidateResult, Failure, TuneResult
from hspc_gen.model.threads import ThreadFailure
from hspc_gen.model.topology import TopologyOutcome, TopologyStatus
from hspc_gen.reports.summary import render
from hspc_gen.topology.classes import classify
from hspc_gen.topology.text import read_matrix, topology_json
from search_results import ESTIMATED, RATE, RUN, WINNER, searched, step

SYSFS = Path(__file__).resolve().parents[1] / "data" / "sysfs"


def test_an_estimate_says_nothing_was_measured() -> None:
    run = dataclasses.replace(RUN, effort=Effort.estimate)
    text = render(TuneResult(run, WINNER, None, ESTIMATED))
    assert "| buffers | 4 |" in text and "| primitive | futex |" in text
    assert "Not measured" in text


def test_a_tuned_result_shows_figures_trail_and_notes() -> None:
    run = dataclasses.replace(RUN, busy=True, other_cpus=1.5)
    text = render(TuneResult(run, WINNER, searched(), ESTIMATED))
    assert "channel: 500 M events/s (95% CI 480 M to 520 M, n=20)" in text
    assert "producer_alone (the producer's loop, no channel): 500 M" in text
    assert "efficiency: 0.970 (95% CI 0.950 to 0.990)" in text
    assert "| one | padding | 4 of 5 | 12 | 5.0% | — | 25% | c1 |" in text
    assert "| two | primitive | 4 of 5 | 6 | — | — | 25% | none |" in text
    for note in (
        "Each step had its share of the budget, which measured only the candidates nearest the"
        " best of padding (4 of 5), primitive (4 of 5): the result is the best of those measured.",
        "busy (other processes used 1.50 CPUs)",
        "c9: compile_error",
        "3 plan(s) replayed",
    ):
        assert note in text


def test_a_race_the_budget_cut_short_is_named_with_its_rounds() -> None:
    padding = dataclasses.replace(step("one", "padding", 30, 0.05, "c1"), screened=5)
    primitive = dataclasses.replace(
        step("two", "primitive", 24, 0.03, "c1"), screened=5, cut=True, planned_rounds=30
    )
    text = render(TuneResult(RUN, WINNER, searched(trail=(padding, primitive)), ESTIMATED))
    assert "| two | primitive | 5 of 5 | 24 of 30 | 3.0% |" in text
    assert "The budget cut short the race of primitive (24 of 30 rounds): every step ran" in text
    assert "budget ran out" not in text
    # A step left out altogether is said as before.
    skipped = searched(trail=(padding, primitive), step_left_out=True)
    assert "The budget ran out before every step ran" in render(
        TuneResult(RUN, WINNER, skipped, ESTIMATED)
    )


def test_a_wide_floor_the_host_explains_is_said_to_be_the_hosts() -> None:
    noisy = dataclasses.replace(
        step("one", "padding", 30, 0.2, "c1"), noise_floor=0.2, host_noise=0.21
    )
    channel = dataclasses.replace(
        step("one", "buffers", 30, 0.12, "c1"), noise_floor=0.12, host_noise=0.02
    )
    text = render(TuneResult(RUN, WINNER, searched(trail=(noisy, channel)), ESTIMATED))
    assert "| one | padding | 4 of 5 | 30 | 20.0% | 21.0% |" in text
    assert "The host itself was noisy during padding (A/A floor 20.0%, host noise 21.0%)" in text
    assert "buffers (A/A" not in text  # its floor is the channel's own


def test_nothing_confirmed_and_a_failed_thread_search_are_said_plainly() -> None:
    failed = ThreadFailure(Status.crashed, "segfault in the harness")
    text = render(TuneResult(RUN, WINNER, searched(confirmed=None), failed))
    assert "- channel: not measured" in text
    assert "Threads: not measured (crashed); the header's advice is estimated." in text


def test_unreadable_record_lines_are_reported() -> None:
    run = dataclasses.replace(RUN, notes=("record store line not read: x.jsonl:3: ...",))
    text = render(TuneResult(run, WINNER, searched(), ESTIMATED))
    assert "- record store line not read: x.jsonl:3: ..." in text


def test_a_run_that_measured_nothing_says_so_without_a_table() -> None:
    nothing = searched(confirmed=None, trail=(), failures=(), cached_plans=0)
    text = render(TuneResult(RUN, WINNER, nothing, ESTIMATED))
    assert "the budget ran out before a batch could be measured" in text
    assert "Measured in a fresh process" not in text and "| stage |" not in text


def test_one_line_per_kind_of_failure_naming_whose_code_was_running() -> None:
    crash = "fatal signal SIGSEGV in the user's consumer code (hspc_consume)"
    failures = tuple(Failure(f"c{i}", Status.crashed, crash) for i in range(22))
    text = render(TuneResult(RUN, WINNER, searched(failures=failures), ESTIMATED))
    assert f"- 22 candidates: crashed: {crash} (recorded, left out)." in text
    assert text.count("crashed") == 1


def test_a_run_past_its_budget_says_by_how_much() -> None:
    late = dataclasses.replace(RUN, elapsed_seconds=131.5)
    text = render(TuneResult(late, WINNER, searched(), ESTIMATED))
    assert "It took 131.5 s of a 120 s budget (11.5 s over" in text
    on_time = render(TuneResult(RUN, WINNER, searched(), ESTIMATED))
    assert "s over" not in on_time


def test_the_measured_classes_of_cpu_pairs_are_one_sentence() -> None:
    host = read_host(SYSFS / "vm-16c" / "sys")
    matrix = read_matrix(SYSFS / "vm-16c" / "matrix-hidden-smt.json")
    measured = TopologyOutcome(TopologyStatus.stored, classify(host, matrix))
    run = dataclasses.replace(RUN, host={"topology": topology_json(measured)})
    text = render(TuneResult(run, WINNER, None, ESTIMATED))
    assert (
        "CPU pairs (stored, a cache line's round trip): smt_sibling 17 ns (8 pairs, e.g. CPUs"
        " 0,8); shared_l3 95 ns (112 pairs, e.g. CPUs 7,13); 1 disagreement(s) with sysfs"
        " (CMP SMT as measured)."
    ) in text
    assert "CPU pairs" not in render(TuneResult(RUN, WINNER, None, ESTIMATED))


def test_the_placement_is_named_with_its_class_and_cpus() -> None:
    pinned = WINNER.replace(producer_cpu=2, consumer_cpu=5)
    raced = tuple(
        CandidateResult(f"c{i}", "two", "placement", p, Status.ok, None, p == pinned, RATE)
        for i, p in enumerate((pinned, WINNER))
    )
    found = searched(winner=pinned, placement="shared_l3", candidates=raced)
    text = render(TuneResult(RUN, pinned, found, ESTIMATED))
    assert "Placement: producer on CPU 2, consumer on CPU 5 (the measured class shared_l3)." in text
    # Measured there alone (a run cut before the placement step): not shown better than elsewhere.
    alone = searched(winner=pinned, placement="shared_l3", candidates=raced[:1])
    assert (
        "Placement: producer on CPU 2, consumer on CPU 5 (the measured class shared_l3; no other"
        " placement was measured)."
    ) in render(TuneResult(RUN, pinned, alone, ESTIMATED))
    loose = render(TuneResult(RUN, WINNER, searched(placement="unpinned"), ESTIMATED))
    assert "Placement: unpinned (the scheduler places the threads)." in loose


def _baseline_lines(text: str) -> dict[str, str]:
    return {
        side: next(line for line in text.splitlines() if line.startswith(f"- {side}"))
        for side in ("channel", "producer_alone", "consumer_alone")
    }


def test_only_the_side_within_the_noise_of_the_channel_is_tagged_so() -> None:
    """A new user's report: consumer_alone at 243 M events/s, 21 times the 11.5 M channel, was
    tagged "within the noise of each other" beside producer_alone. Only the slower side (the
    efficiency's bound) and a side whose interval overlaps the channel's carry the tag."""
    tag = "(within the noise of each other: see efficiency)"
    at_bound = Figure(1.004, 0.99, 1.02, 20)
    lines = _baseline_lines(render(beside_the_sides(rate(11.5), rate(11.3), rate(243), at_bound)))
    assert lines["channel"].endswith(tag) and lines["producer_alone"].endswith(tag)
    assert tag not in lines["consumer_alone"]
    both = _baseline_lines(render(beside_the_sides(rate(11.5), rate(11.3), rate(11.6), at_bound)))
    assert all(line.endswith(tag) for line in both.values())
    sure = Figure(1.2, 1.1, 1.3, 20)
    unresolved = _baseline_lines(render(beside_the_sides(rate(30), rate(243), rate(10), sure)))
    assert unresolved["consumer_alone"].endswith("(unresolved: see efficiency)")
    assert "unresolved" not in unresolved["producer_alone"]
