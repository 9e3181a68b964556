"""The run stage: one plan through one benchmark binary, in one process.

A binary that crashes or hangs (the harness's watchdog aborts a sample past its deadline; the
process is also killed past an outer timeout) is not an exception: the candidate that was running
is found by running each candidate of the plan alone, it gets its status, and the plan runs again
without it.
"""

from __future__ import annotations

import dataclasses

from hspc_gen.model import Status
from hspc_gen.search.measure import load
from hspc_gen.search.measure.harness import (
    Invocation,
    candidates_of,
    execute,
    parse_samples,
    plan_text,
)
from hspc_gen.search.plan import Plan, RunResult
from hspc_gen.search.records import AA_PREFIX


def _execute(plan: Plan, invocation: Invocation) -> RunResult:
    before = load.cpu_times()
    text = plan_text(plan, invocation)
    done = execute(invocation.executable, text, invocation.timeout(plan), invocation.deadline_s)
    busy = load.busy(before, load.cpu_times())
    if done.status is not Status.ok:
        return RunResult(done.status, (), done.log, busy=busy)
    samples = parse_samples(done.document)
    wrong = {s.arm.removeprefix(AA_PREFIX) for s in samples if not s.verified}
    statuses = dict.fromkeys(wrong, Status.wrong_answer)
    return RunResult(Status.ok, samples, done.log, statuses, busy=busy)


def _alone(plan: Plan, arm: str) -> Plan:
    return dataclasses.replace(plan, baselines=(), rounds=1, order=((arm,),), incumbent=arm)


def without_arms(plan: Plan, culprits: set[str]) -> Plan:
    def keep(arm: str) -> bool:
        return arm.removeprefix(AA_PREFIX) not in culprits

    return dataclasses.replace(
        plan, order=tuple(tuple(a for a in rnd if keep(a)) for rnd in plan.order)
    )


def run_plan(plan: Plan, invocation: Invocation) -> RunResult:
    """Run `plan`; a candidate that crashes or hangs is isolated, recorded, and left out."""
    result = _execute(plan, invocation)
    if result.status is Status.ok:
        return result
    culprits: dict[str, Status] = {}
    for arm in candidates_of(plan.order):
        alone = _execute(_alone(plan, arm), invocation)
        if alone.status is not Status.ok:
            culprits[arm] = alone.status
    if not culprits or plan.incumbent in culprits:
        return RunResult(result.status, (), result.log, culprits)
    rerun = _execute(without_arms(plan, set(culprits)), invocation)
    statuses = {**rerun.arm_status, **culprits}
    return RunResult(rerun.status, rerun.samples, result.log, statuses, busy=rerun.busy)
