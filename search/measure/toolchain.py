"""The toolchain: a batch -> rendered Meson project (`prepare`) -> binary (`build`) -> plan
results (`run`), three explicit steps (TVM's builder and runner split).

The record key is known from the rendered sources alone, so the search can answer a batch from
its records without building anything; it calls `build` only when a plan must be measured. Tests
stand in a simulated toolchain with the same three methods.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from hspc_gen.model import Objective, Status
from hspc_gen.render import AppWork, BenchVariant, bench_source, compiled_id, render_bench_files
from hspc_gen.search.measure.build import MESON_OPTIONS, BuildResult, Project, build
from hspc_gen.search.measure.harness import PACED_KIND, Invocation
from hspc_gen.search.measure.run import run_plan, without_arms
from hspc_gen.search.plan import Plan, RunResult
from hspc_gen.search.records import RecordKey
from hspc_gen.search.strategies.base import Batch
from hspc_gen.target import Workload

FLAGS = " ".join(MESON_OPTIONS)


@dataclass(frozen=True)
class Prepared:
    """A batch rendered: what its records are keyed by, and what a build would compile."""

    batch: Batch
    workload: Workload
    key: RecordKey
    build_units: int = 0  # translation units a build would compile (for the time estimate)


class Toolchain(Protocol):
    def prepare(self, batch: Batch, workload: Workload) -> Prepared:
        """Render the batch's project: its sources and so its record key. Builds nothing."""
        ...

    def build(self, prepared: Prepared) -> BuildResult:
        """Compile the batch; candidates that do not compile are left out and reported."""
        ...

    def run(self, built: BuildResult, prepared: Prepared, plan: Plan) -> RunResult:
        """Run one plan on the built binary (a failed build answers with its compile_error)."""
        ...


@dataclass(frozen=True)
class RealToolchain:
    fingerprint: str
    compiler: str
    cache_dir: Path
    spin_ns: int
    event_bytes: int
    objective: Objective = Objective.throughput
    max_latency_ns: int = 0  # the channel's latency bound (0: none), in every variant

    def project(self, batch: Batch, workload: Workload, ids: tuple[str, ...]) -> Project:
        variants = tuple(BenchVariant(c.id, c.params) for c in batch.candidates if c.id in ids)
        files = render_bench_files(
            variants, self.event_bytes, self.spin_ns, app_work(workload), self.max_latency_ns
        )
        return Project(files, {v.id: bench_source(compiled_id(v)) for v in variants})

    def prepare(self, batch: Batch, workload: Workload) -> Prepared:
        project = self.project(batch, workload, tuple(c.id for c in batch.candidates))
        key = RecordKey(
            self.fingerprint, self.measured_hash(project, workload), self.compiler, FLAGS
        )
        units = sum(1 for name in project.files if name.startswith("v_"))
        return Prepared(batch, workload, key, units)

    def build(self, prepared: Prepared) -> BuildResult:
        batch, workload = prepared.batch, prepared.workload
        return build(
            lambda subset: self.project(batch, workload, tuple(subset)),
            [c.id for c in batch.candidates],
            self.builds_dir(),
        )

    def run(self, built: BuildResult, prepared: Prepared, plan: Plan) -> RunResult:
        failed = dict.fromkeys(built.failed, Status.compile_error)
        why = {arm: first_error(log) for arm, log in built.failed.items()}
        if built.executable is None or plan.incumbent in failed:
            return RunResult(Status.compile_error, (), built.log[-4000:], failed, causes=why)
        batch, workload = prepared.batch, prepared.workload
        params = {c.id: c.params for c in batch.candidates if c.id not in failed}
        live = without_arms(plan, set(failed)) if failed else plan
        # A sample's expected time, generously: the watchdog's hang and the plan's timeout.
        seconds = max(0.05, 3 * plan.sample_seconds)
        invocation = Invocation(built.executable, workload, params, seconds, self.sample_kind())
        result = run_plan(live, invocation)
        statuses = {**result.arm_status, **failed}
        causes = {**result.causes, **why}
        return dataclasses.replace(result, arm_status=statuses, causes=causes)

    def builds_dir(self) -> Path:
        """Builds by compiler, then by sources: after a compiler upgrade nothing old is reused."""
        compiler = hashlib.sha256(f"{self.compiler}\0{FLAGS}".encode()).hexdigest()[:12]
        return self.cache_dir / "builds" / compiler

    def sample_kind(self) -> str:
        """The latency objective times push to pop under a paced load with no flush per event
        (the buffer fill and the latency bound decide), as an application sees it."""
        return PACED_KIND if self.objective is Objective.latency else "throughput"

    def measured_hash(self, project: Project, workload: Workload) -> str:
        """What a record measured: the sources, and what the plan tells the binary at run time
        (the work per event, the sample kind), so a record is never reused for other work."""
        runtime = json.dumps([workload.model_dump(mode="json"), self.sample_kind()], sort_keys=True)
        digest = hashlib.sha256(f"{project.source_hash}\0{runtime}".encode()).hexdigest()
        return digest[:16]


def first_error(log: str) -> str:
    """The compiler's first error line in a build log (the whole last line when there is none)."""
    lines = log.strip().splitlines()
    return next((line for line in lines if ": error: " in line), lines[-1] if lines else "")


def app_work(workload: Workload) -> AppWork:
    """The app's source files for the bench project (one file when both sides share it)."""
    sources = sorted({p for p in (workload.producer_source, workload.consumer_source) if p})
    files = tuple(
        (f"app_work_{i}.cpp", path.read_text(encoding="utf-8")) for i, path in enumerate(sources)
    )
    folders = tuple(sorted({str(path.parent) for path in sources}))
    producer, consumer = bool(workload.producer_source), bool(workload.consumer_source)
    return AppWork(files, producer, consumer, folders)
