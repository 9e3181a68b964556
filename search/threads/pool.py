"""The adaptive pool's controller parameters for this host (threads.consumers: adaptive).

Each PoolOptions field hspc-gen sets is derived from a figure the run measured (or, under
`--effort estimate`, the estimate's stand-in for it, or what an earlier run measured on this
host: its wake-up), and carries its reason in words, which claim no measurement not made:

- start_consumers: the thread search's recommendation (Xu's pool starts from a known size).
- min_consumers: 1. One consumer drains every producer's lane in turn; more must be earned.
- max_consumers: the CPUs the process may use at run time (0), unless the thread search
  measured more consumers than that as good as the best (work that blocks), or the
  recommendation (the estimate's, under `--effort estimate`) has more: then that many.
- interval_ns: long enough that each interval's mean wait averages 1/margin buffer hand-offs
  (at the channel's pace under full load), so that one hand-off held up by a whole normal wait
  moves the mean by at most the tuner's decision margin; at least CLOCK_TICKS_PER_DRAW clock
  ticks in its shortest draw, as /proc/stat counts busy time in ticks; at most what lets the
  pool climb from min to max within REACT_NS.
- grow_wait_ns: the longest a buffer waits when its lane's consumer keeps up (a parked
  consumer's wake-up, plus that consumer finishing the buffer before it), longer by the tuner's
  decision margin: a mean wait past it is backlog.
- grow_intervals: 2. Two intervals of independent random lengths in a row: one burst cannot
  fill both, and a periodic load cannot lock onto both.

The rest of PoolOptions (the shrink rule, cpu_busy_max, the seed) keeps the runtime's defaults.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hspc_gen.model.pool import Basis, PoolChoice, PoolTuning
from hspc_gen.model.threads import ThreadAdvice

MAX_POOL_CONSUMERS = 64  # the runtime's kMaxPoolConsumers: one bit each in the parking word
SHORTEST_DRAW = 0.5  # PoolController draws each interval from [0.5, 1.5] x interval_ns
LONGEST_DRAW = 1.5
CLOCK_TICKS_PER_DRAW = 2
"""Clock ticks the shortest interval spans: /proc/stat's busy time moves in ticks, so over one
tick the CPU-busy check would read rounding, not load."""
REACT_NS = 2e9
"""The pool climbs from min_consumers to max_consumers within this (issue 25's re-convergence
goal): it bounds the interval from above."""
GROW_INTERVALS = 2


@dataclass(frozen=True)
class PoolInputs:
    """What the choice rests on: the thread advice, the tuned buffer, and three figures."""

    advice: ThreadAdvice
    events_per_buffer: int  # events a buffer of the tuned channel holds
    pace_ns: Basis  # the channel's time per event at full load: how often buffers come
    handling_ns: Basis  # a consumer's time per event
    wake_ns: Basis  # a parked consumer's wake-up
    margin: Basis  # the least relative difference the tuner calls real
    cpus: int  # the CPUs this process may use
    clock_ticks_per_s: int  # SC_CLK_TCK: /proc/stat's unit


def pool_tuning(inputs: PoolInputs) -> PoolTuning:
    """Every field hspc-gen sets, each with its reason."""
    limit = _max_consumers(inputs)
    most = limit.value or min(inputs.cpus, MAX_POOL_CONSUMERS)
    start = min(inputs.advice.consumers, most)
    advice = inputs.advice
    counts = f"{advice.consumers} consumer(s) for {advice.producers} producer(s)"
    source = (
        f"the thread search's recommendation, {counts}, measured as good as the best"
        f" ({advice.evidence.termination})"
        if advice.evidence is not None
        else f"the estimate's {counts}, from the topology (not measured)"
    )
    bases = (inputs.pace_ns, inputs.handling_ns, inputs.wake_ns, inputs.margin)
    return PoolTuning(
        min_consumers=PoolChoice(
            1, "one consumer drains every producer's lane in turn; more must be earned by backlog"
        ),
        max_consumers=limit,
        start_consumers=PoolChoice(
            start,
            source + ("" if start == advice.consumers else f", within max_consumers ({most})"),
        ),
        interval_ns=_interval(inputs, most),
        grow_wait_ns=_grow_wait(inputs),
        grow_intervals=PoolChoice(
            GROW_INTERVALS,
            "two intervals of independent random lengths in a row: one burst cannot fill"
            " both, and a periodic load cannot lock onto both",
        ),
        basis=_basis(advice.evidence is not None, *(b.measured for b in bases)),
    )


def _basis(*measured: bool) -> str:
    if all(measured):
        return "measured"
    return "partly measured" if any(measured) else "estimated, nothing measured"


def _max_consumers(inputs: PoolInputs) -> PoolChoice:
    evidence, cpus = inputs.advice.evidence, inputs.cpus
    good = 0 if evidence is None else max((p.consumers for p in evidence.equally_good), default=0)
    most = max(good, inputs.advice.consumers)
    if most > cpus:
        return PoolChoice(
            min(most, MAX_POOL_CONSUMERS),
            f"{_more(evidence is not None, good >= most, most)}, more than the {cpus} usable"
            " CPU(s): that many may help (the consumers wait, on their work or their channel)",
        )
    seen = (
        "the thread search measured no more consumers than that as good as the best"
        if evidence is not None
        else "nothing was measured past them (estimate)"
    )
    return PoolChoice(
        0,
        f"the CPUs this process may use at run time ({cpus} here): past them consumers take turns"
        f" on a CPU unless the handler blocks, and {seen}",
    )


def _more(searched: bool, shown: bool, most: int) -> str:
    """Where `most` consumers come from, in words that claim no measurement not made: the
    thread search's curve, its recommendation (counts the target fixes), or the estimate."""
    if not searched:
        return f"the estimate has {most} consumers (not measured)"
    if shown:
        return f"the thread search measured {most} consumers as good as the best"
    return f"the thread recommendation has {most} consumers"


def buffer_ns(inputs: PoolInputs) -> float:
    """One buffer's handling by a consumer."""
    return inputs.events_per_buffer * inputs.handling_ns.value


def handoff_ns(inputs: PoolInputs) -> float:
    """The time between two hand-offs of one producer at full load."""
    return inputs.events_per_buffer * inputs.pace_ns.value


def _ns(value: float) -> str:
    """Nanoseconds for a reader: whole ones from 100 on, three digits below."""
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def _interval(inputs: PoolInputs, most: int) -> PoolChoice:
    margin, every = inputs.margin.value, handoff_ns(inputs)
    handoffs = math.ceil(1.0 / margin)
    enough = handoffs * every / SHORTEST_DRAW
    tick_ns = 1e9 / inputs.clock_ticks_per_s
    floor = CLOCK_TICKS_PER_DRAW * tick_ns / SHORTEST_DRAW
    steps = max(1, most - 1)
    ceiling = REACT_NS / (steps * GROW_INTERVALS * LONGEST_DRAW)
    value = max(floor, min(enough, ceiling))
    averaged = (
        f"{handoffs} buffer hand-offs, one per {_ns(every)} ns ({inputs.events_per_buffer} events"
        f" of {_ns(inputs.pace_ns.value)} ns, {inputs.pace_ns.source})"
    )
    why = (
        f"its shortest draw averages {averaged}: 1/{margin:.3g}, so that one hand-off held up"
        f" by a whole normal wait moves the mean wait by at most the margin"
        f" ({inputs.margin.source})"
    )
    if value == floor:
        why = (
            f"its shortest draw spans {CLOCK_TICKS_PER_DRAW} clock ticks of {tick_ns / 1e6:g} ms"
            f" (/proc/stat counts busy time in ticks); averaging {averaged} takes less"
        )
    elif value == ceiling:
        why = (
            f"climbing {steps} consumer(s) at {GROW_INTERVALS} intervals each fits in"
            f" {REACT_NS / 1e9:g} s (averaging {handoffs} hand-offs would take longer)"
        )
    return PoolChoice(math.ceil(value), why)


def _grow_wait(inputs: PoolInputs) -> PoolChoice:
    wake, margin, handling = inputs.wake_ns, inputs.margin, inputs.handling_ns
    longest = wake.value + buffer_ns(inputs)
    return PoolChoice(
        math.ceil(longest * (1.0 + margin.value)),
        f"a buffer whose lane's consumer keeps up waits at most a wake-up ({_ns(wake.value)} ns,"
        f" {wake.source}) plus that consumer handling the buffer before it"
        f" ({inputs.events_per_buffer} events of {_ns(handling.value)} ns, {handling.source});"
        f" a mean wait longer by the margin ({margin.value:.1%}, {margin.source}) is backlog",
    )
