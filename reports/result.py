"""hspc-result.json: what was chosen, how it was measured, and on which host."""

from __future__ import annotations

import math
from typing import Any

from hspc_gen import __version__
from hspc_gen.host import Host
from hspc_gen.model import ChannelParams, Effort, Objective, Status
from hspc_gen.search import stats
from hspc_gen.search.racing import Evaluation
from hspc_gen.search.records import BASELINE_ARMS
from hspc_gen.search.session import Tuned
from hspc_gen.target import Target

SCHEMA_VERSION = 1


def _common(target: Target, host: Host, effort: Effort, elapsed: float) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "hspc-gen", "version": __version__},
        "target": {
            "name": target.name,
            "event_bytes": target.event.size,
            "objective": str(target.objective),
        },
        "effort": str(effort),
        "budget_seconds": target.budget,
        "elapsed_seconds": round(elapsed, 3),
        "host": host.to_json(),
        "fingerprint": host.fingerprint,
    }


def estimate_result(
    target: Target, host: Host, params: ChannelParams, effort: Effort, elapsed: float
) -> dict[str, Any]:
    """The result of `--effort estimate`: heuristics only, so every measured figure is null."""
    document = _common(target, host, effort, elapsed)
    document.update(
        winner={"params": params.as_dict(), "events_per_second": None},
        baselines=None,
        efficiency=None,
        candidates=[],
        seed=None,
        recommendation=None,
    )
    return document


def _number(x: float) -> float | None:
    return None if math.isnan(x) or math.isinf(x) else float(f"{x:.6g}")


def _rate(summary: stats.Summary | None) -> dict[str, Any] | None:
    if summary is None or summary.n == 0:
        return None
    return {
        "median": _number(summary.median),
        "ci95": [_number(summary.ci95_low), _number(summary.ci95_high)],
        "iqr": _number(summary.iqr),
        "n": summary.n,
        "preempted_fraction": _number(summary.preempted_fraction),
    }


def _figure(figure: stats.Figure) -> dict[str, Any] | None:
    if figure.n == 0:
        return None
    low, high = _number(figure.ci95_low), _number(figure.ci95_high)
    return {"median": _number(figure.median), "ci95": [low, high], "n": figure.n}


def _status_of(arm: str, evaluation: Evaluation) -> str:
    """A failure the run reported, else why the decision left the arm out, else its race's."""
    failed = evaluation.race.arm_status.get(arm)
    if failed is not None and failed is not Status.ok:
        return str(failed)
    excluded = evaluation.step.decision.excluded.get(arm)
    if excluded is not None:
        return str(excluded)
    return str(Status.ok if arm in evaluation.step.decision.summaries else evaluation.race.status)


def _candidates(evaluations: tuple[Evaluation, ...]) -> list[dict[str, Any]]:
    rows = []
    for evaluation in evaluations:
        batch, decision = evaluation.step.batch, evaluation.step.decision
        for c in batch.candidates:
            status = _status_of(c.id, evaluation)
            rows.append(
                {
                    "id": c.id,
                    "stage": batch.stage,
                    "step": batch.step,
                    "params": c.params.as_dict(),
                    "status": status,
                    "dropped_after_round": evaluation.race.dropped.get(c.id),
                    "won_step": c.id == decision.winner,
                    "events_per_second": _rate(decision.summaries.get(c.id)),
                }
            )
    return rows


def _decisions(evaluations: tuple[Evaluation, ...]) -> list[dict[str, Any]]:
    return [
        {
            "stage": e.step.batch.stage,
            "step": e.step.batch.step,
            "winner": e.step.decision.winner,
            "ties": list(e.step.decision.ties),
            "noise_floor": _number(e.step.decision.noise_floor),
            "margin": _number(e.step.decision.delta),
            "precision": _number(e.step.decision.precision),
            "rounds": e.race.rounds,
            "excluded": {arm: str(s) for arm, s in e.step.decision.excluded.items()},
        }
        for e in evaluations
    ]


def tuned_result(target: Target, host: Host, tuned: Tuned, elapsed: float) -> dict[str, Any]:
    document = _common(target, host, tuned.settings.effort, elapsed)
    confirmation = tuned.confirmation
    summaries = confirmation.step.decision.summaries if confirmation else {}
    winner_id = next(
        (
            c.id
            for c in (confirmation.step.batch.candidates if confirmation else ())
            if c.params == tuned.winner
        ),
        None,
    )
    samples = stats.group_by_arm(confirmation.race.samples) if confirmation else {}
    latency = target.objective is Objective.latency
    ratio = stats.efficiency(samples, winner_id) if winner_id and not latency else None
    document.update(
        winner={
            "id": winner_id,
            "params": tuned.winner.as_dict(),
            "spin_ns": tuned.spin_ns,
            "events_per_second": _rate(summaries.get(winner_id)) if winner_id else None,
            "latency_ns": _figure(stats.latency(samples.get(winner_id or "", ())))
            if latency
            else None,
        },
        baselines={
            b: {"events_per_second": _rate(summaries.get(b))}
            for b in BASELINE_ARMS
            if b in summaries
        },
        efficiency=None if ratio is None else _figure(ratio),
        confirmation=_decisions((confirmation,))[0] if confirmation else None,
        decisions=_decisions(tuned.outcome.evaluations),
        candidates=_candidates(tuned.outcome.evaluations),
        failures=[{"id": i, "status": s} for i, s in tuned.outcome.failures],
        budget_exhausted=tuned.outcome.budget_exhausted,
        measured_plans=tuned.outcome.measured_plans,
        cached_plans=tuned.outcome.cached_plans,
        load_before=tuned.load_before,
        busy=tuned.busy,
        oversubscribed=tuned.settings.oversubscribed,
        seed=tuned.settings.seed,
        recommendation=tuned.recommendation,
    )
    return document


def measured_lines(document: dict[str, Any]) -> tuple[str, ...]:
    """The header banner's figures, from the result's confirmation figures only (never elapsed
    times), so a re-run replaying the same records writes the same bytes."""
    winner = document["winner"]
    confirmation = document.get("confirmation")
    if winner["events_per_second"] is None or confirmation is None:
        return ("nothing measured within the budget: parameters from host heuristics",)
    lines = [f"throughput: {_figure_text(winner['events_per_second'], '{:.4g}')} events/s"]
    if winner.get("latency_ns"):
        lines.append(
            f"latency (paced, push to pop): {_figure_text(winner['latency_ns'], '{:.0f}')} ns"
        )
    for base in ("producer_alone", "consumer_alone"):
        figure = (document["baselines"].get(base) or {}).get("events_per_second")
        if figure:
            lines.append(f"{base}: {figure['median']:.4g} events/s")
    if document.get("efficiency"):
        lines.append(
            f"efficiency: {_figure_text(document['efficiency'], '{:.3f}')}"
            " (1.0 = the slower side alone)"
        )
    lines.append(
        f"decision margin: {confirmation['margin']:.1%} over {confirmation['rounds']} paired rounds"
    )
    return tuple(lines)


def _figure_text(figure: dict[str, Any], form: str) -> str:
    low, high = figure["ci95"]
    n = figure.get("n")
    return (
        f"{form.format(figure['median'])} (95% CI {form.format(low)} to {form.format(high)}, n={n})"
    )
