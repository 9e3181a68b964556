"""The run stage: one plan through one benchmark binary, in one process.

A binary that crashes or hangs (the harness's watchdog aborts a sample past its deadline; the
process is also killed past an outer timeout) is not an exception: the candidate that was running
is named by the harness's last line (or, when it could not say, found by running each candidate
of the plan alone), it gets its status and cause, and the plan runs again without it.
"""

from __future__ import annotations

import dataclasses

from hspc_gen.model import Status
from hspc_gen.search.measure import load
from hspc_gen.search.measure.harness import (
    Invocation,
    candidates_of,
    death,
    execute,
    parse_samples,
    plan_text,
)
from hspc_gen.search.plan import Plan, RunResult
from hspc_gen.search.records import base_of


def _execute(plan: Plan, invocation: Invocation) -> RunResult:
    before = load.cpu_times()
    text = plan_text(plan, invocation)
    done = execute(
        invocation.executable,
        text,
        invocation.timeout(plan),
        invocation.deadline_s,
        invocation.cap_s,
    )
    busy = load.busy(before, load.cpu_times())
    if done.status is not Status.ok:
        return RunResult(done.status, (), done.log, busy=busy)
    parsed = parse_samples(done.document)
    statuses = {base_of(arm): status for arm, status in sorted(parsed.failed.items())}
    causes = {base_of(arm): parsed.cause(arm) for arm in sorted(parsed.failed)}
    return RunResult(Status.ok, parsed.samples, done.log, statuses, busy=busy, causes=causes)


def _alone(plan: Plan, arm: str) -> Plan:
    return dataclasses.replace(plan, baselines=(), rounds=1, order=((arm,),), incumbent=arm)


def without_arms(plan: Plan, culprits: set[str]) -> Plan:
    def keep(arm: str) -> bool:
        return base_of(arm) not in culprits

    return dataclasses.replace(
        plan, order=tuple(tuple(a for a in rnd if keep(a)) for rnd in plan.order)
    )


def run_plan(plan: Plan, invocation: Invocation) -> RunResult:
    """Run `plan`; a candidate that crashes or hangs is named, recorded, and left out."""
    result = _execute(plan, invocation)
    if result.status is Status.ok:
        return result
    culprits, causes = _culprits(plan, invocation, result)
    if not culprits or plan.incumbent in culprits or set(culprits) & set(plan.baselines):
        return RunResult(result.status, (), result.log, culprits, causes=causes)
    rerun = run_plan(without_arms(plan, set(culprits)), invocation)
    statuses = {**rerun.arm_status, **culprits}
    return dataclasses.replace(
        rerun, arm_status=statuses, causes={**rerun.causes, **causes}, log=result.log
    )


def _culprits(
    plan: Plan, invocation: Invocation, failed: RunResult
) -> tuple[dict[str, Status], dict[str, str]]:
    """Who made the run fail, and why: the arm the harness named, else each candidate alone."""
    said = death(failed.log)
    if said is not None and said.arm is not None:
        arm = base_of(said.arm)
        return {arm: failed.status}, {arm: said.cause}
    culprits: dict[str, Status] = {}
    causes: dict[str, str] = {}
    for arm in candidates_of(plan.order):
        alone = _execute(_alone(plan, arm), invocation)
        if alone.status is not Status.ok:
            culprits[arm] = alone.status
            said = death(alone.log)
            causes[arm] = said.cause if said else f"{alone.status} when run alone"
    return culprits, causes
