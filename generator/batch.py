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

from hspc_gen.search import tune
from hspc_gen.search.measure.toolchain import Prepared, Toolchain
from hspc_gen.search.racing import Evaluation
from hspc_gen.search.records import Cut
from hspc_gen.search.store import RecordStore
from hspc_gen.search.strategies.base import Batch

Show = Callable[[str], None]


def quiet(_line: str) -> None:
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


def evaluate(
    batch: Batch, stage: tune.StageSpec, settings: tune.Settings, machinery: Machinery
) -> Evaluated | None:
    """One batch of the search, trimmed to what fits; None when the budget leaves it out."""
    fitted = fit(batch, stage, settings, machinery)
    if fitted is None:
        return None
    batch, prepared, replayed = fitted
    if replayed is None:
        machinery.show(_announce(batch, settings.deadline))
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
        if tune.fits(tune.batch_seconds(smaller, stage, ready), settings.deadline):
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
    run_plan = functools.partial(machinery.toolchain.run, built, prepared)  # run
    return tune.measure_and_record(  # record, decide
        batch, stage, settings, machinery.store, prepared=prepared, run_plan=run_plan, drop=drop
    )


def _announce(batch: Batch, deadline: float) -> str:
    best = batch.incumbent.params
    left = max(0.0, deadline - time.monotonic())
    return (
        f"stage {batch.stage} · {batch.step} · {len(batch.candidates)} candidates · "
        f"best {best.primitive} {best.buffers}x{best.buffer_bytes} B pad {best.padding_bytes} · "
        f"{left:.0f} s left"
    )
