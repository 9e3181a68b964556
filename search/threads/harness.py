"""Thread configurations timed by the benchmark harness's `fanout` kind, through the same
executor as the channel search (`search.measure.harness`).

One call runs `rounds` rounds in one process, each timing every configuration once in a seeded
shuffled order (`fanout` with P producers, each handing whole buffers round robin to its own
consumers; one producer and one consumer is the plain pair). Pinned configurations pass their
CPUs; unpinned ones leave the scheduler free. A process that fails raises `MeasureFailedError`,
which the thread session turns into a `ThreadFailure` value: it never leaves the thread search.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hspc_gen.model import Status
from hspc_gen.model.workload import Workload
from hspc_gen.search.measure.harness import execute, parse_samples, work_fields
from hspc_gen.search.threads.measure import Config, ThreadSample

PROCESS_TIMEOUT_SECONDS = 600.0


class MeasureFailedError(Exception):
    """The benchmark could not measure a call (it crashed, hung or timed out)."""

    def __init__(self, status: Status, log: str) -> None:
        super().__init__(f"{status}: {log}")
        self.status, self.log = status, log


@dataclass(frozen=True)
class HarnessMeasure:
    """Measures configurations with `executable`'s variant `variant` (the tuned channel)."""

    executable: Path
    variant: str
    workload: Workload
    seed: int

    def _line(self, round_number: int, index: int, config: Config, events: int) -> str:
        cpus = "+".join(map(str, (*config.producer_cpus, *config.consumer_cpus)))
        return (
            f"r{round_number}/t{index} fanout {self.variant} {events} 1 - "
            f"producers={config.producers} consumers={config.consumers} "
            f"{work_fields(self.workload)}" + (f" cpus={cpus}" if config.pinned else "")
        )

    def plan(
        self, configs: Sequence[Config], rounds: int, call: int, events: Mapping[Config, int]
    ) -> str:
        """Call `call`'s plan: its order depends on the seed and the call number only; each
        configuration's samples move its `events` per producer."""
        rng = np.random.default_rng([self.seed, call])
        lines = [f"# thread search call {call}: {len(configs)} configurations"]
        for r in range(rounds):
            for index in rng.permutation(len(configs)):
                config = configs[int(index)]
                lines.append(self._line(r, int(index), config, events[config]))
        return "\n".join(lines) + "\n"

    def measure(
        self, configs: Sequence[Config], rounds: int, call: int, events: Mapping[Config, int]
    ) -> dict[Config, list[ThreadSample]]:
        plan = self.plan(configs, rounds, call, events)
        done = execute(self.executable, plan, PROCESS_TIMEOUT_SECONDS)
        if done.status is not Status.ok:
            raise MeasureFailedError(done.status, done.log[-2000:])
        return by_config(done.document, configs, done.log)


def by_config(
    document: Mapping[str, Any], configs: Sequence[Config], log: str = ""
) -> dict[Config, list[ThreadSample]]:
    """The samples of a call, per configuration, with each sample's own voluntary switches and
    wait time (counters the channel search does not read). A sample that moved no events or
    failed its check fails the call: the search never reads a configuration that did not run
    as asked."""
    parsed = parse_samples(document)
    if parsed.failed:
        arm, status = min(parsed.failed.items())
        config = configs[int(arm.removeprefix("t"))]
        raise MeasureFailedError(status, f"{config.label}: {parsed.cause(arm)}\n{log[-2000:]}")
    counters = {  # by "r<round>/t<index>"
        "/".join(str(entry["name"]).split("/")[:2]): entry
        for entry in document.get("benchmarks", [])
        if isinstance(entry, dict)
    }
    out: dict[Config, list[ThreadSample]] = {c: [] for c in configs}
    for sample in parsed.samples:
        index = int(sample.arm.removeprefix("t"))
        extra = counters.get(f"r{sample.round}/{sample.arm}", {})
        voluntary = float(extra.get("nvcsw_producer", 0)) + float(extra.get("nvcsw_consumer", 0))
        out[configs[index]].append(
            ThreadSample(sample, round(voluntary), float(extra.get("wait_ns", 0.0)))
        )
    return out
