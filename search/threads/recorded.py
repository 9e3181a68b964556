"""The thread search's measurements in the record store, like every other measurement.

Each call of the search's `Measure` is numbered; its samples are recorded one `Record` per
configuration (arm `<name>/<call>/<label>[:<cpus>]`, the call number as the first round, the
events per producer the `Pace` sized it to) under the thread search's own key, which covers
everything the search depends on. The search is a pure function of its samples (and the pace of
the samples before), so a re-run with the same inputs asks the same calls in the same order and
is answered from the records: it measures nothing and recommends the same.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from hspc_gen.model import Status
from hspc_gen.search.records.samples import Cut, Record, RecordKey, Sample
from hspc_gen.search.records.store import RecordStore
from hspc_gen.search.threads.harness import MeasureFailedError
from hspc_gen.search.threads.measure import BudgetSpentError, Config, ThreadSample
from hspc_gen.search.threads.pace import Pace

Run = Callable[
    [Sequence[Config], int, int, Mapping[Config, int]], Mapping[Config, Sequence[ThreadSample]]
]
"""Measures configurations for `rounds` rounds as call number `call`, each sample of a
configuration moving its given events per producer."""


class NotRecordedError(Exception):
    """A replay met a call that was never measured: the bench must be built and measured."""


@dataclass(frozen=True)
class Budget:
    """Until when the thread search may measure, and what its cuts belong to. `clock` reads the
    time the deadline is in (a simulated host's clock in tests)."""

    deadline: float = math.inf
    run: str = ""
    sample_seconds: float = 0.02  # a sample lasts about this (the pace sizes it so)
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    def left(self) -> float:
        return self.deadline - self.clock()


class RecordedMeasure:
    """A `Measure` answered from the store; a call not recorded is run by `run` (and recorded),
    or, without `run` (a replay), raises NotRecordedError."""

    def __init__(
        self,
        store: RecordStore,
        key: RecordKey,
        name: str,
        pace: Pace,
        *,
        seed: int,
        run: Run | None = None,
        budget: Budget = Budget(),
    ) -> None:
        self.store, self.key, self.name = store, key, name
        self.pace, self.seed, self.run, self.budget = pace, seed, run, budget
        self.calls = 0

    def arm(self, call: int, config: Config) -> str:
        cpus = "+".join(map(str, (*config.producer_cpus, *config.consumer_cpus)))
        return f"{self.name}/{call}/{config.label}" + (f":{cpus}" if cpus else "")

    def __call__(
        self, configs: Sequence[Config], rounds: int
    ) -> Mapping[Config, Sequence[ThreadSample]]:
        call, self.calls = self.calls, self.calls + 1
        events = {c: self.pace.events(c) for c in configs}
        recorded = self._recorded(call, configs, rounds, events)
        found = self._measured(call, configs, rounds, events) if recorded is None else recorded
        self.pace.learn(found)
        return found

    def _measured(
        self, call: int, configs: Sequence[Config], rounds: int, events: Mapping[Config, int]
    ) -> Mapping[Config, Sequence[ThreadSample]]:
        cut = Cut(self.key, self.budget.run, (self.seed, call))
        if self.store.was_cut(cut):
            raise BudgetSpentError(f"thread search call {call}")
        if self.run is None:
            raise NotRecordedError(f"thread search call {call}")
        if self.pace.call_seconds(configs, rounds) > self.budget.left():
            self.store.append(cut)
            raise BudgetSpentError(f"thread search call {call}")
        measured = self.run(configs, rounds, call, events)
        for config in configs:
            arm = self.arm(call, config)
            samples = tuple(_with_counters(ts, arm) for ts in measured[config])
            self.store.append(self._record(call, config, samples, events[config]))
        # Read back what was recorded, so a cold run decides on exactly what a replay will see.
        recorded = self._recorded(call, configs, rounds, events)
        if recorded is None:
            raise MeasureFailedError(Status.no_samples, f"call {call} left rounds unmeasured")
        return recorded

    def _record(
        self, call: int, config: Config, samples: tuple[Sample, ...], events: int
    ) -> Record:
        return Record(
            key=self.key,
            arm=self.arm(call, config),
            status=Status.ok,
            samples=samples,
            seed=self.seed,
            events_per_sample=events,
            first_round=call,
        )

    def _recorded(
        self, call: int, configs: Sequence[Config], rounds: int, events: Mapping[Config, int]
    ) -> dict[Config, list[ThreadSample]] | None:
        out: dict[Config, list[ThreadSample]] = {}
        for config in configs:
            records = [
                r
                for r in self.store.lookup(self.key, self.arm(call, config))
                if r.first_round == call and r.events_per_sample == events[config]
            ]
            samples = [s for r in records[-1:] for s in r.samples]
            if len({s.round for s in samples}) < rounds:
                return None
            out[config] = [ThreadSample(s, s.voluntary_switches, s.wait_ns) for s in samples]
        return out


def _with_counters(ts: ThreadSample, arm: str) -> Sample:
    """The harness's sample as its record holds it: the record's arm, and the thread search's
    counters folded in."""
    return dataclasses.replace(
        ts.sample, arm=arm, voluntary_switches=ts.voluntary_switches, wait_ns=ts.wait_ns
    )
