"""hspc-result.json: what was chosen, how it was measured, and on which host, from the typed
result (`model.result.TuneResult`). Numbers are rounded to 6 significant digits here, for
people; nothing is computed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hspc_gen.model import Figure, HostTimings, Status, Summary
from hspc_gen.model.result import (
    CandidateResult,
    Confirmed,
    RunInfo,
    SearchResult,
    Step,
    TuneResult,
)
from hspc_gen.model.threads import ThreadAdvice, ThreadFailure
from hspc_gen.reports.caveats import caveats
from hspc_gen.reports.threads import advice_json, pool_json
from hspc_gen.reports.wording import number

RESULT_SCHEMA_VERSION = 3
"""2: decisions name exclusions by status only; a failed thread search gives its status.
3: the parameters hold spin_ns (searched), the winner no longer a spin_ns of its own; the host's
wait costs (host_timings). Additions older readers take as absent: each candidate's paired cost
over its step's winner (cost_vs_winner), each step's limit lines from its own rounds (baselines),
p0_parallel among them; why an efficiency that cannot be true is not given
(efficiency_unresolved), what was measured of one reported at the bound 1.0 (efficiency_at_bound)
and why the figures are a second measurement's (remeasured); where the
winner's threads run, in words (winner.placement: unpinned, a measured class, or pinned);
what a person must know before trusting the figures (caveats: kind and text, the summary's notes
word for word, for the HTML page to state); with threads.consumers: adaptive, the pool
controller's parameters and why each (pool), absent otherwise."""


def document(result: TuneResult) -> dict[str, Any]:
    """The whole hspc-result.json."""
    out = _common(result.run)
    out["caveats"] = [{"kind": str(c.kind), "text": c.text} for c in caveats(result)]
    if result.pool is not None:  # absent without the switch: those results stay as they were
        out["pool"] = pool_json(result.pool)
    search = result.search
    if search is None:
        out.update(
            winner={"params": result.winner.as_dict(), "events_per_second": None},
            baselines=None,
            efficiency=None,
            candidates=[],
            seed=None,
            recommendation=None,
        )
        return out
    out.update(_searched(search, result.winner.as_dict()))
    out.update(
        other_cpus_before=result.run.other_cpus,
        busy=result.run.busy,
        notes=list(result.run.notes),
        recommendation=_recommendation(result.threads),
    )
    return out


def _common(run: RunInfo) -> dict[str, Any]:
    return {
        "schema_version": RESULT_SCHEMA_VERSION,
        "tool": {"name": "hspc-gen", "version": run.tool_version},
        "target": {
            "name": run.target,
            "event_bytes": run.event_bytes,
            "objective": str(run.objective),
        },
        "effort": str(run.effort),
        "budget_seconds": run.budget_seconds,
        "elapsed_seconds": round(run.elapsed_seconds, 3),
        "host": dict(run.host),
        "fingerprint": run.fingerprint,
        "host_timings": _timings(run.timings),
    }


def _timings(timings: HostTimings | None) -> dict[str, Any] | None:
    if timings is None:
        return None
    budgets = timings.budgets()
    return {
        "wake_ns": figure(timings.wake_ns),
        "switch_ns": figure(timings.switch_ns),
        "busy": timings.busy,
        "spin_budgets_ns": {"hybrid": budgets.sleep_ns, "spinning": budgets.yield_ns},
    }


def _searched(search: SearchResult, params: dict[str, int | str]) -> dict[str, Any]:
    confirmed = search.confirmed
    return {
        "winner": {
            "id": confirmed.winner_id if confirmed else None,
            "params": params,
            "events_per_second": rate(confirmed.rate) if confirmed else None,
            "latency_ns": figure(confirmed.latency_ns) if confirmed else None,
            "placement": search.placement or None,
        },
        "baselines": baselines(confirmed.baselines) if confirmed else {},
        "efficiency": figure(confirmed.efficiency) if confirmed else None,
        "efficiency_unresolved": confirmed.unresolved or None if confirmed else None,
        "efficiency_at_bound": confirmed.at_bound or None if confirmed else None,
        "remeasured": confirmed.remeasured or None if confirmed else None,
        "latency_bound": _bound(confirmed) if confirmed else None,
        "confirmation": step(confirmed.decision) if confirmed else None,
        "decisions": [step(s) for s in search.trail],
        "candidates": [_candidate(c) for c in search.candidates],
        "failures": [
            {"id": f.id, "status": str(f.status), "cause": f.cause} for f in search.failures
        ],
        "budget_exhausted": search.budget_exhausted,
        "measured_plans": search.measured_plans,
        "cached_plans": search.cached_plans,
        "remeasured_plans": search.remeasured_plans,
        "oversubscribed": search.oversubscribed,
        "seed": search.seed,
    }


def _bound(confirmed: Confirmed) -> dict[str, Any] | None:
    if confirmed.latency_bound_ns is None:
        return None
    p99 = confirmed.latency_p99_ns
    return {
        "max_latency_ns": number(confirmed.latency_bound_ns),
        "p99_wait_ns": figure(p99),
        "kept": p99 is not None and p99.median <= confirmed.latency_bound_ns,
    }


def rate(summary: Summary | None) -> dict[str, Any] | None:
    if summary is None:
        return None
    return {
        "median": number(summary.median),
        "ci95": [number(summary.ci95_low), number(summary.ci95_high)],
        "iqr": number(summary.iqr),
        "n": summary.n,
        "preempted_fraction": number(summary.preempted_fraction),
    }


def figure(value: Figure | None) -> dict[str, Any] | None:
    if value is None:
        return None
    low, high = number(value.ci95_low), number(value.ci95_high)
    return {"median": number(value.median), "ci95": [low, high], "n": value.n}


def step(decision: Step) -> dict[str, Any]:
    return {
        "stage": decision.stage,
        "step": decision.step,
        "winner": decision.winner,
        "ties": list(decision.ties),
        "noise_floor": number(decision.noise_floor),
        "margin": number(decision.margin),
        "precision": number(decision.precision),
        "rounds": decision.rounds,
        "excluded": _statuses(decision.excluded.items()),
        "proposed": decision.proposed,
        "screened": decision.screened,
        "left_out": decision.proposed - decision.screened,
        "seconds": round(decision.seconds, 1),
        "disturbed_samples": number(decision.disturbed),
        "planned_rounds": decision.planned_rounds,
        "cut": decision.cut,
        "host_noise": number(decision.host_noise),
        "baselines": baselines(decision.baselines),
    }


def baselines(summaries: Mapping[str, Summary]) -> dict[str, Any]:
    return {name: {"events_per_second": rate(summary)} for name, summary in summaries.items()}


def _statuses(pairs: Iterable[tuple[str, Status]]) -> dict[str, str]:
    return {arm: str(status) for arm, status in pairs}


def _candidate(c: CandidateResult) -> dict[str, Any]:
    return {
        "id": c.id,
        "stage": c.stage,
        "step": c.step,
        "params": c.params.as_dict(),
        "status": str(c.status),
        "dropped_after_round": c.dropped_after_round,
        "won_step": c.won_step,
        "events_per_second": rate(c.rate),
        "cost_vs_winner": figure(c.cost_vs_winner),
    }


def _recommendation(advice: ThreadAdvice | ThreadFailure) -> dict[str, Any] | None:
    """The measured thread advice, the reason it could not be measured, or None (estimated)."""
    if isinstance(advice, ThreadFailure):
        return {"status": str(advice.status), "error": advice.error}
    return advice_json(advice) if advice.measured else None
