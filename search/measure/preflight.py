"""The user's own code, checked before any tuning: compiled and linked alone (seconds), then run
alone under the watchdog (runtime/harness/smoke_main.cpp).

A compile error is the user's to fix before anything else: one message naming their file and
line, or the declaration a wrong signature should have had (UserError, exit status 2). A hang, a
crash, an exit() or a sanitizer's complaint in their code alone is named as such, with the last
lines it printed (UserCodeError, exit status 3). Either way nothing is tuned and nothing is
written. A success measures each side's cost per event, so samples are sized from the truth.

That cost is kept in the record store per host fingerprint and code (a `UserCodeRecord`), as the
calibration is: the search's sample sizes follow from it, so a cost measured again (never quite
the same) would size the plans differently, and a re-run, or a host replaying imported wisdom,
would find none of them recorded.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shlex
import signal
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from hspc_gen.app_files import headers_digest
from hspc_gen.errors import UserCodeError, UserError
from hspc_gen.model import Status
from hspc_gen.model.workload import Workload
from hspc_gen.search.measure import load, process
from hspc_gen.search.measure.build import compile_program
from hspc_gen.search.records.entries import UserCodeRecord
from hspc_gen.search.records.samples import RecordKey
from hspc_gen.search.records.store import RecordStore

SMOKE_EVENTS = 100_000
SMOKE_DEADLINE_SECONDS = 5.0  # a hang is named within this, plus the compile
COMPILE_TIMEOUT_SECONDS = 120.0
RUN_GRACE_SECONDS = 10.0  # past the watchdog's deadline, the smoke program is killed
LOG_LINES = 12  # of the user's program's output, in a message
SIGNATURES = {
    "producer": "void hspc_produce(std::uint64_t seq, void* event, std::size_t size)",
    "consumer": "void hspc_consume(const void* event, std::size_t size)",
}
_DIAGNOSTIC = re.compile(r"^(?P<where>.+?):(?P<line>\d+):(?:(?P<col>\d+):)? (?:fatal )?error: ")
_UNDEFINED = re.compile(r"undefined reference to `(?P<name>hspc_(?:produce|consume))\b")


@dataclass(frozen=True)
class UserCode:
    """What the user's code costs alone, per event (0 for a side it does not have)."""

    producer_ns: float
    consumer_ns: float
    busy: bool = False  # measured beside other load: a quiet run measures it again


def compiler() -> str:
    """The C++ compiler Meson would choose: $CXX, else c++. A command: its words split as a
    shell's (`ccache c++`, as the Meson snippet hands a wrapped compiler over)."""
    return os.environ.get("CXX", "c++")


def _sources(workload: Workload) -> dict[str, Path]:
    sides = {"producer": workload.producer_source, "consumer": workload.consumer_source}
    return {side: path for side, path in sides.items() if path is not None}


def check(workload: Workload, event_bytes: int) -> UserCode | None:
    """Build and run the user's code alone; None when the workload has none."""
    sources = _sources(workload)
    return _measured(sources, event_bytes) if sources else None


def checked(workload: Workload, event_bytes: int, store: RecordStore) -> UserCode | None:
    """`check`, once per host and code: the cost recorded for the same code on this host (or
    imported with wisdom from one like it) answers without building or running anything, unless
    it was measured beside other load and the machine is quiet now."""
    sources = _sources(workload)
    if not sources:
        return None
    key = code_key(store.fingerprint, code_digest(sources, event_bytes))
    known = recorded(store, key)
    if known is not None and (not known.busy or load.machine_busy()[0]):
        return known
    before = load.cpu_times()
    measured = _measured(sources, event_bytes)
    measured = dataclasses.replace(measured, busy=load.busy(before, load.cpu_times()))
    store.append(UserCodeRecord(key, measured.producer_ns, measured.consumer_ns, measured.busy))
    return measured


def compiles(workload: Workload, event_bytes: int, store: RecordStore) -> None:
    """The user's code compiled and linked alone, not run (`--effort estimate`): a compile
    error is the same message as `check`'s. Nothing to build when this host's records hold the
    same code's cost: it was built then."""
    sources = _sources(workload)
    if not sources:
        return
    if recorded(store, code_key(store.fingerprint, code_digest(sources, event_bytes))):
        return
    with tempfile.TemporaryDirectory(prefix="hspc-smoke-") as tmp:
        _build(sources, event_bytes, Path(tmp) / "smoke")


def _measured(sources: dict[str, Path], event_bytes: int) -> UserCode:
    with tempfile.TemporaryDirectory(prefix="hspc-smoke-") as tmp:
        program = Path(tmp) / "smoke"
        _build(sources, event_bytes, program)
        return _run(sources, program)


def code_digest(sources: Mapping[str, Path], event_bytes: int) -> str:
    """What a recorded cost is valid for: the user's files and the sides they serve, the local
    headers they include, the event size, and the harness that timed them."""
    digest = hashlib.sha256(f"{event_bytes}".encode())
    digest.update(_smoke_main().read_bytes())
    for side, path in sorted(sources.items()):
        digest.update(f"\0{side}\0".encode())
        digest.update(path.read_bytes())
    if headers := headers_digest(sources.values()):  # none: the digest code without headers had
        digest.update(f"\0headers\0{headers}".encode())
    return digest.hexdigest()[:16]


def code_key(fingerprint: str, digest: str) -> RecordKey:
    """What a recorded cost is valid for: this host and the code's digest (`code_digest`)."""
    return RecordKey(fingerprint, digest, "", "")


def recorded(store: RecordStore, key: RecordKey) -> UserCode | None:
    """The cost last recorded under `key`; None when there is none."""
    found = store.latest(UserCodeRecord, key)
    return None if found is None else UserCode(found.producer_ns, found.consumer_ns, found.busy)


def _smoke_main() -> Path:
    return Path(str(resources.files("hspc_gen.runtime").joinpath("harness", "smoke_main.cpp")))


def _build(sources: dict[str, Path], event_bytes: int, program: Path) -> None:
    main = _smoke_main()
    compiled = compile_program(
        shlex.split(compiler()),
        [str(main), *sorted({str(path) for path in sources.values()})],
        program,
        includes=[
            str(main.parent.parent),
            *sorted({str(path.parent) for path in sources.values()}),
        ],
        defines=[
            *(f"HSPC_APP_{side.upper()}" for side in sources),
            f"HSPC_EVENT_BYTES={event_bytes}",
        ],
        timeout=COMPILE_TIMEOUT_SECONDS,
    )
    if compiled.start_error:
        raise UserError(
            f"the C++ compiler could not be started ({compiled.start_error}): set CXX to one"
        )
    if compiled.status is Status.timeout:
        raise UserError(f"the user's code did not compile within {COMPILE_TIMEOUT_SECONDS:g} s")
    if compiled.status is not Status.ok:
        raise UserError(compile_message(compiled.log, sources))


def compile_message(log: str, sources: dict[str, Path]) -> str:
    """The compiler's first error in the user's files, with the line it points at; or the
    declaration a side's function should have when the link found no such function."""
    owner = {str(path.resolve()): side for side, path in sources.items()}
    lines = log.splitlines()
    for index, line in enumerate(lines):
        found = _DIAGNOSTIC.match(line)
        if found and str(Path(found["where"]).resolve()) in owner:
            side = owner[str(Path(found["where"]).resolve())]
            context = [f"  {text}" for text in lines[index + 1 : index + 3] if text.startswith(" ")]
            return "\n".join([f"workload.{side}_source does not compile: {line}", *context])
    for line in lines:
        if (missing := _UNDEFINED.search(line)) is not None:
            side = "producer" if missing["name"] == "hspc_produce" else "consumer"
            return (
                f"workload.{side}_source ({sources[side]}) does not define"
                f" `{SIGNATURES[side]}`: the linker found no function of that name and"
                " signature (check the parameter types, and that it is neither static nor in a"
                " namespace)"
            )
    tail = "\n".join(f"  {text}" for text in lines[-LOG_LINES:])
    return f"the user's code does not build with the tuner's harness:\n{tail}"


def _run(sources: dict[str, Path], program: Path) -> UserCode:
    argv = [str(program), f"--events={SMOKE_EVENTS}", f"--deadline_s={SMOKE_DEADLINE_SECONDS}"]
    done = process.run(argv, SMOKE_DEADLINE_SECONDS + RUN_GRACE_SECONDS)
    if done.timed_out:
        raise UserCodeError(_failure(sources, "hung (killed: no watchdog message)", ""))
    if done.code is None:  # the tuner's program, not the user's code, could not start
        raise UserError(f"could not start the tuner's smoke program {program}: {done.start_error}")
    found = re.search(r"producer_ns_per_event=([\d.]+) consumer_ns_per_event=([\d.]+)", done.stdout)
    if done.ok and found:
        return UserCode(float(found[1]), float(found[2]))
    raise UserCodeError(_failure(sources, _how(done.code, done.stderr), done.stderr))


def _how(code: int, stderr: str) -> str:
    """What became of the user's program: a signal, a hang, an exit status."""
    if "watchdog" in stderr:
        return f"hung (stopped after {SMOKE_DEADLINE_SECONDS:g} s)"
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        return f"crashed with {name}"
    if "exit() called" in stderr:
        return f"called exit({code})"
    return f"ended with exit status {code}"


def _failure(sources: dict[str, Path], how: str, stderr: str) -> str:
    side = _side(stderr) or next(iter(sources))
    name = "hspc_produce" if side == "producer" else "hspc_consume"
    tail = [f"  {line}" for line in stderr.strip().splitlines()[-LOG_LINES:]]
    head = (
        f"workload.{side}_source: the user's {side} code ({name} in {sources.get(side, '?')})"
        f" {how} when run alone, before any tuning"
    )
    return "\n".join([head, *tail])


def _side(stderr: str) -> str | None:
    """The side the harness says was in the user's code when it died."""
    for side, name in (("producer", "hspc_produce"), ("consumer", "hspc_consume")):
        if f"user's {side} code" in stderr or f"in the user's {name}" in stderr:
            return side
    return None
