"""What a person must know before trusting a run's numbers, as one typed list read from the
result: the budget that ran out, a winner not confirmed, a busy machine, an efficiency that could
not be given, a failed thread search, candidates that failed, figures replayed rather than
measured. The Markdown summary lists them and hspc-result.json carries them for the HTML page, so
the two say the same things in the same words (neither can forget one the other states)."""

from __future__ import annotations

import math

from hspc_gen.model.caveat import Caveat, CaveatKind
from hspc_gen.model.result import Confirmed, SearchResult, Step, TuneResult
from hspc_gen.model.threads import ThreadFailure
from hspc_gen.reports.outcome import latency_unmet
from hspc_gen.reports.wording import AT_THE_BOUND, unresolved

WIDE_FLOOR = 0.05
"""An A/A floor above this is wide enough to ask whether the host or the channel made it."""


def caveats(result: TuneResult) -> tuple[Caveat, ...]:
    """Every caveat of `result`, in the order a person should read them."""
    search = result.search
    found = _searched(result, search) if search is not None else [_estimate()]
    if isinstance(result.threads, ThreadFailure):
        found.append(
            Caveat(
                CaveatKind.threads,
                f"Threads: not measured ({result.threads.status}); the header's advice is"
                " estimated.",
            )
        )
    found += [Caveat(CaveatKind.note, note) for note in result.run.notes]
    return tuple(found)


def _estimate() -> Caveat:
    return Caveat(
        CaveatKind.estimate,
        "Not measured: parameters come from the host heuristics (--effort estimate).",
    )


def _searched(result: TuneResult, search: SearchResult) -> list[Caveat]:
    found = []
    # A confirmation that measured nothing (every arm failed or was cut) confirms nothing either:
    # the summary then says "channel: not measured", and the header's banner "NOT confirmed".
    unconfirmed = search.confirmed is None or search.confirmed.rate is None
    if unconfirmed and not search.trail:
        found.append(
            Caveat(
                CaveatKind.estimate,
                "Not measured: the budget ran out before a batch could be measured; parameters"
                " come from the host heuristics.",
            )
        )
    elif unconfirmed:
        why = (
            "the budget ran out before the winner was measured again in a fresh process"
            if search.confirmed is None or search.budget_exhausted
            else "the fresh-process measurement of the winner measured nothing"
        )
        found.append(
            Caveat(
                CaveatKind.not_confirmed,
                f"Not confirmed: {why}; the header holds the search's best so far, unconfirmed.",
            )
        )
    if search.budget_exhausted and search.trail:
        found.append(Caveat(CaveatKind.budget, _budget_note(search)))
    if search.confirmed is not None:
        found += _confirmed(result, search.confirmed)
    found += _host(result, search)
    found += _failures(search)
    found += _replayed(result, search)
    return found


def _budget_note(search: SearchResult) -> str:
    """What the budget left undone: a whole step, candidates of named steps (the time plan gave
    each step its share, so this happens with time left in the run), or rounds of named races."""
    if search.step_left_out:
        return "The budget ran out before every step ran: the result is the best finished so far."
    short = [s for s in search.trail if s.screened < s.proposed]
    cut = [s for s in search.trail if s.cut]
    said = []
    if short:
        steps = ", ".join(f"{s.step} ({s.screened} of {s.proposed})" for s in short)
        said.append(
            f"Each step had its share of the budget, which measured only the candidates nearest"
            f" the best of {steps}: the result is the best of those measured."
        )
    if cut:
        steps = ", ".join(f"{s.step} ({s.rounds} of {s.planned_rounds} rounds)" for s in cut)
        said.append(
            f"The budget cut short the race of {steps}: every step ran, and each decided on the"
            " rounds it had, as precisely as its margin says."
        )
    return " ".join(said) or "The budget ran out: the result is the best finished so far."


def _confirmed(result: TuneResult, confirmed: Confirmed) -> list[Caveat]:
    found = []
    if confirmed.unresolved:
        found.append(
            Caveat(
                CaveatKind.efficiency,
                f"The efficiency is {unresolved(confirmed.unresolved)}; the"
                " channel's and the loops' rates are given as measured.",
            )
        )
    elif confirmed.at_bound:
        found.append(
            Caveat(
                CaveatKind.efficiency,
                f"The efficiency is {AT_THE_BOUND} 1.0: the channel and the slower of producer and"
                f" consumer alone are within the noise of each other (measured"
                f" {confirmed.at_bound}).",
            )
        )
    if (unmet := latency_unmet(result)) is not None:
        found.append(Caveat(CaveatKind.latency, f"Latency: {unmet}."))
    if confirmed.remeasured:
        found.append(
            Caveat(
                CaveatKind.remeasured,
                "The figures are from a second measurement of the winner: the confirmation's"
                f" were past the bound ({confirmed.remeasured}).",
            )
        )
    return found


def host_was_noisy(step: Step) -> bool:
    """A wide A/A floor that the channel-free baselines' own noise explains (at least half)."""
    wide = math.isfinite(step.noise_floor) and step.noise_floor > WIDE_FLOOR
    return wide and step.host_noise >= step.noise_floor / 2


def _host(result: TuneResult, search: SearchResult) -> list[Caveat]:
    found = []
    if noisy := [s for s in search.trail if host_was_noisy(s)]:
        steps = ", ".join(
            f"{s.step} (A/A floor {s.noise_floor:.1%}, host noise {s.host_noise:.1%})"
            for s in noisy
        )
        found.append(
            Caveat(
                CaveatKind.host_noise,
                f"The host itself was noisy during {steps}: two single-threaded programs without"
                " a channel varied about as much as the channel did.",
            )
        )
    if result.run.busy:
        found.append(
            Caveat(
                CaveatKind.busy,
                f"The machine was busy (other processes used {result.run.other_cpus:.2f} CPUs):"
                " comparisons were less precise than on a quiet machine; what it measured is"
                " measured again by a run on a quiet machine.",
            )
        )
    return found


def _failures(search: SearchResult) -> list[Caveat]:
    """One caveat per kind of failure (the same cause in many candidates is one)."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for failure in search.failures:
        grouped.setdefault((str(failure.status), failure.cause), []).append(failure.id)
    found = []
    for (status, cause), arms in grouped.items():
        who = f"Candidate {arms[0]}" if len(arms) == 1 else f"{len(arms)} candidates"
        because = f": {cause}" if cause else ""
        found.append(Caveat(CaveatKind.failure, f"{who}: {status}{because} (recorded, left out)."))
    return found


def _replayed(result: TuneResult, search: SearchResult) -> list[Caveat]:
    found = []
    run = result.run
    if search.cached_plans and not search.measured_plans:
        found.append(
            Caveat(
                CaveatKind.replayed,
                f"{search.cached_plans} plan(s) replayed from the record store, none measured:"
                f" the {run.elapsed_seconds:.3g} s this run took is the replay's, not the"
                " recorded search's.",
            )
        )
    elif search.cached_plans or search.remeasured_plans:
        again = search.remeasured_plans
        why = (
            f" ({again} of them recorded beside other load, and measured again now that the"
            " machine is quiet)"
            if again
            else ""
        )
        found.append(
            Caveat(
                CaveatKind.replayed,
                f"{search.cached_plans} plan(s) replayed from the record store, "
                f"{search.measured_plans} measured{why}.",
            )
        )
    if run.elapsed_seconds > run.budget_seconds:
        over = run.elapsed_seconds - run.budget_seconds
        found.append(
            Caveat(
                CaveatKind.over_budget,
                f"It took {run.elapsed_seconds:.1f} s of a {run.budget_seconds:g} s budget"
                f" ({over:.1f} s over: the last step's estimate was short).",
            )
        )
    return found
