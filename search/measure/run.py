"""The run stage: one plan through one benchmark binary, in one process, as Google Benchmark JSON.

Nothing else of ours runs meanwhile: the parent only waits. A binary that crashes or hangs
(the harness's watchdog aborts a sample past its deadline; we also kill past an outer timeout)
is not an exception: the candidate that was running is found by running each candidate of the
plan alone, it gets its status, and the plan runs again without it.
"""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hspc_gen.model import ChannelParams, Status
from hspc_gen.search.records import AA_PREFIX, Plan, RunResult, Sample, is_baseline
from hspc_gen.target import Workload

SAMPLE_DEADLINE_SECONDS = 10.0  # the harness aborts a sample that runs longer: a hang
PROCESS_GRACE_SECONDS = 30.0  # beyond the plan's expected time, before we kill it


@dataclass(frozen=True)
class Invocation:
    """How to run one batch's binary: the executable, the workload and each candidate's CPUs."""

    executable: Path
    workload: Workload
    params: Mapping[str, ChannelParams]  # candidate id -> params
    seconds_per_sample: float = 0.05
    kind: str = "throughput"  # or "latency": paced single events, push-to-pop time


# The latency objective's paced load: this much producer work between single events, so the
# channel is idle when each event arrives (push-to-pop time, not queueing delay).
LATENCY_PACE_NS = 2000.0


def _line(head: str, plan: Plan, cpus: tuple[int, int], w: Workload) -> str:
    """`head` is NAME KIND VARIANT; the rest of the line is the sample's size, CPUs and work."""
    pace = f" pace_ns={LATENCY_PACE_NS:g}" if " latency " in head else ""
    return (
        f"{head} {plan.events_per_sample} 1 {cpus[0]},{cpus[1]} "
        f"producer_ns={w.producer_ns:g} consumer_ns={w.consumer_ns:g} "
        f"consumer_bytes={w.consumer_bytes}{pace}"
    )


def plan_text(plan: Plan, invocation: Invocation) -> str:
    """The harness's plan: one line per sample, rounds in order, each round in its own order."""
    incumbent = invocation.params[plan.incumbent]
    home = (incumbent.producer_cpu, incumbent.consumer_cpu)
    lines = [f"# seed {plan.seed}, rounds {plan.first_round}..{plan.first_round + plan.rounds - 1}"]
    for offset, order in enumerate(plan.order):
        round_number = plan.first_round + offset
        for arm in order:
            name = f"r{round_number}/{arm}"
            if is_baseline(arm):
                lines.append(
                    _line(f"{name} {arm} {plan.incumbent}", plan, home, invocation.workload)
                )
                continue
            variant = arm.removeprefix(AA_PREFIX)
            p = invocation.params[variant]
            cpus = (p.producer_cpu, p.consumer_cpu)
            head = f"{name} {invocation.kind} {variant}"
            lines.append(_line(head, plan, cpus, invocation.workload))
    return "\n".join(lines) + "\n"


def _sample(entry: Mapping[str, Any]) -> Sample | None:
    name = str(entry.get("run_name") or entry["name"])
    head, _, rest = name.partition("/")
    if entry.get("run_type") == "aggregate" or not head.startswith("r"):
        return None
    arm = rest.split("/")[0]
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[str(entry.get("time_unit", "ns"))]
    return Sample(
        arm=arm,
        round=int(head[1:]),
        events=int(entry["events"]),
        wall_ns=float(entry["real_time"]) * scale,
        cpu_ns_producer=float(entry["cpu_ns_producer"]),
        cpu_ns_consumer=float(entry["cpu_ns_consumer"]),
        nivcsw_producer=round(float(entry["nivcsw_producer"])),
        nivcsw_consumer=round(float(entry["nivcsw_consumer"])),
        migrations=round(float(entry["migrations"])),
        verified=float(entry["verified"]) >= 1.0,
        latency_ns=float(entry["latency_p50_ns"]) if "latency_p50_ns" in entry else None,
    )


def parse_samples(document: Mapping[str, Any]) -> tuple[Sample, ...]:
    samples = (_sample(entry) for entry in document.get("benchmarks", []))
    return tuple(s for s in samples if s is not None)


def _status_of(code: int, stderr: str) -> Status:
    if code == 0:
        return Status.ok
    if "deadline" in stderr or code == -signal.SIGKILL:
        return Status.timeout
    return Status.crashed


def _execute(plan: Plan, invocation: Invocation) -> RunResult:
    expected = plan.rounds * len(plan.order[0]) * invocation.seconds_per_sample if plan.order else 0
    with tempfile.TemporaryDirectory(prefix="hspc-run-") as tmp:
        plan_path, out_path = Path(tmp) / "plan.txt", Path(tmp) / "out.json"
        plan_path.write_text(plan_text(plan, invocation), encoding="utf-8")
        argv = [
            str(invocation.executable),
            f"--plan={plan_path}",
            f"--deadline_s={SAMPLE_DEADLINE_SECONDS}",
            f"--benchmark_out={out_path}",
            "--benchmark_out_format=json",
            "--benchmark_format=json",
        ]
        try:
            done = subprocess.run(
                argv,
                check=False,
                capture_output=True,
                text=True,
                timeout=expected + PROCESS_GRACE_SECONDS,
            )
        except subprocess.TimeoutExpired:
            return RunResult(Status.timeout, (), "killed: the plan ran past its time")
        status = _status_of(done.returncode, done.stderr)
        if status is not Status.ok or not out_path.exists():
            return RunResult(status if status is not Status.ok else Status.crashed, (), done.stderr)
        samples = parse_samples(json.loads(out_path.read_text(encoding="utf-8")))
    wrong = {s.arm.removeprefix(AA_PREFIX) for s in samples if not s.verified}
    return RunResult(Status.ok, samples, done.stderr, dict.fromkeys(wrong, Status.wrong_answer))


def _alone(plan: Plan, arm: str) -> Plan:
    order = ((arm,),)
    return Plan(plan.batch, (), 1, plan.events_per_sample, plan.seed, order, arm, plan.first_round)


def without_arms(plan: Plan, culprits: set[str]) -> Plan:
    def keep(arm: str) -> bool:
        return arm.removeprefix(AA_PREFIX) not in culprits

    order = tuple(tuple(a for a in rnd if keep(a)) for rnd in plan.order)
    return Plan(
        plan.batch,
        plan.baselines,
        plan.rounds,
        plan.events_per_sample,
        plan.seed,
        order,
        plan.incumbent,
        plan.first_round,
    )


def run_plan(plan: Plan, invocation: Invocation) -> RunResult:
    """Run `plan`; a candidate that crashes or hangs is isolated, recorded, and left out."""
    result = _execute(plan, invocation)
    if result.status is Status.ok:
        return result
    culprits: dict[str, Status] = {}
    for arm in _candidates(plan.order):
        alone = _execute(_alone(plan, arm), invocation)
        if alone.status is not Status.ok:
            culprits[arm] = alone.status
    if not culprits or plan.incumbent in culprits:
        return RunResult(result.status, (), result.log, culprits)
    rerun = _execute(without_arms(plan, set(culprits)), invocation)
    return RunResult(rerun.status, rerun.samples, result.log, {**rerun.arm_status, **culprits})


def _candidates(order: Sequence[Sequence[str]]) -> list[str]:
    arms = {a for rnd in order for a in rnd if not is_baseline(a) and not a.startswith(AA_PREFIX)}
    return sorted(arms)
