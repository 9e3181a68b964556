"""How long the thread search's samples last, and what a call of them costs.

A sample of P producers moves `events` per producer, so with events fixed per producer a count
past the CPUs' saturation (throughput flat, P still growing) or under contention (throughput far
below P pairs') lasts many times a pair's sample. `Pace` sizes each configuration's sample to last
about `sample_seconds` at the rate it predicts for it: the median measured so far for that
configuration (or, pinned, for its counts); else interpolated over the measured counts of the same
consumers per producer (log rate over log producers; flat past the largest, proportional below the
smallest); else, before anything of it was measured, the cost model's: one pair's rate times the
groups, up to the count that saturates the CPUs. Only the first call's samples can miss by much
(a count under contention runs slower than the model says, and its sample longer); every later
one is sized from what was measured. The same prediction says what a call costs, so the budget
check and the plan count the seconds the samples will really take.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from hspc_gen.search.threads.measure import Config, ThreadSample

SAMPLE_OVERHEAD = 1.5
"""A call's samples, with their start-up and pinning, take this much more than their timed part."""
MAX_STRETCH = 2.0
"""A sample may last this many times `sample_seconds` to give each producer its fewest events."""


def _ratio(config: Config) -> float:
    return config.consumers / config.producers


class Pace:
    """Sizes samples (events per producer) and predicts their seconds; `learn` feeds it every
    call's samples, in call order, so that a replay sizes exactly as the cold run did."""

    def __init__(
        self,
        events: int,
        sample_seconds: float,
        *,
        pair_rate: float | None = None,
        saturation: float = 1.0,
        min_events: int = 1,
        max_events: int = 1 << 62,
    ) -> None:
        """`events` per producer last `sample_seconds` for one pair, which moves `pair_rate`
        events/s, and the CPUs saturate at `saturation` threads; without `pair_rate` every
        sample moves `events` per producer."""
        self.events_per_pair, self.sample_seconds = events, sample_seconds
        self.pair_rate, self.saturation = pair_rate, saturation
        self.min_events, self.max_events = min_events, max_events
        self._rates: dict[Config, list[float]] = {}

    def learn(self, measured: Mapping[Config, Sequence[ThreadSample]]) -> None:
        for config, samples in measured.items():
            rates = [s.sample.events_per_second for s in samples if s.sample.events > 0]
            self._rates.setdefault(config.original(), []).extend(r for r in rates if r > 0)

    def rate(self, config: Config) -> float | None:
        """The events/s expected of `config`; None while nothing says (a fixed-size pace)."""
        for known in (config.original(), config.counts()):
            if self._rates.get(known):
                return float(np.median(self._rates[known]))
        return self._interpolated(config.counts())

    def _interpolated(self, config: Config) -> float | None:
        measured = {
            c.producers: float(np.median(r))
            for c, r in self._rates.items()
            if r and not c.pinned and math.isclose(_ratio(c), _ratio(config))
        }
        if not measured:
            if self.pair_rate is None:
                return None
            groups = self.saturation / (1.0 + _ratio(config))
            return self.pair_rate * max(1.0, min(config.producers, groups))
        counts = sorted(measured)
        p = config.producers
        if p >= counts[-1]:
            return measured[counts[-1]]
        if p <= counts[0]:
            return measured[counts[0]] * p / counts[0]
        logs = np.log(counts)
        return float(np.exp(np.interp(math.log(p), logs, np.log([measured[n] for n in counts]))))

    def events(self, config: Config) -> int:
        """Events per producer for a sample of `config`."""
        rate = self.rate(config)
        if rate is None or self.pair_rate is None:
            return self.events_per_pair
        wanted = self.sample_seconds * rate / config.producers
        # The fewest events a producer should move yields to the sample's length: many
        # producers under contention would otherwise run samples of seconds.
        floor = min(self.min_events, MAX_STRETCH * wanted)
        return int(min(self.max_events, max(floor, wanted)))

    def seconds(self, config: Config) -> float:
        """The timed part of one sample of `config`."""
        rate = self.rate(config)
        if rate is None or rate <= 0:
            return self.sample_seconds
        return self.events(config) * config.producers / rate

    def call_seconds(self, configs: Sequence[Config], rounds: int) -> float:
        """What a call should take: every configuration's samples, with their start-up."""
        return rounds * sum(self.seconds(c) for c in configs) * SAMPLE_OVERHEAD
