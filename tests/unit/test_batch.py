"""hspc_gen.search.batch: one batch replayed or built and measured, trimmed to fit the budget or
left out, every such choice recorded so that the same command replays it."""

from __future__ import annotations

import math
import time
from pathlib import Path

import fake_runner as fr
from hspc_gen.model import ChannelParams, Effort, Objective, Primitive
from hspc_gen.model.progress import Progress
from hspc_gen.model.workload import Workload
from hspc_gen.search.batch import Machinery, fit, search_step
from hspc_gen.search.records.samples import Cut
from hspc_gen.search.records.store import RecordStore
from hspc_gen.search.strategies.base import make_batch
from hspc_gen.search.tune import STAGE_ONE_BASELINES, Settings, StageSpec, batch_seconds

STAGE = StageSpec("stage_one", Workload(), STAGE_ONE_BASELINES)
BASE = ChannelParams(128, 0, 4, 8192, Primitive.futex)
BATCH = make_batch(
    "one", "padding", [BASE.replace(padding_bytes=p) for p in (0, 64, 256, 512)], BASE, 12
)


def settings(deadline: float, run: str = "quick:20s") -> Settings:
    return Settings(Objective.throughput, Effort.quick, 7, deadline, True, (STAGE,), run=run)


def machinery(folder: Path, toolchain: fr.SimulatedToolchain) -> Machinery:
    return Machinery(RecordStore(folder, "fp"), toolchain)


def seconds_for(size: int) -> float:
    """What the cost model gives a batch of `size` candidates of BATCH."""
    others = [c.params for c in BATCH.candidates if c.params != BASE][: size - 1]
    batch = make_batch("one", "padding", others, BASE, 12)
    assert len(batch.candidates) == size
    return batch_seconds(batch, STAGE, fr.SimulatedToolchain().prepare(batch, STAGE.workload))


def test_a_batch_too_big_for_the_time_left_is_trimmed_to_the_points_nearest_the_incumbent(
    tmp_path: Path,
) -> None:
    room = (seconds_for(3) + seconds_for(4)) / 2  # three candidates fit, four do not
    toolchain = fr.SimulatedToolchain()
    cold = search_step(
        BATCH, STAGE, settings(time.monotonic() + room), machinery(tmp_path, toolchain)
    )
    assert cold is not None and toolchain.builds == 1
    kept = {c.params.padding_bytes for c in cold.evaluation.step.batch.candidates}
    assert kept == {128, 64, 256}  # one value away from 128 on each side, in grid order
    whole = fr.SimulatedToolchain().prepare(BATCH, STAGE.workload).key
    assert RecordStore(tmp_path, "fp").trimmed(whole, "quick:20s") == 3
    again = fr.SimulatedToolchain()
    warm = search_step(BATCH, STAGE, settings(math.inf), machinery(tmp_path, again))
    assert warm is not None and again.builds == 0 and again.runs == 0  # the same trim, replayed
    assert warm.evaluation.step.batch == cold.evaluation.step.batch
    longer = fr.SimulatedToolchain()
    other = search_step(BATCH, STAGE, settings(math.inf, "quick:10m"), machinery(tmp_path, longer))
    assert other is not None and len(other.evaluation.step.batch.candidates) == 5


def test_a_batch_nothing_of_which_fits_is_left_out_and_stays_out(tmp_path: Path) -> None:
    toolchain = fr.SimulatedToolchain()
    short = settings(time.monotonic() + seconds_for(2) / 2)
    assert search_step(BATCH, STAGE, short, machinery(tmp_path, toolchain)) is None
    assert toolchain.builds == 0
    store = RecordStore(tmp_path, "fp")
    key = toolchain.prepare(BATCH, STAGE.workload).key
    assert store.was_cut(Cut(key, "quick:20s"))
    assert fit(BATCH, STAGE, settings(math.inf), machinery(tmp_path, toolchain)) is None


def test_a_watcher_is_told_where_the_race_stands_after_each_plan(tmp_path: Path) -> None:
    said: list[str | Progress] = []
    toolchain = fr.SimulatedToolchain()
    watched = Machinery(RecordStore(tmp_path, "fp"), toolchain, show=said.append)
    done = search_step(BATCH, STAGE, settings(math.inf), watched)
    assert done is not None
    progress = [p for p in said if isinstance(p, Progress)]
    assert len(progress) == toolchain.runs - 1  # once per chunk of rounds (not the sizing probe)
    assert [p.rounds for p in progress] == sorted(p.rounds for p in progress)
    last = progress[-1]
    assert (last.stage, last.step, last.candidates) == ("one", "padding", len(BATCH.candidates))
    assert 1 <= last.left <= last.candidates and last.planned_rounds == BATCH.rounds
    rates = done.evaluation.step.decision.summaries
    best = max((c for c in BATCH.candidates), key=lambda c: rates[c.id].median)
    assert last.best_rate is not None and last.best_rate.median == rates[best.id].median
    assert f"pad {best.params.padding_bytes}" in last.best
    # Replayed from the records, nothing is measured and nothing is said of a race.
    said.clear()
    assert search_step(BATCH, STAGE, settings(math.inf), watched) is not None
    assert not any(isinstance(p, Progress) for p in said)
