"""hspc_gen.search.threads.knee: the rule that picks the answer and the one the "equally good"
list states: a count is good only when its paired interval against the best lies above the
line, over enough rounds; the answer is the good count with the fewest threads. A property test
runs the whole thread search over curves recorded on real hosts and seeded random ones, and
holds every recommendation it prints (summary, hspc-threads, the report's figure, the JSON) to
that rule, the two runs of issue 24 item 2 among them."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from typing import ClassVar

import pytest

from hspc_gen.host.machine import read_host
from hspc_gen.model import PinThreads
from hspc_gen.model.result import TuneResult
from hspc_gen.model.result_file import load_result
from hspc_gen.model.threads import (
    SHOWN_ROUNDS,
    CurvePoint,
    SweepPoint,
    ThreadAdvice,
    ThreadsReport,
)
from hspc_gen.reports import html as html_report
from hspc_gen.reports import result as result_report
from hspc_gen.reports import summary as summary_report
from hspc_gen.reports import threads as threads_report
from hspc_gen.reports.figure_threads import threads as threads_figure
from hspc_gen.search.decisions.stats import MIN_ROUNDS
from hspc_gen.search.records.samples import Sample
from hspc_gen.search.threads import advice
from hspc_gen.search.threads.counts import BUDGET
from hspc_gen.search.threads.knee import good, leader, smallest_good, strongest, top
from hspc_gen.search.threads.measure import Config, Lab, ThreadSample
from hspc_gen.search.threads.recommend import recommend
from recorded_curves import DATA, Curve, recorded_curves
from search_results import RUN, WINNER, searched
from thread_searches import SHARES, searched_advice, session_advice
from threadsim.simulator import WORKLOADS, SimulatedHost

BEST, NEAR, SLOW, WIDE = Config(4, 4), Config(3, 3), Config(1, 1), Config(2, 2)


class Scripted:
    """Samples at fixed rates relative to BEST, with a round-to-round factor every sample of
    a round shares (what pairing cancels) and, for WIDE, a wobble of its own."""

    RATES: ClassVar[dict[Config, float]] = {BEST: 1.0, NEAR: 0.985, SLOW: 0.62, WIDE: 0.96}

    def __call__(
        self, configs: Sequence[Config], rounds: int
    ) -> Mapping[Config, Sequence[ThreadSample]]:
        out: dict[Config, list[ThreadSample]] = {}
        for c in configs:
            for r in range(rounds):
                shared = 1.0 + 0.2 * ((r * 7) % 5 - 2) / 2  # +-20%, the same for all
                wobble = 1.0 + (0.06 * (-1) ** r if c == WIDE else 0.0)
                rate = 1e8 * self.RATES[c.original()] * shared * wobble
                wall = 1e6 / rate * 1e9
                sample = Sample(c.label, r, 1_000_000, wall, wall, wall, 0, 0, 0, True)
                out.setdefault(c, []).append(ThreadSample(sample, 0, 0.0))
        return out


def lab(rounds: int) -> Lab:
    made = Lab(Scripted())
    made.run([BEST, NEAR, SLOW, WIDE], rounds)
    return made


def test_good_means_the_interval_lies_above_the_line_after_enough_rounds() -> None:
    enough = lab(12)
    assert good(enough, NEAR, BEST, 0.03)  # 0.985, every round: shown within 3%
    assert not good(enough, SLOW, BEST, 0.03)
    assert not good(enough, WIDE, BEST, 0.03)  # 0.96 +- 6%: its interval reaches below 0.97
    assert good(enough, BEST, BEST, 0.03)
    assert not good(lab(6), NEAR, BEST, 0.03)  # six rounds show nothing yet


def test_the_answer_is_the_good_count_with_the_fewest_threads() -> None:
    enough = lab(12)
    assert smallest_good(enough, BEST, 0.03) == NEAR
    assert smallest_good(enough, BEST, 0.03, allowed=lambda c: c != NEAR) == BEST
    assert leader(enough, [SLOW, WIDE, NEAR]) == NEAR


def test_a_count_that_beat_the_best_beyond_the_noise_becomes_the_best() -> None:
    enough = lab(12)
    assert top(enough, BEST) == BEST
    assert top(enough, NEAR) == BEST  # 1 / 0.985 every round: clearly better


def test_the_best_moves_to_a_count_measured_higher_beside_it_beyond_the_noise_or_not() -> None:
    """Issue 24 (8+8 kept as the best at 44.9 M while 4+4 paired 1.0185 over it in 6 rounds):
    `top` moves only past the noise over SHOWN_ROUNDS rounds; the best the answer is held to
    is the one no count run beside it measured higher."""
    few = lab(6)
    assert top(few, NEAR) == NEAR  # 6 rounds: not shown better beyond the noise
    assert strongest(few, NEAR) == BEST and strongest(few, SLOW) == BEST
    assert strongest(few, NEAR, allowed=lambda c: c != BEST) == NEAR


Counts = frozenset[tuple[int, int]]
PAIRS = re.compile(r"(\d+)\+(\d+)")


def _said(text: str) -> Counts:
    return frozenset((int(p), int(c)) for p, c in PAIRS.findall(text))


def _shown(found: ThreadAdvice) -> Counts:
    """The counts the rule admits, read from each curve point's paired figures alone: its
    interval against the best at or above 1 - tolerance over SHOWN_ROUNDS rounds, or the best."""
    assert found.evidence is not None
    line = 1.0 - found.evidence.tolerance
    return frozenset(
        (p.producers, p.consumers)
        for p in found.evidence.curve
        if (v := p.vs_best) is not None
        and v.low >= line
        and (v.rounds >= SHOWN_ROUNDS or v.gain == v.low == v.high == 1.0)
    )


def printed_lists(found: ThreadAdvice, points: tuple[SweepPoint, ...] = ()) -> dict[str, Counts]:
    """The equally-good counts as each output says them: hspc-result.json, the report's thread
    figure (from that document), the summary and `hspc-gen threads` (with its sweep, if any):
    every one of them says the list, the best alone included (the README: all of them list it)."""
    result = TuneResult(RUN, WINNER, searched(), found)
    document = result_report.document(result)
    evidence = document["recommendation"]["evidence"]
    loaded = load_result(json.loads(json.dumps(document))).result  # as the report reads it
    figure = threads_figure(loaded)
    summary = summary_report.render(result)
    flat = [line for line in summary.splitlines() if line.startswith("Threads equally good")]
    listed = threads_report.render(ThreadsReport("t", "fp", WINNER, found, points))
    said = [line for line in listed.splitlines() if line.startswith("- equally good")]
    assert len(flat) == 1 and len(said) == 1, (summary, listed)
    page = _caption(loaded)
    return {
        "report": _said(page.partition("Equally good, producers+consumers: ")[2].partition(".")[0]),
        "json": frozenset((g["producers"], g["consumers"]) for g in evidence["equally_good"]),
        "figure": _said(figure.note.partition("as good as the best: ")[2]),
        "summary": _said(flat[0].partition("producers+consumers: ")[2]),
        "threads": _said(said[0].partition("producers+consumers: ")[2]),
    }


def _caption(result: TuneResult) -> str:
    """The words the report's page puts beside its thread figure."""
    return next(
        p.explains
        for p in html_report.panels(result, None)
        if p.explains.startswith(html_report.THREADS)
    )


def assert_the_best_is_the_best_measured(found: ThreadAdvice) -> None:
    """The count the others are held against is the best measured, not the coarse grid's leader
    that a refined count or more rounds overtook (issue 24: 8+8 stayed the best at 44.9 M with
    4+4 at 47.1 M paired 1.0185 over it): a count run beside it (MIN_ROUNDS rounds at least)
    with the higher paired estimate has the lower median (paired estimates over different rounds
    can go round in a circle, and the circle's best is the one with the highest median)."""
    evidence = found.evidence
    assert evidence is not None
    (best,) = [p for p in evidence.curve if (v := p.vs_best) and v.low == v.high == 1.0]
    fits = max(evidence.capacity.cpus, min(p.producers + p.consumers for p in evidence.curve))

    def weighed(p: CurvePoint, low: float) -> bool:
        """Past the CPUs with no reason to go there, only a count shown better beyond the
        noise is weighed (and then there is a reason)."""
        return evidence.oversubscription is not None or p.producers + p.consumers <= fits or low > 1

    beaten = [
        (p.producers, p.consumers, v.gain, p.events_per_s)
        for p in evidence.curve
        if (v := p.vs_best) is not None
        and v.rounds >= MIN_ROUNDS
        and v.gain > 1.0
        and p.events_per_s > best.events_per_s
        and weighed(p, v.low)
    ]
    assert not beaten, (best.producers, best.consumers, best.events_per_s, beaten)


def assert_past_the_cpus_is_explained(found: ThreadAdvice, points: tuple[SweepPoint, ...]) -> None:
    """More threads than CPUs recommended: `threads` and the summary say why, in words (issue
    24: "more threads than CPUs: None")."""
    assert found.evidence is not None
    if found.producers + found.consumers <= found.evidence.capacity.cpus:
        return
    listed = threads_report.render(ThreadsReport("t", "fp", WINNER, found, points))
    result = TuneResult(RUN, WINNER, searched(), found)
    summary = summary_report.render(result)
    page = _caption(load_result(json.loads(json.dumps(result_report.document(result)))).result)
    for text in (listed, summary, page.replace(". ", ".\n")):
        (line,) = [x for x in text.splitlines() if "more threads than cpus" in x.lower()]
        assert (
            "None" not in line and len(line.partition("): ")[2] or line.partition("CPUs: ")[2]) > 20
        ), line
    assert_the_best_within_the_cpus_ran_beside(found)


def assert_the_best_within_the_cpus_ran_beside(found: ThreadAdvice) -> None:
    """A search the budget did not cut weighed the best count within the CPUs against a best
    past them on paired rounds, and the reason names it with the paired figure (the 16-CPU
    guest's second run recommended 38+38 over 8+8 on medians 8% apart that were never paired);
    only a plan without settling rounds says it did not run them together long enough; the
    words agree with the figure they give."""
    evidence = found.evidence
    assert evidence is not None
    fits = max(evidence.capacity.cpus, min(p.producers + p.consumers for p in evidence.curve))
    within = [p for p in evidence.curve if p.producers + p.consumers <= fits]
    if evidence.termination == BUDGET or not within:
        return
    reason = evidence.oversubscription
    assert reason is not None
    assert re.search(r"the best (within the \d+ CPUs|of \d+ threads or fewer)", reason), reason
    paired = any(p.vs_best is not None and p.vs_best.rounds >= MIN_ROUNDS for p in within)
    if said := re.search(r"interval (\d\.\d+) to (\d\.\d+)\): (.*)", reason.split("; ")[-1]):
        low, high, words = float(said[1]), float(said[2]), said[3]
        line = 1.0 - evidence.tolerance
        assert (high < 1.0) if "faster beyond the noise" in words else (low < line), reason
    assert paired or "that would show it as good" in reason, reason


def assert_the_rule_holds(found: ThreadAdvice, points: tuple[SweepPoint, ...] = ()) -> None:
    """What every printed recommendation satisfies: the best is the best measured, the answer
    is among the equally good, no count with fewer threads is, every listed count's paired
    interval lies at or above the line, every output lists the same counts, and more threads
    than CPUs come with the reason."""
    assert_the_best_is_the_best_measured(found)
    chosen = (found.producers, found.consumers)
    shown = _shown(found)
    assert chosen in shown, (chosen, sorted(shown))
    assert min(p + c for p, c in shown) == found.producers + found.consumers, sorted(shown)
    lists = printed_lists(found, points)
    assert all(listed == shown for listed in lists.values()), (sorted(shown), lists)
    assert_past_the_cpus_is_explained(found, points)


@pytest.mark.parametrize("curve", recorded_curves(), ids=lambda c: c.name)
def test_every_recommendation_on_a_recorded_curve_keeps_the_rule(curve: Curve) -> None:
    shape = curve.shape()
    for seed in range(12):
        for noise in (0.03, 0.08, 0.15):
            assert_the_rule_holds(searched_advice(shape, curve, seed, noise))


@pytest.mark.parametrize("path", list(SHARES))
@pytest.mark.parametrize("curve", recorded_curves(), ids=lambda c: c.name)
def test_every_recommendation_the_real_paths_print_keeps_the_rule(curve: Curve, path: str) -> None:
    """The same rule on the paths the issue's real runs took: a main job's thread step and
    `threads --sweep`, their plans held to the time left."""
    shape = curve.shape()
    for seed in range(6):
        for noise in (0.08, 0.15):
            assert_the_rule_holds(*session_advice(shape, curve, seed, noise, path=path))


@pytest.mark.parametrize("sysfs", ["epyc-2c-vm", "1s-4c-8t", "xeon-16c-vm", "2s-8c-2t"])
def test_every_recommendation_on_a_random_curve_keeps_the_rule(sysfs: str) -> None:
    shape = read_host(DATA / "sysfs" / sysfs / "sys").topology_shape()
    for seed in range(30):
        assert_the_rule_holds(searched_advice(shape, None, seed, 0.08, len(shape.places)))
    for seed in range(6):
        path = list(SHARES)[seed % 2]
        assert_the_rule_holds(
            *session_advice(shape, None, seed, 0.08, path=path, cpus=len(shape.places))
        )


def _issue_run(name: str) -> list[ThreadAdvice]:
    """The search on one of the issue's curves, at the noise of a quiet and of a busy VM."""
    (curve,) = [c for c in recorded_curves() if c.name == name]
    shape = curve.shape()
    return [
        searched_advice(shape, curve, seed, noise)
        for noise in (0.08, 0.15, 0.25)
        for seed in range(12)
    ]


def test_a_count_far_below_the_best_is_never_listed_as_equally_good() -> None:
    """Issue 24 item 2, the first run: 1+1 at 46.4 M events/s was listed as good as 3+3 at 75.3
    M (its interval [0.80, 0.99])."""
    for found in _issue_run("issue24-first-run"):
        assert all((1, 1) not in listed for listed in printed_lists(found).values())
        assert (found.producers, found.consumers) != (1, 1)
        assert_the_rule_holds(found)  # d227347 recommended 3+3 here with 2+2 listed


def test_no_count_with_more_threads_is_recommended_beside_a_listed_smaller_one() -> None:
    """Issue 24 item 2, the second run: 4+8 was recommended while 2+2, with the higher median,
    was listed as equally good."""
    for found in _issue_run("issue24-producer-source"):
        listed = printed_lists(found)["summary"]
        assert found.producers + found.consumers == min(p + c for p, c in listed)
        if (2, 2) in listed:
            assert (found.producers, found.consumers) == (2, 2)
        assert_the_rule_holds(found)


def test_the_check_refuses_both_answers_the_issue_saw() -> None:
    """Not a vacuous check: the issue's answers (a far count recommended, a larger count
    recommended beside a smaller listed one) fail it."""
    (curve,) = [c for c in recorded_curves() if c.name == "issue24-producer-source"]
    found = searched_advice(curve.shape(), curve, 0, 0.08)
    assert found.evidence is not None
    far = min(found.evidence.curve, key=lambda p: p.events_per_s)
    for wrong in ((far.producers, far.consumers), (4, 8)):
        if wrong != (found.producers, found.consumers):
            answer = dataclasses.replace(found, producers=wrong[0], consumers=wrong[1])
            with pytest.raises(AssertionError):
                assert_the_rule_holds(answer)


def test_a_best_with_a_wide_interval_is_not_kept_below_counts_measured_higher() -> None:
    """Issue 24 on b50c1fb, a 200-byte event on 2 CPUs: 8+8 led the coarse grid, its interval
    33 to 58 M, and stayed the best and the answer though 4+4 measured 47.1 M (paired 1.0185
    over it) and 2+2 46.6 M. Where the noise has 8+8 lead the coarse grid, the best moves to
    the count measured higher beside it, and 8+8 is recommended only where it measured best."""
    (curve,) = [c for c in recorded_curves() if c.name == "issue24-wide-best"]
    shape = curve.shape()
    for seed in range(12):
        for path in SHARES:
            found, points = session_advice(shape, curve, seed, 0.15, path=path)
            assert_the_best_is_the_best_measured(found)
            assert_the_rule_holds(found, points)


def test_the_sweep_path_recommends_past_the_cpus_what_measured_faster_and_says_why() -> None:
    """Issue 24 on b50c1fb, `threads --sweep --budget 30s` on 2 CPUs, 2 consumers per
    producer: 1+2 was recommended, its ratio to itself [1, 1], though 5+10 measured 3.45 times
    it; "more threads than CPUs: None"; the sweep put it at 46% of its best point."""
    (curve,) = [c for c in recorded_curves() if c.name == "issue24-sweep"]
    shape = curve.shape()
    for seed in range(6):
        found, points = session_advice(shape, curve, seed, 0.08, path="sweep")
        assert found.evidence is not None and points
        assert found.producers + found.consumers > 3, (seed, found.producers, found.consumers)
        assert found.evidence.oversubscription is not None
        assert_the_rule_holds(found, points)


@pytest.mark.parametrize("pin", list(PinThreads))
def test_counts_the_target_fixes_are_listed_as_equally_good_in_every_output(
    pin: PinThreads,
) -> None:
    """A new user's report: with `threads: {producers: 1, consumers: 1}` every output said
    "producers+consumers: " with nothing after it (under `pin_threads: never`, or with no pinned
    candidate to race, nothing runs unpinned and the curve is empty): the recommended count is
    always listed, and the words say why no other is."""
    shape = read_host(DATA / "sysfs" / "epyc-2c-vm" / "sys").topology_shape()
    sim = SimulatedHost(shape, WORKLOADS[0], noise=0.08, seed=1)
    rec = recommend(shape, sim.probe(), sim.measure, producers=1, consumers=1, pin=pin)
    found = advice.advice(rec)
    assert found.equally_good == ((1, 1),)
    lists = printed_lists(found)
    if found.evidence is not None and not found.evidence.curve:
        del lists["figure"]  # no point to draw: the figure says why instead
        result = load_result(
            json.loads(
                json.dumps(result_report.document(TuneResult(RUN, WINNER, searched(), found)))
            )
        ).result
        assert "the target fixes the counts (1+1)" in threads_figure(result).empty
    assert all(listed == {(1, 1)} for listed in lists.values()), lists
    summary = summary_report.render(TuneResult(RUN, WINNER, searched(), found))
    assert "the target fixes the counts: no other was searched" in summary
