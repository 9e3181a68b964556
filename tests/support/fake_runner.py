"""A runner that replays recorded samples, so the whole search runs without a compiler.

The recordings live in tests/data/records/ in the record store's own format (one file per host
fingerprint, one JSON line per arm). `ReplayRunner.run(plan)` answers a plan as the real run stage
would: for every round of the plan, one sample per arm of that round, taken from the recording of
that arm for that (global) round number. An arm without a recording gets the status `skipped`.

The spaces the recordings were made for are defined here, so the generator script
(tests/data/records/generate.py) and the tests agree on them; so is the simulated toolchain
(`SimulatedToolchain`), and the channel's search run over it as the tests run it (`settings`,
`machinery`, `run_search`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from hspc_gen.model import ChannelParams, Effort, Objective, PinThreads, Primitive, Status
from hspc_gen.model.workload import Workload
from hspc_gen.search.batch import Machinery
from hspc_gen.search.channel import Searched, search
from hspc_gen.search.measure.build import BuildResult
from hspc_gen.search.measure.plan import Plan, RunResult
from hspc_gen.search.measure.toolchain import Prepared
from hspc_gen.search.records.samples import RecordKey, Sample, base_of
from hspc_gen.search.records.store import RecordStore
from hspc_gen.search.strategies.base import Batch
from hspc_gen.search.strategies.placements import HostShape
from hspc_gen.search.strategies.space import Choice, PowerOfTwo, Space
from hspc_gen.search.tune import STAGE_ONE_BASELINES, STAGE_TWO_BASELINES, Settings, StageSpec

RECORDS_DIR = Path(__file__).resolve().parents[1] / "data" / "records"
FINGERPRINT = "model-2vcpu-kvm-epyc"
"""The recordings model this machine: 2 vCPUs of an AMD EPYC under KVM, shared with other jobs."""
COMPILER = "model"
FLAGS = "model"
STAGE_ONE_KEY = RecordKey(FINGERPRINT, "stage-one-model", COMPILER, FLAGS)
STAGE_TWO_KEY = RecordKey(FINGERPRINT, "stage-two-model", COMPILER, FLAGS)
EVENTS_PER_SAMPLE = 400_000
RECORDED_ROUNDS = 30
TRUTH_FILE = RECORDS_DIR / "truth.json"
KiB = 1024

HOST = HostShape(
    logical_cpus=2,
    allowed_cpus=(0, 1),
    cores=2,
    threads_per_core=1,
    sibling_pairs=(),
    llc_groups=((0, 1),),
    cache_line_bytes=64,
    l2_bytes=2 * 1024 * KiB,
)


def _shrunk(space: Space) -> Space:
    # Fewer padding and stack values than the real grids keep the exhaustive product (and so the
    # recording) small; both still hold a planted best value that is not the start point's.
    return dataclasses.replace(
        space,
        padding_bytes=Choice((0, 64, 128)),
        stack_offset_bytes=PowerOfTwo(32 * KiB, 64 * KiB, with_zero=True),
    )


def stage_one_space() -> Space:
    return _shrunk(
        Space.from_target(
            event_bytes=64,
            primitives=(Primitive.condvar,),
            max_buffer_memory=16 * KiB,
            pin_threads=PinThreads.never,
            host=HOST,
        )
    )


def stage_two_space() -> Space:
    return _shrunk(
        Space.from_target(
            event_bytes=64,
            primitives=tuple(Primitive),
            max_buffer_memory=16 * KiB,
            pin_threads=PinThreads.auto,
            host=HOST,
        )
    )


class ReplayRunner:
    """The run stage's interface (`run(plan) -> RunResult`) over a recorded store."""

    def __init__(self, key: RecordKey, records_dir: Path = RECORDS_DIR) -> None:
        self.key = key
        self.store = RecordStore(records_dir, key.fingerprint)
        self.plans: list[Plan] = []
        self._cache: dict[str, dict[int, Sample]] = {}

    def _recorded(self, arm: str) -> dict[int, Sample]:
        if arm not in self._cache:
            records = self.store.lookup(self.key, arm)
            self._cache[arm] = {s.round: s for r in records for s in r.samples}
        return self._cache[arm]

    def run(self, plan: Plan) -> RunResult:
        self.plans.append(plan)
        samples: list[Sample] = []
        missing: dict[str, Status] = {}
        for round_number, order in zip(plan.round_numbers(), plan.order, strict=True):
            for arm in order:
                sample = self._recorded(arm).get(round_number)
                if sample is None:
                    missing[arm] = Status.skipped
                    continue
                if sample.events != plan.events_per_sample:
                    raise ValueError(
                        f"{arm} was recorded with {sample.events} events per sample, the plan"
                        f" asks for {plan.events_per_sample}"
                    )
                samples.append(sample)
        log = "".join(f"no recording of {arm}\n" for arm in sorted(missing))
        return RunResult(Status.ok, tuple(samples), log, missing)

    @property
    def rounds_run(self) -> int:
        return sum(p.rounds for p in self.plans)

    @property
    def samples_run(self) -> int:
        return sum(len(order) for p in self.plans for order in p.order)


def truth(dataset: str) -> Mapping[str, Mapping[str, float]]:
    """The model's noise-free cost of each recorded candidate: arm -> {"ns", "cpu_ns"} per event."""
    data = json.loads(TRUTH_FILE.read_text(encoding="utf-8"))
    table = data[dataset]
    assert isinstance(table, dict)
    return table


def planted(dataset: str) -> Mapping[str, str]:
    """The planted optimum of a dataset: objective -> arm id."""
    data = json.loads(TRUTH_FILE.read_text(encoding="utf-8"))
    optimum = data["planted"][dataset]
    assert isinstance(optimum, dict)
    return optimum


class Simulated:
    """Samples drawn on the spot from a small noise model, for tests that need chosen costs.

    Every arm of a round shares that round's factor (as on the real machine), so paired ratios
    cancel it; each sample adds its own lognormal noise. Deterministic for a given seed.
    """

    def __init__(self, seed: int, round_sigma: float = 0.05) -> None:
        self.seed = seed
        self.round_sigma = round_sigma

    def _round_factor(self, round_number: int) -> float:
        rng = np.random.default_rng([self.seed, 0, round_number])
        return float(np.exp(rng.normal(0.0, self.round_sigma)))

    def sample(self, arm: str, ns: float, round_number: int, cost: Cost) -> Sample:
        digest = int.from_bytes(hashlib.sha256(arm.encode()).digest()[:8], "little")
        rng = np.random.default_rng([self.seed, 1, digest, round_number])
        wall = EVENTS_PER_SAMPLE * ns * self._round_factor(round_number)
        wall *= float(np.exp(rng.normal(0.0, cost.sigma)))
        consumer = wall * 0.99 if cost.spins else wall * 0.5
        return Sample(
            arm=arm,
            round=round_number,
            events=EVENTS_PER_SAMPLE,
            wall_ns=wall,
            cpu_ns_producer=wall * 0.95,
            cpu_ns_consumer=consumer,
            nivcsw_producer=0,
            nivcsw_consumer=0,
            migrations=0,
            verified=cost.verified,
            latency_ns=cost.latency_ns,
            latency_p99_ns=None if cost.latency_ns is None else 2 * cost.latency_ns,
        )

    def samples(self, arm: str, ns: float, rounds: int, cost: Cost | None = None) -> list[Sample]:
        return [self.sample(arm, ns, r, cost or Cost()) for r in range(rounds)]


@dataclasses.dataclass(frozen=True)
class Cost:
    """How an arm behaves under `Simulated`, beyond its mean ns per event."""

    sigma: float = 0.05
    spins: bool = False
    verified: bool = True
    latency_ns: float | None = None


class SimulatedRunner:
    """`run(plan)` from `Simulated`: arm -> mean ns per event (A/A copies cost what they copy)."""

    def __init__(
        self, ns: Mapping[str, float], seed: int = 1, costs: Mapping[str, Cost] | None = None
    ) -> None:
        self.sim = Simulated(seed)
        self.ns = ns
        self.costs = costs or {}
        self.plans: list[Plan] = []

    def run(self, plan: Plan) -> RunResult:
        self.plans.append(plan)
        out = []
        for round_number, order in zip(plan.round_numbers(), plan.order, strict=True):
            for arm in order:
                base = base_of(arm)
                cost = self.costs.get(base, Cost())
                out.append(self.sim.sample(arm, self.ns.get(base, 20.0), round_number, cost))
        return RunResult(Status.ok, tuple(out))


def model_ns(params: ChannelParams) -> float:
    """A host where padding 128, 4 buffers of 4 KiB and a futex win clearly."""
    ns = 10.0
    ns *= 1.0 if params.padding_bytes >= 128 else 1.35
    ns *= 1.0 + abs(params.buffers - 4) * 0.08
    ns *= 1.0 + abs(params.buffer_bytes.bit_length() - 13) * 0.1
    ns *= 1.0 if params.primitive is Primitive.futex else 1.2
    return ns


BROKEN = Primitive.mutex
"""This primitive "does not compile" in the simulated toolchain."""


class SimulatedToolchain:
    """The toolchain's three steps without a compiler: `prepare` keys a batch by its candidates,
    `build` finds BROKEN's candidates "failing to compile", `run` draws samples from model_ns.
    It counts builds and runs; `interrupt_after` raises KeyboardInterrupt like a user's ^C."""

    def __init__(self, interrupt_after: int | None = None) -> None:
        self.sim = Simulated(seed=5)
        self.runs = 0
        self.builds = 0
        self.interrupt_after = interrupt_after

    def prepare(self, batch: Batch, workload: Workload, kinds: tuple[str, ...] = ()) -> Prepared:
        ids = ",".join(sorted(c.id for c in batch.candidates)) + ",".join(kinds)
        key = RecordKey("fp", hashlib.sha1(ids.encode()).hexdigest()[:12], "c++ 12", "-O3")
        return Prepared(batch, workload, key, build_points=len(batch.candidates), kinds=kinds)

    def build(self, prepared: Prepared) -> BuildResult:
        self.builds += 1
        broken = {c.id: "error" for c in prepared.batch.candidates if c.params.primitive is BROKEN}
        return BuildResult(Status.ok, Path("/simulated"), "src", broken)

    def run(self, built: BuildResult, prepared: Prepared, plan: Plan) -> RunResult:
        self.runs += 1
        if self.interrupt_after is not None and self.runs > self.interrupt_after:
            raise KeyboardInterrupt
        params = {c.id: c.params for c in prepared.batch.candidates}
        samples: list[Sample] = []
        for number, order in zip(plan.round_numbers(), plan.order, strict=True):
            for arm in order:
                base = base_of(arm)
                if base in built.failed:
                    continue
                ns = model_ns(params[base]) if base in params else 9.0
                samples.append(self.sim.sample(arm, ns, number, Cost()))
        failed = dict.fromkeys(built.failed, Status.compile_error)
        return RunResult(Status.ok, tuple(samples), "", failed)


# ---- the channel's search over the simulated toolchain, as the tests run it ----


def settings(deadline: float = float("inf"), run: str = "quick:60s") -> Settings:
    bare = Workload()
    return Settings(
        objective=Objective.throughput,
        effort=Effort.quick,
        seed=7,
        search_deadline=deadline,
        oversubscribed=True,
        stages=(
            StageSpec("stage_one", bare, STAGE_ONE_BASELINES),
            StageSpec("stage_two", bare, STAGE_TWO_BASELINES),
        ),
        run=run,
    )


def machinery(store_dir: Path, toolchain: SimulatedToolchain) -> Machinery:
    return Machinery(RecordStore(store_dir, "fp"), toolchain)


def run_search(
    store_dir: Path, toolchain: SimulatedToolchain, s: Settings | None = None
) -> Searched:
    space = stage_two_space()
    return search(space, space.start(), s or settings(), machinery(store_dir, toolchain))
