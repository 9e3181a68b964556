"""The one count the thread search moves, and how a count becomes a configuration."""

from __future__ import annotations

from dataclasses import dataclass

from hspc_gen.search.threads.measure import Config


@dataclass(frozen=True)
class Axis:
    """`kind` says which count moves: `groups` (producers, each with `other` consumers),
    `producers` (consumers fixed at `other`) or `consumers` (producers fixed at `other`)."""

    kind: str
    low: int
    high: int
    start: int
    other: int

    def config(self, n: int) -> Config:
        if self.kind == "groups":
            return Config(n, n * self.other)
        if self.kind == "producers":
            return Config(n, self.other)
        return Config(self.other, n)

    def count(self, config: Config) -> int:
        return config.consumers if self.kind == "consumers" else config.producers

    def first(self) -> int:
        return min(max(self.start, self.low), self.high)

    def grid(self, step: float) -> tuple[int, ...]:
        """Geometric steps of `step` up and down from the start (so the first step is a whole
        one), and both ends."""
        points = {self.low, self.high, self.first()}
        up = down = float(self.first())
        while up < self.high or down > self.low:
            up, down = up * step, down / step
            points.update({round(up), round(down)})
        return tuple(sorted(p for p in points if self.low <= p <= self.high))
