"""The toolchain: a batch -> rendered Meson project (`prepare`) -> binary (`build`) -> plan
results (`run`), three explicit steps (TVM's builder and runner split).

The record key is known from the rendered sources alone, so the search can answer a batch from
its records without building anything; it calls `build` only when a plan must be measured. Tests
stand in a simulated toolchain with the same three methods.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from hspc_gen.app_files import headers_digest
from hspc_gen.model import ChannelParams, Objective, Status
from hspc_gen.model.workload import Workload
from hspc_gen.search.measure.build import JOBS, MESON_OPTIONS, BuildResult, Project, build
from hspc_gen.search.measure.harness import PACED_KIND, Invocation
from hspc_gen.search.measure.plan import Plan, RunResult
from hspc_gen.search.measure.run import run_plan, without_arms
from hspc_gen.search.records.samples import RecordKey
from hspc_gen.search.strategies.base import Batch

FLAGS = " ".join(MESON_OPTIONS)


@dataclass(frozen=True)
class Prepared:
    """A batch rendered: what its records are keyed by, and what a build would compile."""

    batch: Batch
    workload: Workload
    key: RecordKey
    build_points: int = 0  # compile-time points a build would compile (for the time estimate)
    kinds: tuple[str, ...] = ()  # the sample kinds its binary can run (): the search's


THREAD_KINDS = ("fanout",)
"""What the thread search runs: P producers, each handing buffers to its K consumers."""


class Renderer(Protocol):
    """The render stage, as the toolchain calls it (the generator's batch_project.BatchProjects):
    the search never imports render."""

    def files(
        self,
        candidates: Sequence[tuple[str, ChannelParams]],
        event_bytes: int,
        workload: Workload,
        max_latency_ns: int,
        *,
        points_per_unit: int,
        kinds: tuple[str, ...],
    ) -> tuple[dict[str, str], dict[str, str]]:
        """The project's files (relative path -> text), and each candidate's translation unit."""
        ...

    def compiled_points(self, candidates: Sequence[tuple[str, ChannelParams]]) -> int:
        """How many compile-time points the candidates are (their CPUs left out)."""
        ...


class Toolchain(Protocol):
    def prepare(self, batch: Batch, workload: Workload, kinds: tuple[str, ...] = ()) -> Prepared:
        """Render the batch's project: its sources and so its record key. Builds nothing.
        `kinds`: the sample kinds its binary must run (by default, what the search runs)."""
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
    event_bytes: int
    renderer: Renderer
    objective: Objective = Objective.throughput
    max_latency_ns: int = 0  # the channel's latency bound (0: none), in every variant
    jobs: int = JOBS  # compilers run at once (the build's ninja -j): units are spread over them

    def project(
        self,
        batch: Batch,
        workload: Workload,
        ids: tuple[str, ...],
        kinds: tuple[str, ...],
        *,
        grouped: bool = True,
    ) -> Project:
        """The batch's sources for the candidates `ids`: a few compile-time points to a unit
        (`grouped`), or one each, so that a point that does not compile is found alone. Only
        the sample kinds `kinds` are compiled: each costs a compile per point."""
        chosen = tuple((c.id, c.params) for c in batch.candidates if c.id in ids)
        points = points_per_unit(len(chosen), self.jobs) if grouped else 1
        files, sources = self.renderer.files(
            chosen,
            self.event_bytes,
            workload,
            self.max_latency_ns,
            points_per_unit=points,
            kinds=kinds,
        )
        return Project(files, sources)

    def search_kinds(self) -> tuple[str, ...]:
        """The objective's sample kind, and the paced kind that checks a latency bound."""
        kind = self.sample_kind()
        return (kind,) if kind == PACED_KIND or not self.max_latency_ns else (kind, PACED_KIND)

    def prepare(self, batch: Batch, workload: Workload, kinds: tuple[str, ...] = ()) -> Prepared:
        kinds = kinds or self.search_kinds()
        project = self.project(batch, workload, tuple(c.id for c in batch.candidates), kinds)
        key = RecordKey(
            self.fingerprint, self.measured_hash(project, workload), self.compiler, FLAGS
        )
        points = self.renderer.compiled_points([(c.id, c.params) for c in batch.candidates])
        return Prepared(batch, workload, key, points, kinds)

    def build(self, prepared: Prepared) -> BuildResult:
        """The batch's binary, a few points to a unit; when one does not compile, built again a
        point to a unit, so that only the points that fail are left out (and named)."""
        batch, workload, kinds = prepared.batch, prepared.workload, prepared.kinds
        ids, folder = [c.id for c in batch.candidates], self.builds_dir()
        built = build(lambda ids: self.project(batch, workload, tuple(ids), kinds), ids, folder)
        if built.status is Status.ok and not built.failed:
            return built
        one_each = functools.partial(self.project, batch, workload, kinds=kinds, grouped=False)
        return build(lambda ids: one_each(tuple(ids)), ids, folder)

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
        """What a record measured: the sources and the local headers the app's include, and what
        the plan tells the binary at run time (the work per event, the sample kind), so a record
        is never reused for other work."""
        runtime = json.dumps([workload.to_json(), self.sample_kind()], sort_keys=True)
        headers = headers_digest(
            p for p in (workload.producer_source, workload.consumer_source) if p
        )
        measured = f"{project.source_hash}\0{runtime}" + (f"\0{headers}" if headers else "")
        return hashlib.sha256(measured.encode()).hexdigest()[:16]


MAX_POINTS_PER_UNIT = 8
"""Compile-time points in one translation unit, at most: parsing the headers is most of a unit's
compile time: 16 points build in 4.2 s as two units of eight, 8.2 s as sixteen units (g++ 12
-O2, two cores, throughput kind only), while enough units remain to keep every compiler busy."""


def points_per_unit(points: int, jobs: int) -> int:
    """How many points share a unit: the most that still leaves a unit per compiler, at most
    eight."""
    return max(1, min(MAX_POINTS_PER_UNIT, math.ceil(points / max(1, jobs))))


def first_error(log: str) -> str:
    """The compiler's first error line in a build log (the whole last line when there is none)."""
    lines = log.strip().splitlines()
    return next((line for line in lines if ": error: " in line), lines[-1] if lines else "")
