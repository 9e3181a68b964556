"""The smoke program (runtime/harness/smoke_main.cpp) against tiny user sources: it reports the
user's crash, hang, exit() and abort() with the side that did it, exits as the user's code made
it, passes working code, and fails to link a function defined with another signature.

Run by meson test: `check_smoke.py COMPILER RUNTIME_DIR APP_WORK_DIR`; exit status 1 on a failure.
Builds on two cores at once; the whole check takes a few seconds.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

PRODUCER = "-DHSPC_APP_PRODUCER"
CONSUMER = "-DHSPC_APP_CONSUMER"


@dataclass(frozen=True)
class Case:
    """One build of the smoke program and, when it links, one run with its expectations."""

    name: str
    sources: tuple[str, ...]
    defines: tuple[str, ...]
    args: tuple[str, ...] = ()
    status: int = 0  # the exit status, or -SIGNAL for death by a signal
    stderr: str = ""  # a regular expression that must match a whole stderr line
    stdout: str = ""  # likewise for stdout
    link_error: str = ""  # the build must fail, with this text in its output


CASES = (
    Case(
        "count",
        ("count.cpp",),
        (PRODUCER, CONSUMER),
        ("--events=20000", "--deadline_s=30"),
        stdout=r"hspc_smoke: ok events=20000 producer_ns_per_event=\d+\.\d\d "
        r"consumer_ns_per_event=\d+\.\d\d",
        stderr=r"app_work: produced=20000 consumed=20000",
    ),
    Case(
        "consumer_only",
        ("count.cpp",),
        (CONSUMER,),
        ("--events", "300"),
        stdout=r"hspc_smoke: ok events=300 producer_ns_per_event=0\.00 "
        r"consumer_ns_per_event=\d+\.\d\d",
    ),
    Case(
        "crash",
        ("crash_consumer.cpp",),
        (CONSUMER,),
        ("--events=5000",),
        status=-signal.SIGSEGV,
        stderr=r"hspc_smoke: fatal signal SIGSEGV in the user's consumer code \(hspc_consume\) "
        r"during sample 'smoke/consumer'",
    ),
    Case(
        "overflow",
        ("overflow_consumer.cpp",),
        (CONSUMER,),
        ("--events=10",),
        status=-signal.SIGSEGV,
        stderr=r"hspc_smoke: fatal signal SIGSEGV in the user's consumer code \(hspc_consume\) "
        r"during sample 'smoke/consumer'",
    ),
    Case(
        "hang",
        ("hang_consumer.cpp",),
        (CONSUMER,),
        ("--events=10000", "--deadline_s=0.5"),
        status=-signal.SIGABRT,
        stderr=r"hspc_smoke: watchdog: sample 'smoke/consumer' exceeded the 0\.500 s deadline; "
        r"the consumer was in the user's hspc_consume",
    ),
    Case(
        "exit",
        ("exit_consumer.cpp",),
        (CONSUMER,),
        ("--events=10",),
        status=3,
        stderr=r"hspc_smoke: exit\(\) called during sample 'smoke/consumer' from the user's "
        r"consumer code \(hspc_consume\)",
    ),
    Case(
        "abort",
        ("abort_producer.cpp",),
        (PRODUCER,),
        ("--events=100",),
        status=-signal.SIGABRT,
        stderr=r"hspc_smoke: fatal signal SIGABRT in the user's producer code \(hspc_produce\) "
        r"during sample 'smoke/producer'",
    ),
    Case(
        "wrong_signature",
        ("wrong_signature_consumer.cpp",),
        (CONSUMER,),
        link_error="hspc_consume(void const*, unsigned long)",
    ),
    Case("bad_flag", (), (), ("--events=0",), status=2, stderr=r"hspc_smoke: bad --events '0'.*"),
)


def build(case: Case, compiler: str, runtime: Path, app_work: Path, out: Path) -> str:
    """Builds the case's program into `out`; the compiler's output (empty when all is well)."""
    flags = ("-std=c++17", "-O2", "-pthread", "-Wall", "-Wextra", "-Wpedantic", "-Werror")
    defines = (*case.defines, "-DHSPC_EVENT_BYTES=24")
    smoke = str(runtime / "harness" / "smoke_main.cpp")
    sources = (smoke, *(str(app_work / name) for name in case.sources))
    done = subprocess.run(
        [compiler, *flags, f"-I{runtime}", *defines, *sources, "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout + done.stderr + ("" if done.returncode == 0 else "\n(build failed)")


def matches(pattern: str, text: str) -> bool:
    return not pattern or any(re.fullmatch(pattern, line) for line in text.splitlines())


def check(case: Case, log: str, exe: Path) -> list[str]:
    """What is wrong with one case, given its build log and program."""
    if case.link_error:
        ok = "(build failed)" in log and case.link_error in log
        return [] if ok else [f"{case.name}: expected a link error naming {case.link_error}: {log}"]
    if log:
        return [f"{case.name}: the build is not clean:\n{log}"]
    run = subprocess.run(
        [str(exe), *case.args], capture_output=True, text=True, check=False, timeout=30
    )
    problems = []
    if run.returncode != case.status:
        problems.append(f"exit status {run.returncode}, expected {case.status}")
    if not matches(case.stderr, run.stderr):
        problems.append(f"no stderr line matching {case.stderr!r}")
    if not matches(case.stdout, run.stdout):
        problems.append(f"no stdout line matching {case.stdout!r}")
    if case.status < 0 and run.stderr.count("hspc_smoke:") != 1:
        problems.append("expected exactly one hspc_smoke line on stderr")
    detail = f"\n  stdout: {run.stdout!r}\n  stderr: {run.stderr!r}"
    return [f"{case.name}: {problem}{detail}" for problem in problems]


def main(argv: list[str]) -> int:
    compiler, runtime, app_work = argv[1], Path(argv[2]), Path(argv[3])
    with tempfile.TemporaryDirectory() as tmp:
        exes = [Path(tmp) / case.name for case in CASES]
        with ThreadPoolExecutor(max_workers=2) as pool:
            logs = list(
                pool.map(lambda c, e: build(c, compiler, runtime, app_work, e), CASES, exes)
            )
            found = list(pool.map(check, CASES, logs, exes))
    problems = [problem for case_problems in found for problem in case_problems]
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"smoke: {sum(not case_problems for case_problems in found)}/{len(CASES)} cases ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
