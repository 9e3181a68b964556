"""Re-measure the winners of earlier runs side by side, in one process, in paired rounds.

`hspc-gen compare --target app.yaml A/hspc-result.json B/hspc-result.json` answers "is the
winner of --effort measure as good as the winner of --effort exhaustive?" with a paired ratio
and its interval, measured now, on this host, with the same harness as the tuner.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path

from hspc_gen.errors import UserError
from hspc_gen.host import Host
from hspc_gen.model import ChannelParams, Effort
from hspc_gen.search import stats
from hspc_gen.search.decide import metric_for
from hspc_gen.search.racing import Evaluation
from hspc_gen.search.records import params_from_dict
from hspc_gen.search.session import settings_for, toolchain_for
from hspc_gen.search.store import RecordStore
from hspc_gen.search.strategies.base import make_batch
from hspc_gen.search.tune import Machinery, Progress, evaluate
from hspc_gen.target import Target

# Apart from the tuner's seeds, so the comparison is measured afresh, not replayed from the
# search's own samples; fixed, so that re-running it replays its own records.
COMPARE_SEED = 1


@dataclass(frozen=True)
class Comparison:
    labels: tuple[str, ...]
    evaluation: Evaluation
    ratios: dict[str, stats.Comparison]  # label -> its cost relative to the first


def winner_of(path: Path) -> ChannelParams:
    """The winning parameters recorded in an hspc-result.json."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return params_from_dict(document["winner"]["params"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise UserError(f"{path}: not an hspc-result.json ({err})") from None


def compare(
    target: Target, host: Host, results: list[Path], rounds: int, cache: Path | None
) -> Comparison:
    points = [winner_of(path) for path in results]
    if len(set(points)) < len(points):
        raise UserError("the results name the same winner: nothing to compare")
    settings = settings_for(target, host, Effort.patient, time.monotonic())
    stage = settings.stages[-1]
    batch = make_batch("compare", "compare", points, points[0], rounds)
    toolchain = toolchain_for(target, host, cache)
    store = RecordStore(toolchain.cache_dir / "records", host.fingerprint)
    machinery = Machinery(store, toolchain, Progress())
    fresh = dataclasses.replace(settings, seed=COMPARE_SEED, deadline=float("inf"))
    prepared = toolchain(batch, stage.workload, stage.baselines)
    evaluation = evaluate(batch, stage, fresh, machinery, prepared, drop=False)
    by_arm = stats.group_by_arm(evaluation.race.samples)
    metric = metric_for(target.objective)
    reference = batch.candidates[0].id
    ratios = {
        str(path): stats.compare(by_arm.get(c.id, ()), by_arm.get(reference, ()), metric)
        for path, c in zip(results, batch.candidates, strict=True)
    }
    return Comparison(tuple(str(p) for p in results), evaluation, ratios)
