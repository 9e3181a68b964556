"""hspc-result.json: what was chosen, how it was measured, and on which host."""

from __future__ import annotations

import math
from typing import Any

from hspc_gen import __version__
from hspc_gen.host import Host
from hspc_gen.model import ChannelParams, Effort
from hspc_gen.search import stats
from hspc_gen.search.racing import Evaluation
from hspc_gen.search.records import BASELINE_ARMS, Status
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


def _candidates(evaluations: tuple[Evaluation, ...]) -> list[dict[str, Any]]:
    rows = []
    for evaluation in evaluations:
        batch, decision = evaluation.step.batch, evaluation.step.decision
        for c in batch.candidates:
            status = evaluation.race.arm_status.get(c.id, evaluation.race.status)
            rows.append(
                {
                    "id": c.id,
                    "stage": batch.stage,
                    "step": batch.step,
                    "params": c.params.as_dict(),
                    "status": str(Status.ok if c.id in decision.summaries else status),
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
            "excluded": dict(e.step.decision.excluded),
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
    ratio = stats.efficiency(samples, winner_id) if winner_id else None
    document.update(
        winner={
            "id": winner_id,
            "params": tuned.winner.as_dict(),
            "spin_ns": tuned.spin_ns,
            "events_per_second": _rate(summaries.get(winner_id)) if winner_id else None,
        },
        baselines={
            b: {"events_per_second": _rate(summaries.get(b))}
            for b in BASELINE_ARMS
            if b in summaries
        },
        efficiency=None
        if ratio is None or ratio.n == 0
        else {
            "median": _number(ratio.median),
            "ci95": [_number(ratio.ci95_low), _number(ratio.ci95_high)],
            "n": ratio.n,
        },
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
    )
    return document


def measured_lines(tuned: Tuned) -> tuple[str, ...]:
    """The header banner's figures: from the confirmation only, so they are byte-stable on a
    re-run that replays the same records."""
    confirmation = tuned.confirmation
    if confirmation is None:
        return ("nothing measured within the budget: parameters from host heuristics",)
    decision = confirmation.step.decision
    winner = decision.winner
    lines = []
    summary = decision.summaries.get(winner) if winner else None
    if summary is not None and summary.n:
        lines.append(
            f"throughput: {summary.median:.4g} events/s "
            f"(95% CI {summary.ci95_low:.4g} to {summary.ci95_high:.4g}, {summary.n} rounds)"
        )
    for base in ("producer_alone", "consumer_alone"):
        s = decision.summaries.get(base)
        if s is not None and s.n:
            lines.append(f"{base}: {s.median:.4g} events/s")
    if winner:
        ratio = stats.efficiency(stats.group_by_arm(confirmation.race.samples), winner)
        if ratio.n:
            lines.append(
                f"efficiency: {ratio.median:.3f} (95% CI {ratio.ci95_low:.3f} to "
                f"{ratio.ci95_high:.3f}; 1.0 = the slower side alone)"
            )
    lines.append(
        f"decision margin: {decision.delta:.1%} (A/A noise floor {decision.noise_floor:.1%})"
    )
    return tuple(lines)
