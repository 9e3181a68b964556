"""The benchmark harness as a process: its plan format, its Google Benchmark JSON, and the one
place that starts it.

A plan is a text file, one line per sample: `NAME KIND VARIANT EVENTS ...` (runtime/harness/plan.hpp
reads it). The harness times the samples in the order given and writes Google Benchmark JSON with
our counters (events, CPU time per role, context switches, migrations, verification). Nothing else
of ours runs meanwhile: the parent only waits. `execute` never raises for the benchmark's sake: a
crash, a hang or a missing output is a status.
"""

from __future__ import annotations

import json
import re
import signal
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hspc_gen.errors import UserError
from hspc_gen.model import ChannelParams, Status
from hspc_gen.model.workload import Workload
from hspc_gen.search.measure import process
from hspc_gen.search.measure.plan import Plan
from hspc_gen.search.records.samples import Sample, base_of, is_baseline, is_latency

SAMPLE_DEADLINE_SECONDS = 10.0  # the longest a sample may run before the harness aborts it
MIN_SAMPLE_DEADLINE_SECONDS = 1.0
DEADLINE_FACTOR = 20.0  # a sample is hung past this many times its expected length
PROCESS_GRACE_SECONDS = 5.0  # beyond the plan's expected time and one deadline: we kill it
# The latency objective's paced load: this much producer work between single events, so the
# channel is idle when each event arrives (push-to-pop time, not queueing delay).
LATENCY_PACE_NS = 2000.0
PACED_KIND = "paced"  # paced events with no flush each: the buffer fill and the channel's
# latency bound decide how long an event waits (the harness's `paced` kind)
PACED_EVENT_NS = 3 * LATENCY_PACE_NS  # a paced event's time, its hand-off included, generously
PACED_SAMPLE_EVENTS = 5000  # a latency arm's events: about SAMPLE_SECONDS of paced events


@dataclass(frozen=True)
class Executed:
    """One harness process: its status, its JSON (empty unless ok) and what it printed."""

    status: Status
    document: Mapping[str, Any] = field(default_factory=dict)
    log: str = ""


def execute(
    executable: Path,
    plan: str,
    timeout: float,
    deadline_s: float = SAMPLE_DEADLINE_SECONDS,
    cap_s: float = 0.0,
) -> Executed:
    """Run `executable` on the plan text: a sample past `deadline_s` is aborted by the
    harness's watchdog, the whole process killed past `timeout` seconds; a throughput sample
    stops early past `cap_s` (0: never), timed over the events it moved."""
    with tempfile.TemporaryDirectory(prefix="hspc-run-") as tmp:
        plan_path, out_path = Path(tmp) / "plan.txt", Path(tmp) / "out.json"
        plan_path.write_text(plan, encoding="utf-8")
        argv = [
            str(executable),
            f"--plan={plan_path}",
            f"--deadline_s={deadline_s:g}",
            f"--cap_s={cap_s:g}",
            f"--benchmark_out={out_path}",
            "--benchmark_out_format=json",
            "--benchmark_format=json",
        ]
        done = process.run(argv, timeout)
        if done.timed_out:
            return Executed(Status.timeout, log=f"killed: the plan ran past {timeout:.0f} s")
        if done.code is None:  # no arm owns a binary that cannot start: one clear message
            raise UserError(cannot_start(executable, done.start_error))
        status = _status_of(done.code, done.stderr)
        if status is Status.ok and not out_path.exists():
            status = Status.crashed
        if status is not Status.ok:
            return Executed(status, log=done.stderr)
        return Executed(Status.ok, json.loads(out_path.read_text(encoding="utf-8")), done.stderr)


LIST_TIMEOUT_SECONDS = 30.0


def cannot_start(executable: Path, reason: str) -> str:
    return (
        f"could not start the benchmark program {executable}: {reason} (the cache folder must"
        " allow running programs: not a noexec mount; --cache names another)"
    )


@dataclass(frozen=True)
class Listed:
    """A harness binary's `--list_variants`: the variants compiled in, or why it could not say
    (then `names` is empty and `failure` is the status and what it printed)."""

    names: frozenset[str]
    failure: tuple[Status, str] | None = None


def variants(executable: Path) -> Listed:
    """The variants a harness binary was compiled with (its `--list_variants`)."""
    done = process.run([str(executable), "--list_variants"], LIST_TIMEOUT_SECONDS)
    if done.code is None and not done.timed_out:
        raise UserError(cannot_start(executable, done.start_error))
    if not done.ok:
        status = Status.timeout if done.timed_out else Status.crashed
        said = done.stderr.strip()[-300:] or f"exit status {done.code}"
        return Listed(frozenset(), (status, f"--list_variants failed: {said}"))
    return Listed(frozenset(done.stdout.split()))


def _status_of(code: int, stderr: str) -> Status:
    if code == 0:
        return Status.ok
    if "deadline" in stderr or code == -signal.SIGKILL:
        return Status.timeout
    return Status.crashed


@dataclass(frozen=True)
class Invocation:
    """How to run one batch's binary: the executable, the workload and each candidate's CPUs."""

    executable: Path
    workload: Workload
    params: Mapping[str, ChannelParams]  # candidate id -> params
    seconds_per_sample: float = 0.05
    kind: str = "throughput"  # or "latency": paced single events, push-to-pop time

    @property
    def cap_s(self) -> float:
        """A throughput sample stops after its expected length, generously: a variant far slower
        than the one the samples were sized by is timed over fewer events, not taken as hung."""
        return self.seconds_per_sample

    @property
    def deadline_s(self) -> float:
        """Past this a sample is hung: many times its expected length, within [1 s, 10 s]."""
        hung = DEADLINE_FACTOR * self.seconds_per_sample
        return min(SAMPLE_DEADLINE_SECONDS, max(MIN_SAMPLE_DEADLINE_SECONDS, hung))

    def timeout(self, plan: Plan) -> float:
        """The plan's expected time, generously, plus a grace: past it the process is killed."""
        samples = sum(len(order) for order in plan.order)
        return samples * self.seconds_per_sample + self.deadline_s + PROCESS_GRACE_SECONDS


def work_fields(w: Workload) -> str:
    """The per-event work, as the plan line's key=value fields."""
    return (
        f"producer_ns={w.producer_ns:g} consumer_ns={w.consumer_ns:g} "
        f"consumer_bytes={w.consumer_bytes}"
    )


def plan_line(head: str, events: int, cpus: tuple[int, int], w: Workload) -> str:
    """`head` is NAME KIND VARIANT; the rest of the line is the sample's size, CPUs and work."""
    paced = any(f" {kind} " in head for kind in ("latency", PACED_KIND))
    pace = f" pace_ns={LATENCY_PACE_NS:g}" if paced else ""
    cpu_field = f"{cpus[0]},{cpus[1]}"
    return f"{head} {events} 1 {cpu_field} {work_fields(w)}{pace}"


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
                head = f"{name} {arm} {plan.incumbent}"
                lines.append(plan_line(head, plan.events_per_sample, home, invocation.workload))
                continue
            variant = base_of(arm)
            p = invocation.params[variant]
            kind = PACED_KIND if is_latency(arm) else invocation.kind
            head = f"{name} {kind} {variant}"
            # A latency arm beside throughput samples: as many paced events as fill a sample.
            events = plan.events_per_sample
            events = min(events, PACED_SAMPLE_EVENTS) if is_latency(arm) else events
            lines.append(
                plan_line(head, events, (p.producer_cpu, p.consumer_cpu), invocation.workload)
            )
    return "\n".join(lines) + "\n"


def _named(entry: Mapping[str, Any]) -> tuple[int, str] | None:
    """The round and arm of one of the harness's JSON entries (`r<round>/<arm>`); None for an
    aggregate row or another benchmark's."""
    name = str(entry.get("run_name") or entry["name"])
    head, _, rest = name.partition("/")
    if entry.get("run_type") == "aggregate" or not head.startswith("r"):
        return None
    return int(head[1:]), rest.split("/")[0]


def _sample(entry: Mapping[str, Any], round_number: int, arm: str) -> Sample | None:
    """The entry's sample; None when it moved no events (or took no time): nothing measured."""
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[str(entry.get("time_unit", "ns"))]
    events, wall_ns = int(entry["events"]), float(entry["real_time"]) * scale
    if events <= 0 or not wall_ns > 0:
        return None
    return Sample(
        arm=arm,
        round=round_number,
        events=events,
        wall_ns=wall_ns,
        cpu_ns_producer=float(entry["cpu_ns_producer"]),
        cpu_ns_consumer=float(entry["cpu_ns_consumer"]),
        nivcsw_producer=round(float(entry["nivcsw_producer"])),
        nivcsw_consumer=round(float(entry["nivcsw_consumer"])),
        migrations=round(float(entry["migrations"])),
        verified=float(entry["verified"]) >= 1.0,
        latency_ns=float(entry["latency_p50_ns"]) if "latency_p50_ns" in entry else None,
        latency_p99_ns=float(entry["latency_p99_ns"]) if "latency_p99_ns" in entry else None,
        delay_ns=_delay(entry),
    )


def _delay(entry: Mapping[str, Any]) -> float:
    """Both threads' time waiting for a CPU; -1 when either is not known."""
    sides = [float(entry.get(f"delay_ns_{role}", -1.0)) for role in ("producer", "consumer")]
    return -1.0 if min(sides) < 0 else sum(sides)


NO_EVENTS = "a sample moved no events (the harness could not run it: see its log)"
WRONG_ANSWER = "a sample lost, repeated, reordered or tore an event"


@dataclass(frozen=True)
class Parsed:
    """A finished harness run's samples, and its arms that failed within it: a sample that moved
    no events is dropped here (it never reaches the statistics) and fails its arm
    (`Status.no_samples`); an unverified sample stays, for the record, and fails its arm
    (`Status.wrong_answer`)."""

    samples: tuple[Sample, ...]
    failed: Mapping[str, Status]  # arm (as the plan names it) -> why

    def cause(self, arm: str) -> str:
        return NO_EVENTS if self.failed[arm] is Status.no_samples else WRONG_ANSWER


def parse_samples(document: Mapping[str, Any]) -> Parsed:
    samples, failed = [], {}
    for entry in document.get("benchmarks", []):
        if (named := _named(entry)) is None:
            continue
        sample = _sample(entry, *named)
        if sample is None:
            failed[named[1]] = Status.no_samples
            continue
        samples.append(sample)
        if not sample.verified:
            failed.setdefault(sample.arm, Status.wrong_answer)
    return Parsed(tuple(samples), failed)


def candidates_of(order: Sequence[Sequence[str]]) -> list[str]:
    """The candidates a plan runs (no baselines; A/A copies and latency arms as theirs), sorted."""
    return sorted({base_of(a) for rnd in order for a in rnd if not is_baseline(a)})


_DEATHS = (
    re.compile(
        r"^hspc_\w+: (?P<cause>fatal signal SIG\w+ .*?) "
        r"(?:during sample '(?P<sample>[^']*)'|with no sample running)$",
        re.MULTILINE,
    ),
    re.compile(
        r"^hspc_\w+: watchdog: sample '(?P<sample>[^']*)' "
        r"(?P<cause>exceeded the [0-9.]+ s deadline; .*)$",
        re.MULTILINE,
    ),
    re.compile(
        r"^hspc_\w+: (?P<call>(?:quick_)?exit\(\)) called during sample '(?P<sample>[^']*)' "
        r"from (?P<cause>.*)$",
        re.MULTILINE,
    ),
)


@dataclass(frozen=True)
class Death:
    """How the harness said a sample died: the arm it was running (None when it could not
    say) and why, in words naming the side whose code was running."""

    arm: str | None
    cause: str


def death(stderr: str) -> Death | None:
    """The harness's own line about a crash, a hang or an exit(), if it printed one."""
    for pattern, form in zip(_DEATHS, ("{cause}", "hung: {cause}", "{call} called from {cause}"),
                             strict=True):  # fmt: skip
        found = pattern.search(stderr)
        if found is None:
            continue
        sample = found["sample"]
        arm = sample.split("/", 1)[1] if sample and "/" in sample else None
        return Death(arm, form.format(**found.groupdict()))
    return None
