"""threads.consumers: adaptive, wired: a run's target, host and results turned into the pool
controller's inputs (search.threads.pool chooses the parameters from them).

Each input is the best figure the run has, with where it came from: measured by this run (or an
earlier one on this host), else the estimate's stand-in, said so.
"""

from __future__ import annotations

import dataclasses
import math
import os

from hspc_gen.host.machine import Host
from hspc_gen.model import DEFAULT_SPIN_NS, HostTimings
from hspc_gen.model.pool import Basis, PoolTuning
from hspc_gen.model.result import Confirmed, TuneResult
from hspc_gen.model.threads import ThreadAdvice
from hspc_gen.search.api import MARGIN_FLOOR, PoolInputs, pool_tuning
from hspc_gen.target.app import Target

USER_CODE_GUESS_NS = 1000.0
"""The consumer's own code per event before it is measured: Workload.expected_ns_per_event's
guess for the user's code."""


def with_pool(
    result: TuneResult,
    target: Target,
    host: Host,
    estimated: ThreadAdvice,
    timings: HostTimings | None,
) -> TuneResult:
    """`result` with the pool's parameters when app.yaml asks for adaptive consumers (the
    estimated advice stands in for a thread search that failed)."""
    if not target.threads.adaptive:
        return result
    advice = result.threads if isinstance(result.threads, ThreadAdvice) else estimated
    confirmed = result.search.confirmed if result.search is not None else None
    buffer_bytes = result.winner.buffer_bytes
    pool = pool_for(target, host, advice, buffer_bytes, confirmed=confirmed, timings=timings)
    return dataclasses.replace(result, pool=pool)


def estimated_pool(
    target: Target, host: Host, buffer_bytes: int, advice: ThreadAdvice, timings: HostTimings | None
) -> PoolTuning | None:
    """The pool's parameters before anything is measured (None: app.yaml does not ask)."""
    return pool_for(target, host, advice, buffer_bytes, confirmed=None, timings=timings)


def pool_for(
    target: Target,
    host: Host,
    advice: ThreadAdvice,
    buffer_bytes: int,
    *,
    confirmed: Confirmed | None,
    timings: HostTimings | None,
) -> PoolTuning | None:
    """The pool's parameters for a channel of `buffer_bytes` buffers, this advice and what was
    measured (a run's, or `hspc-gen threads`' for its recommendation); None: app.yaml does not
    ask for adaptive consumers."""
    if not target.threads.adaptive:
        return None
    inputs = PoolInputs(
        advice=advice,
        events_per_buffer=max(1, buffer_bytes // target.event.stride),  # as kEventsPerBuffer
        pace_ns=pace_ns(target, advice, confirmed),
        handling_ns=handling_ns(target, advice, confirmed),
        wake_ns=wake_ns(timings),
        margin=margin(confirmed),
        cpus=len(host.allowed_cpus),
        clock_ticks_per_s=os.sysconf("SC_CLK_TCK"),
    )
    return pool_tuning(inputs)


def pace_ns(target: Target, advice: ThreadAdvice, confirmed: Confirmed | None) -> Basis:
    """The channel's time per event at full load: the confirmed rate's, else the slower side's
    CPU time the thread search measured, else app.yaml's work (the slower side's)."""
    if (confirmed_ns := _confirmed_ns(confirmed)) is not None:
        return Basis(confirmed_ns, "the confirmed channel's time per event", True)
    if advice.work_ns is not None:
        return Basis(max(advice.work_ns), "the slower side's CPU time per event, measured", True)
    work = target.workload.value().expected_ns_per_event
    return Basis(work, "app.yaml's work per event, the slower side's, not measured", False)


def _confirmed_ns(confirmed: Confirmed | None) -> float | None:
    rate = confirmed.rate if confirmed is not None else None
    if rate is None or not math.isfinite(rate.median) or rate.median <= 0:
        return None
    return 1e9 / rate.median


def handling_ns(target: Target, advice: ThreadAdvice, confirmed: Confirmed | None) -> Basis:
    """A consumer's time per event: the thread search's measured consumer CPU time, else the
    confirmed channel's time per event (the slower side's: at least the consumer's), else
    app.yaml's consumer work."""
    if advice.work_ns is not None:
        return Basis(advice.work_ns[1], "the consumer's CPU time per event, measured", True)
    if (confirmed_ns := _confirmed_ns(confirmed)) is not None:
        return Basis(confirmed_ns, "the channel's confirmed time per event (an upper bound)", True)
    work = target.workload
    if work.consumer_source is not None:
        guess = work.consumer_ns + USER_CODE_GUESS_NS
        return Basis(guess, "a guess for the consumer's own code, not measured", False)
    # At least an event's move, as Workload.expected_ns_per_event guesses it.
    return Basis(max(work.consumer_ns, 2.0), "app.yaml's consumer_ns, not measured", False)


def wake_ns(timings: HostTimings | None) -> Basis:
    """A parked consumer's wake-up: the futex wake-up measured on this host (by this run or an
    earlier one), else the default spin budget, which stands for one."""
    if timings is not None and math.isfinite(timings.wake_ns.median):
        return Basis(timings.wake_ns.median, "the futex wake-up measured on this host", True)
    return Basis(float(DEFAULT_SPIN_NS), "the default spin budget's, not measured", False)


def margin(confirmed: Confirmed | None) -> Basis:
    """The least relative difference the tuner calls real: the confirmation's, else its floor."""
    if confirmed is not None and math.isfinite(confirmed.decision.margin):
        return Basis(confirmed.decision.margin, "the confirmation's decision margin", True)
    return Basis(MARGIN_FLOOR, "the tuner's floor, nothing decided", False)
