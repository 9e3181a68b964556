"""Searches confirmed over fake_runner's simulated toolchain whose baselines, in the plans of the
seeds given, measure far slower than the channel (`SlowBaselines`): figures that cannot be true,
which the confirmation measures again (`confirmed_with`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import fake_runner as fr
from fake_runner import machinery, run_search, settings
from hspc_gen.model.result import SearchResult
from hspc_gen.search.channel import measure_confirmation, remeasure, search_result
from hspc_gen.search.measure.build import BuildResult
from hspc_gen.search.measure.plan import Plan, RunResult
from hspc_gen.search.measure.toolchain import Prepared
from hspc_gen.search.records.samples import Sample


class SlowBaselines(fr.SimulatedToolchain):
    """Baselines measured far slower than the channel (as on other CPUs than its own), in the
    plans of the seeds listed: figures that cannot be true."""

    def __init__(self, seeds: set[int], ratios: tuple[float, ...] = ()) -> None:
        super().__init__()
        self.seeds, self.ratios = seeds, ratios
        self.plans: list[Plan] = []

    def run(self, built: BuildResult, prepared: Prepared, plan: Plan) -> RunResult:
        self.plans.append(plan)
        result = super().run(built, prepared, plan)
        if plan.seed not in self.seeds:
            return result
        pair = {s.round: s.wall_ns for s in result.samples if s.arm == plan.incumbent}

        def alone(s: Sample) -> Sample:  # 3x slower, or the pair's time x the round's ratio
            if not self.ratios:
                return dataclasses.replace(s, wall_ns=s.wall_ns * 3)
            return dataclasses.replace(s, wall_ns=pair[s.round] * self.ratios[s.round % 6])

        slow = tuple(alone(s) if s.arm.endswith("_alone") else s for s in result.samples)
        return dataclasses.replace(result, samples=slow)


def confirmed_with(tmp_path: Path, toolchain: SlowBaselines) -> tuple[SearchResult, set[int]]:
    """The search, its confirmation and (when its figures cannot be true) the re-measure: the
    result, and the seeds of the plans the confirmations ran."""
    s = settings()
    searched = run_search(tmp_path, toolchain, s)
    before = len(toolchain.plans)
    mach = machinery(tmp_path, toolchain)
    confirmation = measure_confirmation(searched, s, mach)
    assert confirmation is not None
    winner = confirmation.step.winner() or searched.winner
    again = remeasure(confirmation, searched, winner, s, mach)
    seeds = {plan.seed for plan in toolchain.plans[before:]}
    return search_result(searched, (confirmation, again), winner, s), seeds
