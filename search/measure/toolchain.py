"""The real toolchain: a batch -> rendered Meson project -> (lazily) built binary -> plan runner.

The record key is known from the rendered sources alone, so a batch whose every plan is in the
record store is never built.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from hspc_gen.errors import UserError
from hspc_gen.model import Objective, Status
from hspc_gen.render import AppWork, BenchVariant, bench_source, compiled_id, render_bench_files
from hspc_gen.search.build import MESON_OPTIONS, BuildResult, Project, build
from hspc_gen.search.records import Plan, RecordKey, RunResult
from hspc_gen.search.run import Invocation, run_plan, without_arms
from hspc_gen.search.strategies.base import Batch
from hspc_gen.search.tune import Prepared
from hspc_gen.target import Workload

FLAGS = " ".join(MESON_OPTIONS)


@dataclass(frozen=True)
class RealToolchain:
    fingerprint: str
    compiler: str
    cache_dir: Path
    spin_ns: int
    event_bytes: int
    objective: Objective = Objective.throughput

    def project(self, batch: Batch, workload: Workload, ids: tuple[str, ...]) -> Project:
        variants = tuple(BenchVariant(c.id, c.params) for c in batch.candidates if c.id in ids)
        files = render_bench_files(variants, self.event_bytes, self.spin_ns, app_work(workload))
        return Project(files, {v.id: bench_source(compiled_id(v)) for v in variants})

    def __call__(self, batch: Batch, workload: Workload, baselines: tuple[str, ...]) -> Prepared:
        ids = tuple(c.id for c in batch.candidates)
        project = self.project(batch, workload, ids)
        key = RecordKey(
            self.fingerprint, self.measured_hash(project, workload), self.compiler, FLAGS
        )
        units = sum(1 for name in project.files if name.startswith("v_"))
        return Prepared(key, _LazyRunner(self, batch, workload), build_units=units)

    def executable(self, batch: Batch, workload: Workload) -> Path:
        """The batch's benchmark binary, built now (or found in the build cache)."""
        ids = [c.id for c in batch.candidates]
        built = build(
            lambda subset: self.project(batch, workload, tuple(subset)),
            ids,
            self.builds_dir(),
        )
        if built.executable is None or built.failed:
            raise UserError(f"the tuned channel's benchmark did not build:\n{built.log[-2000:]}")
        return built.executable

    def builds_dir(self) -> Path:
        """Builds by compiler, then by sources: after a compiler upgrade nothing old is reused."""
        compiler = hashlib.sha256(f"{self.compiler}\0{FLAGS}".encode()).hexdigest()[:12]
        return self.cache_dir / "builds" / compiler

    def sample_kind(self) -> str:
        return "latency" if self.objective is Objective.latency else "throughput"

    def measured_hash(self, project: Project, workload: Workload) -> str:
        """What a record measured: the sources, and what the plan tells the binary at run time
        (the work per event, the sample kind), so a record is never reused for other work."""
        runtime = json.dumps([workload.model_dump(mode="json"), self.sample_kind()], sort_keys=True)
        digest = hashlib.sha256(f"{project.source_hash}\0{runtime}".encode()).hexdigest()
        return digest[:16]


def app_work(workload: Workload) -> AppWork:
    """The app's source files for the bench project (one file when both sides share it)."""
    sources = {workload.producer_source, workload.consumer_source} - {None}
    files = tuple(
        (f"app_work_{i}.cpp", path.read_text(encoding="utf-8"))
        for i, path in enumerate(sorted(p for p in sources if p is not None))
    )
    folders = tuple(sorted({str(path.parent) for path in sources if path is not None}))
    producer, consumer = bool(workload.producer_source), bool(workload.consumer_source)
    return AppWork(files, producer, consumer, folders)


class _LazyRunner:
    """Builds the batch's binary on the first plan that needs measuring, then runs plans on it."""

    def __init__(self, toolchain: RealToolchain, batch: Batch, workload: Workload) -> None:
        self.toolchain, self.batch, self.workload = toolchain, batch, workload
        self.built: BuildResult | None = None

    def _build(self) -> BuildResult:
        if self.built is None:
            ids = [c.id for c in self.batch.candidates]
            self.built = build(
                lambda subset: self.toolchain.project(self.batch, self.workload, tuple(subset)),
                ids,
                self.toolchain.builds_dir(),
            )
        return self.built

    def __call__(self, plan: Plan) -> RunResult:
        built = self._build()
        failed = dict.fromkeys(built.failed, Status.compile_error)
        if built.executable is None or plan.incumbent in failed:
            return RunResult(Status.compile_error, (), built.log[-4000:], failed)
        params = {c.id: c.params for c in self.batch.candidates if c.id not in failed}
        live = without_arms(plan, set(failed)) if failed else plan
        kind = self.toolchain.sample_kind()
        # A sample's expected time, generously, for the outer timeout of the whole plan.
        seconds = max(0.05, 3e-9 * plan.events_per_sample * self.workload.expected_ns_per_event)
        invocation = Invocation(built.executable, self.workload, params, seconds, kind)
        result = run_plan(live, invocation)
        return RunResult(result.status, result.samples, result.log, {**result.arm_status, **failed})
