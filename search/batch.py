"""One batch through the middle of the pipeline: render, then replay it from the records or
build, run and record it, then race and decide (the stages `pipeline` calls batch by batch).

Budget cuts are kept here too: a batch that would not fit before the deadline is trimmed to the
candidates nearest the incumbent that do, or left out; both are recorded (`records.Cut`), so the
same command replayed from the records makes the same choices.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass

from hspc_gen.model import ChannelParams
from hspc_gen.model.progress import Progress
from hspc_gen.search import tune
from hspc_gen.search.decisions import stats
from hspc_gen.search.measure.plan import Plan, Runner, RunResult
from hspc_gen.search.measure.toolchain import Prepared, Toolchain
from hspc_gen.search.racing import Evaluation
from hspc_gen.search.records.samples import Cut, Sample
from hspc_gen.search.records.store import RecordStore
from hspc_gen.search.strategies.base import Batch

Show = Callable[[str | Progress], None]
"""Who watches: a line to tell (str), or where a measuring run stands (Progress), given only
between plans, never while one runs."""


def quiet(_said: str | Progress) -> None:
    pass


@dataclass(frozen=True)
class Machinery:
    """The search's ties to the world: where records go, how batches build, who is watching."""

    store: RecordStore
    toolchain: Toolchain
    show: Show = quiet


@dataclass(frozen=True)
class Evaluated:
    """A batch decided, and the build it was (or would have been) measured with."""

    evaluation: Evaluation
    prepared: Prepared


def search_step(
    batch: Batch, stage: tune.StageSpec, settings: tune.Settings, machinery: Machinery
) -> Evaluated | None:
    """One batch of the search, trimmed to what fits; None when the budget leaves it out."""
    fitted = fit(batch, stage, settings, machinery)
    if fitted is None:
        return None
    batch, prepared, replayed = fitted
    if replayed is None:
        machinery.show(_announce(batch, settings.current_deadline()))
        replayed = _build_and_measure(batch, stage, settings, machinery, prepared, drop=True)
    return Evaluated(replayed, prepared)


Fitted = tuple[Batch, Prepared, Evaluation | None]


def fit(
    batch: Batch, stage: tune.StageSpec, settings: tune.Settings, machinery: Machinery
) -> Fitted | None:
    """The batch rendered (its record key) and, when the records hold it, replayed (the clock
    has no say then); else as the clock lets it run: whole, trimmed nearest the incumbent, or
    not at all (None). A trim or a cut is recorded, for the same command to replay."""
    store, toolchain = machinery.store, machinery.toolchain
    prepared = toolchain.prepare(batch, stage.workload)  # render
    whole = Cut(prepared.key, settings.run)
    if store.was_cut(whole):
        return None
    keep = store.trimmed(prepared.key, settings.run)
    if keep is not None:
        batch = tune.trimmed(batch, keep)
        prepared = toolchain.prepare(batch, stage.workload)
    replayed = tune.replay(batch, stage, settings, store, prepared)  # record: replay
    if replayed is not None:
        return batch, prepared, replayed
    for size in range(len(batch.candidates), 1, -1):
        smaller = batch if size == len(batch.candidates) else tune.trimmed(batch, size)
        ready = prepared if smaller is batch else toolchain.prepare(smaller, stage.workload)
        if tune.fits(tune.batch_seconds(smaller, stage, ready), settings.current_deadline()):
            if smaller is not batch:
                store.append(Cut(whole.key, settings.run, keep=size))
            return smaller, ready, None
    store.append(whole)
    return None


def evaluate_every_round(
    batch: Batch,
    stage: tune.StageSpec,
    settings: tune.Settings,
    machinery: Machinery,
    prepared: Prepared | None = None,
) -> Evaluation:
    """A batch measured to its last round, no arm dropped and never left out: the confirmation
    (with the latest search build that holds all its candidates, else its own) and `compare`."""
    prepared = prepared or machinery.toolchain.prepare(batch, stage.workload)  # render
    replayed = tune.replay(batch, stage, settings, machinery.store, prepared, drop=False)
    if replayed is not None:
        return replayed
    return _build_and_measure(batch, stage, settings, machinery, prepared, drop=False)


def _build_and_measure(
    batch: Batch,
    stage: tune.StageSpec,
    settings: tune.Settings,
    machinery: Machinery,
    prepared: Prepared,
    *,
    drop: bool,
) -> Evaluation:
    built = machinery.toolchain.build(prepared)  # build
    run_plan: Runner = functools.partial(machinery.toolchain.run, built, prepared)  # run
    if machinery.show is not quiet:
        run_plan = Watched(run_plan, batch, settings.search_deadline, machinery.show)
    return tune.measure_and_record(  # record, decide
        batch, stage, settings, machinery.store, prepared=prepared, run_plan=run_plan, drop=drop
    )


def _announce(batch: Batch, deadline: float) -> str:
    left = max(0.0, deadline - time.monotonic())
    return (
        f"stage {batch.stage} · {batch.step} · {len(batch.candidates)} candidates · "
        f"best {_words(batch.incumbent.params)} · {left:.0f} s left"
    )


def _words(params: ChannelParams) -> str:
    return f"{params.primitive} {params.buffers}x{params.buffer_bytes} B pad {params.padding_bytes}"


class Watched:
    """The run stage, telling its watcher after each plan where the race stands: the candidates
    still in it, the best so far by median events/s with its interval, the time left."""

    def __init__(self, run: Runner, batch: Batch, deadline: float, show: Show) -> None:
        self.run, self.batch, self.deadline, self.show = run, batch, deadline, show
        self.samples: list[Sample] = []

    def __call__(self, plan: Plan) -> RunResult:
        result = self.run(plan)
        if plan.first_round >= tune.CALIBRATION_ROUND:  # the sizing probe: not a race's round
            return result
        self.samples += result.samples
        by_arm = stats.group_by_arm(self.samples)
        ids = {c.id: c for c in self.batch.candidates}
        rates = {a: stats.summarize(s) for a, s in by_arm.items() if a in ids}
        best = max(rates, key=lambda a: (rates[a].median, a), default=None)
        self.show(
            Progress(
                stage=self.batch.stage,
                step=self.batch.step,
                candidates=len(ids),
                left=len({a for r in plan.order for a in r} & set(ids)),
                rounds=plan.first_round + plan.rounds,
                planned_rounds=self.batch.rounds,
                best=_words(ids[best].params) if best else _words(self.batch.incumbent.params),
                best_rate=rates[best] if best else None,
                seconds_left=max(0.0, self.deadline - time.monotonic()),
            )
        )
        return result
