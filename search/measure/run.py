"""The executor: a plan through one benchmark binary, in one process, and the culprit search.

A binary that crashes or hangs (the harness's watchdog aborts a sample past its deadline; the
process is also killed past an outer timeout) is not an exception: the arm that was running is
named by the harness's last line (or, when it could not say, found by running each suspect
alone), it gets its status and cause, and the run goes again without it (`isolate`). The
search's plans (`run_plan`) and `hspc-gen bench`'s rounds (search.contest) both run this way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

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
from hspc_gen.search.measure.plan import Plan, RunResult
from hspc_gen.search.records.samples import base_of


class Outcome(Protocol):
    """What the culprit search reads of one process: its status and what it printed."""

    @property
    def status(self) -> Status: ...

    @property
    def log(self) -> str: ...


OutcomeT = TypeVar("OutcomeT", bound=Outcome)


@dataclass(frozen=True)
class Isolated(Generic[OutcomeT]):
    """The last run (ok, or a failure nobody could be named for, or one a protected arm
    caused), the arms left out on the way with their statuses and causes, and the first run's
    log (ok or not)."""

    last: OutcomeT
    culprits: Mapping[str, Status]
    causes: Mapping[str, str]
    first_log: str


def isolate(
    attempt: Callable[[frozenset[str]], OutcomeT],
    alone: Callable[[str], OutcomeT],
    suspects: Sequence[str],
    protected: Collection[str] = frozenset(),
) -> Isolated[OutcomeT]:
    """`attempt(left_out)` runs every arm but those; when it fails, the harness's named arm, or
    else each suspect still in that `alone` fails, is left out and the run goes again. A failure
    with no one to name, or one a `protected` arm caused, ends it: `last` is that failure."""
    culprits: dict[str, Status] = {}
    causes: dict[str, str] = {}
    first_log: str | None = None
    while True:
        last = attempt(frozenset(culprits))
        first_log = last.log if first_log is None else first_log
        if last.status is Status.ok:
            return Isolated(last, culprits, causes, first_log)
        live = [arm for arm in suspects if arm not in culprits]
        found, why = _culprits(last, live, alone)
        nobody_new = set(found) <= set(culprits)  # the same run again would fail the same way
        culprits |= found
        causes |= why
        if nobody_new or set(found) & set(protected) or set(found) - set(suspects):
            return Isolated(last, culprits, causes, first_log)


def _culprits(
    failed: Outcome, live: Sequence[str], alone: Callable[[str], Outcome]
) -> tuple[dict[str, Status], dict[str, str]]:
    """Who made the run fail, and why: the arm the harness named, else each suspect alone."""
    said = death(failed.log)
    if said is not None and said.arm is not None:
        arm = base_of(said.arm)
        return {arm: failed.status}, {arm: said.cause}
    culprits: dict[str, Status] = {}
    causes: dict[str, str] = {}
    for arm in live:
        single = alone(arm)
        if single.status is not Status.ok:
            culprits[arm] = single.status
            said = death(single.log)
            causes[arm] = said.cause if said else f"{single.status} when run alone"
    return culprits, causes


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


def without_arms(plan: Plan, culprits: Collection[str]) -> Plan:
    def keep(arm: str) -> bool:
        return base_of(arm) not in culprits

    return dataclasses.replace(
        plan, order=tuple(tuple(a for a in rnd if keep(a)) for rnd in plan.order)
    )


def run_plan(plan: Plan, invocation: Invocation) -> RunResult:
    """Run `plan`; a candidate that crashes or hangs is named, recorded, and left out."""
    found = isolate(
        lambda left_out: _execute(without_arms(plan, left_out) if left_out else plan, invocation),
        lambda arm: _execute(_alone(plan, arm), invocation),
        candidates_of(plan.order),
        protected={plan.incumbent, *plan.baselines},
    )
    last = found.last
    if last.status is not Status.ok:
        return RunResult(last.status, (), found.first_log, found.culprits, causes=found.causes)
    return dataclasses.replace(
        last,
        arm_status={**last.arm_status, **found.culprits},
        causes={**last.causes, **found.causes},
        log=found.first_log,
    )
