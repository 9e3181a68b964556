"""The channel's search, as the orchestrator (`pipeline`) runs it: every stage's strategy batch
by batch (strategy -> render -> build -> run -> record -> decide), then the confirmation of the
best in a fresh process, and, when the confirmation's figures cannot be true, the winner measured
once more."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hspc_gen.model import ChannelParams
from hspc_gen.model.result import SearchResult
from hspc_gen.model.workload import Workload
from hspc_gen.search import schedule, tune
from hspc_gen.search.batch import Machinery, evaluate_every_round, search_step
from hspc_gen.search.decisions import findings
from hspc_gen.search.measure.toolchain import Prepared
from hspc_gen.search.racing import Evaluation, PlanCounts
from hspc_gen.search.strategies import registry
from hspc_gen.search.strategies.base import Batch, StepResult, make_batch
from hspc_gen.search.strategies.space import Space


@dataclass(frozen=True)
class Searched:
    winner: ChannelParams
    evaluations: tuple[Evaluation, ...]
    budget_exhausted: bool  # a batch was left out for want of time
    spent: tuple[tuple[int, float], ...] = ()  # per evaluation: candidates proposed, seconds
    builds: tuple[Prepared, ...] = ()  # the builds of the batches that decided: one of them
    # holds the confirmation's contenders, so the confirmation needs no build of its own


def search(
    space: Space,
    start: ChannelParams,
    settings: tune.Settings,
    machinery: Machinery,
    on_improve: Callable[[ChannelParams], None] = lambda _p: None,
) -> Searched:
    """Every stage's strategy from the best point so far, batch by batch, each step within its
    share of the time plan (`search.schedule`)."""
    stages = [(stage.strategy, len(stage.baselines)) for stage in settings.stages]
    plan = schedule.plan_steps(space, start, stages, settings.effort, settings.search_deadline)
    # Until the placement step asks where the threads run, every candidate runs on one pair of
    # CPUs: unpinned, each sample would measure wherever the scheduler put it that time.
    best, evaluations, exhausted, builds = space.measured_at(start), [], False, []
    done: list[tuple[int, str]] = []
    spent: list[tuple[int, float]] = []
    for index, stage in enumerate(settings.stages):
        strategy = registry.create(stage.strategy, space, best, settings.effort)  # strategy
        history: list[StepResult] = []
        while (batch := strategy.propose(history)) is not None:
            staged = _staged(settings, plan, index, batch, done)
            done.append((index, batch.step))
            began = time.monotonic()
            evaluated = search_step(batch, stage, staged, machinery)
            if evaluated is None:  # the budget left the step out: the stage ends here
                exhausted = True
                break
            evaluation = evaluated.evaluation
            if evaluation.step.decision.winner is not None:
                builds.append(evaluated.prepared)
            history.append(evaluation.step)
            evaluations.append(evaluation)
            spent.append((len(batch.candidates), time.monotonic() - began))
            winner = evaluation.step.winner()  # decide
            if winner is not None and winner != best:
                best = winner
                on_improve(best)
        done.extend(plan.stage_keys(index))  # what the stage did not propose is not ahead
    best = best if evaluations else start  # nothing measured: the start's own placement
    return Searched(best, tuple(evaluations), exhausted, tuple(spent), tuple(builds))


def _staged(
    settings: tune.Settings,
    plan: schedule.Schedule,
    stage: int,
    batch: Batch,
    done: Sequence[tuple[int, str]],
) -> tune.Settings:
    """The settings of one step: its deadline in the time plan, the search's beside it."""
    deadline = _deadline(plan, stage, batch, done)
    return dataclasses.replace(settings, step_deadline=deadline)


def _deadline(
    plan: schedule.Schedule, stage: int, batch: Batch, done: Sequence[tuple[int, str]]
) -> float:
    """The batch's step's deadline in the time plan (costed as it came, if unforeseen)."""
    baselines = next((s.baselines for s in plan.steps if s.stage == stage), 0)
    points, compiled = len(batch.candidates), batch.compiled_points
    step = schedule.StepOutline(stage, batch.step, points, batch.rounds, baselines, compiled)
    return plan.step_deadline(step, done)


def measure_confirmation(
    searched: Searched, settings: tune.Settings, machinery: Machinery
) -> Evaluation | None:
    """The winner and runners-up measured again in a fresh process with a new seed: the
    reported figures come from here, and it may overturn the pick (the winner's curse)."""
    if not searched.evaluations:
        return None
    history = [e.step for e in searched.evaluations]
    batch = tune.confirmation_batch(history, searched.winner, settings.effort)
    stage = _confirming(settings)
    machinery.show(f"confirming {len(batch.candidates)} candidates in a fresh process")
    deadline = tune.confirm_deadline(settings, batch, stage)
    fresh = dataclasses.replace(
        settings, seed=settings.seed + 1, search_deadline=deadline, check_latency=True
    )
    return evaluate_every_round(
        batch, stage, fresh, machinery, _build_holding(searched, batch, stage.workload)
    )


def _confirming(settings: tune.Settings) -> tune.StageSpec:
    """The last stage, with the lines the confirmation times beside the reported figures."""
    last = settings.stages[-1]
    lines = (*last.baselines, *(b for b in tune.CONFIRM_LINES if b not in last.baselines))
    return dataclasses.replace(last, baselines=lines)


def remeasure(
    confirmation: Evaluation,
    searched: Searched,
    winner: ChannelParams,
    settings: tune.Settings,
    machinery: Machinery,
) -> Evaluation | None:
    """The winner and its baselines measured once more in a fresh process when the
    confirmation put the channel past its bound (faster than a side alone); None when it did
    not. `findings.confirmed` reports from the two what can be, or the figure unresolved."""
    first = findings.confirmed(confirmation, winner, settings.objective)
    if first.sound:
        return None
    machinery.show(
        f"measuring the winner and its baselines again: {first.unresolved or first.at_bound}"
    )
    rounds = confirmation.step.batch.rounds
    batch = make_batch("confirm", "remeasure", [winner], winner, rounds)
    stage = _confirming(settings)
    fresh = dataclasses.replace(
        settings,
        seed=settings.seed + 2,
        search_deadline=tune.confirm_deadline(settings, batch, stage),
    )
    return evaluate_every_round(
        batch, stage, fresh, machinery, _build_holding(searched, batch, stage.workload)
    )


def _build_holding(searched: Searched, batch: Batch, workload: Workload) -> Prepared | None:
    """The latest deciding batch's build that holds every candidate of `batch` and runs this
    workload; None when there is none (then the batch is built)."""
    wanted = {c.id for c in batch.candidates}
    for prepared in reversed(searched.builds):
        held = {c.id for c in prepared.batch.candidates}
        if prepared.workload == workload and wanted <= held:
            return prepared
    return None


def final_winner(
    searched: Searched, confirmation: Evaluation | None, settings: tune.Settings
) -> ChannelParams:
    """The confirmation's winner (under a latency bound, else the least latency's); the
    search's when nothing was confirmed or the confirmation named none."""
    if confirmation is None:
        return searched.winner
    return (
        confirmation.step.winner()
        or (findings.least_latency(confirmation) if settings.max_latency_ns else None)
        or searched.winner
    )


def search_result(
    searched: Searched,
    confirmations: tuple[Evaluation | None, Evaluation | None],
    winner: ChannelParams,
    settings: tune.Settings,
) -> SearchResult:
    """The typed result; `confirmations` is the confirmation and the winner's re-measure (when
    the confirmation's figures could not be true)."""
    confirmation, remeasured = confirmations
    every = (*searched.evaluations, *(e for e in confirmations if e is not None))
    counts = sum((e.counts for e in every), PlanCounts())  # the confirmations' plans too
    confirmed = None
    if confirmation is not None:
        bound = settings.max_latency_ns
        confirmed = findings.confirmed(confirmation, winner, settings.objective, bound, remeasured)
    return SearchResult(
        winner=winner,
        confirmed=confirmed,
        trail=tuple(
            findings.step(e, proposed, seconds)
            for e, (proposed, seconds) in zip(searched.evaluations, searched.spent, strict=True)
        ),
        candidates=findings.candidates(searched.evaluations),
        failures=findings.failures(searched.evaluations),
        budget_exhausted=searched.budget_exhausted or counts.cut,
        step_left_out=searched.budget_exhausted,
        measured_plans=counts.measured,
        cached_plans=counts.replayed,
        remeasured_plans=counts.remeasured,
        seed=settings.seed,
        oversubscribed=settings.oversubscribed,
    )
