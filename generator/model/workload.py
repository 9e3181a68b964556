"""The work per event, as the stages take it: a frozen value that target/app.py builds from
app.yaml's `workload` section (checked there, by pydantic); the search, the thread search and the
bench take this value and never the app.yaml model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Workload:
    """What the producer and the consumer do per event: synthetic work (`producer_ns`;
    `consumer_ns` and `consumer_bytes`) or the user's own C++ file per side, never both. Stage
    One runs `Workload()`, the idealised producer and consumer that only move events."""

    producer_ns: float = 0.0
    consumer_ns: float = 0.0
    consumer_bytes: int = 0
    producer_source: Path | None = None
    consumer_source: Path | None = None

    @property
    def expected_ns_per_event(self) -> float:
        """A guess before measuring, to size probes and timeouts: the slower side's synthetic
        work, at least 2 ns, and at least 1 µs when the app's own (unmeasured) code runs."""
        guess = max(self.producer_ns, self.consumer_ns, 2.0)
        if self.producer_source or self.consumer_source:
            guess = max(guess, 1000.0)
        return guess

    def to_json(self) -> dict[str, object]:
        """The value as app.yaml's keys hold it, paths as text: what record keys hash, so a
        record measured with this work is never reused for other work."""
        return {
            "producer_ns": self.producer_ns,
            "consumer_ns": self.consumer_ns,
            "consumer_bytes": self.consumer_bytes,
            "producer_source": _text(self.producer_source),
            "consumer_source": _text(self.consumer_source),
        }


def _text(path: Path | None) -> str | None:
    return None if path is None else str(path)
