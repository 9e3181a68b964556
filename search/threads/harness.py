"""The real `Measure`: thread configurations timed by the benchmark harness's `fanout` kind.

One call runs `rounds` rounds in one process, each timing every configuration once in a seeded
shuffled order (`fanout` with P producers, each handing whole buffers round robin to its own
consumers; one producer and one consumer is the plain pair). Pinned configurations pass their
CPUs; unpinned ones leave the scheduler free.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hspc_gen.search.run import SAMPLE_DEADLINE_SECONDS, parse_samples
from hspc_gen.search.threads.measure import Config, ThreadSample
from hspc_gen.target import Workload

PROCESS_TIMEOUT_SECONDS = 600.0


class MeasureError(Exception):
    """The benchmark could not measure a configuration (crashed, hung, or timed out)."""


@dataclass
class HarnessMeasure:
    """Measures configurations with `executable`'s variant `variant` (the tuned channel)."""

    executable: Path
    variant: str
    workload: Workload
    events_per_producer: int
    seed: int
    calls: int = field(default=0, init=False)

    def _line(self, round_number: int, index: int, config: Config) -> str:
        w = self.workload
        cpus = "+".join(map(str, (*config.producer_cpus, *config.consumer_cpus)))
        return (
            f"r{round_number}/t{index} fanout {self.variant} {self.events_per_producer} 1 - "
            f"producers={config.producers} consumers={config.consumers} "
            f"producer_ns={w.producer_ns:g} consumer_ns={w.consumer_ns:g} "
            f"consumer_bytes={w.consumer_bytes}" + (f" cpus={cpus}" if config.pinned else "")
        )

    def plan(self, configs: Sequence[Config], rounds: int) -> str:
        rng = np.random.default_rng([self.seed, self.calls])
        lines = [f"# thread search call {self.calls}: {len(configs)} configurations"]
        for r in range(rounds):
            for index in rng.permutation(len(configs)):
                lines.append(self._line(r, int(index), configs[int(index)]))
        return "\n".join(lines) + "\n"

    def __call__(
        self, configs: Sequence[Config], rounds: int
    ) -> Mapping[Config, Sequence[ThreadSample]]:
        text = self.plan(configs, rounds)
        self.calls += 1
        with tempfile.TemporaryDirectory(prefix="hspc-threads-") as tmp:
            plan, out = Path(tmp) / "plan.txt", Path(tmp) / "out.json"
            plan.write_text(text, encoding="utf-8")
            argv = [
                str(self.executable),
                f"--plan={plan}",
                f"--deadline_s={SAMPLE_DEADLINE_SECONDS}",
                f"--benchmark_out={out}",
                "--benchmark_out_format=json",
                "--benchmark_format=json",
            ]
            try:
                done = subprocess.run(
                    argv,
                    capture_output=True,
                    text=True,
                    timeout=PROCESS_TIMEOUT_SECONDS,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise MeasureError("the thread search's benchmark ran past its time") from None
            if done.returncode != 0 or not out.exists():
                raise MeasureError(f"the thread search's benchmark failed: {done.stderr[-500:]}")
            document = json.loads(out.read_text(encoding="utf-8"))
        return _by_config(document, configs)


def _by_config(
    document: Mapping[str, Any], configs: Sequence[Config]
) -> dict[Config, list[ThreadSample]]:
    counters = {  # by "r<round>/t<index>": each sample's own voluntary switches and waits
        "/".join(str(entry["name"]).split("/")[:2]): entry
        for entry in document.get("benchmarks", [])
        if isinstance(entry, dict)
    }
    out: dict[Config, list[ThreadSample]] = {c: [] for c in configs}
    for sample in parse_samples(document):
        index = int(sample.arm.removeprefix("t"))
        extra = counters.get(f"r{sample.round}/{sample.arm}", {})
        voluntary = float(extra.get("nvcsw_producer", 0)) + float(extra.get("nvcsw_consumer", 0))
        out[configs[index]].append(
            ThreadSample(sample, round(voluntary), float(extra.get("wait_ns", 0.0)))
        )
    return out
