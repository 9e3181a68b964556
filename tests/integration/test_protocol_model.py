"""The buffer hand-off protocol (promela/handoff.pml), checked by the real spin model checker.

Each check generates the verifier with `spin -a`, compiles it with gcc and runs it, in a temporary
directory. The protocol as written in runtime/hspc must pass (no assertion violation, no invalid
end state, the LTL property "both threads finish" under weak fairness); each deliberate bug
(promela/README.md lists them) must be reported, which is what shows the checks can fail.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

MODEL = Path(__file__).resolve().parents[2] / "promela" / "handoff.pml"
POOL_MODEL = MODEL.with_name("pool.pml")
POOL_UNORDERED_MODEL = MODEL.with_name("pool_unordered.pml")

# Long enough for the largest run here (a few seconds) on a busy 2-core machine.
RUN_TIMEOUT_S = 120
# 2^22 hash slots (32 MiB) instead of pan's 128 MiB default: the largest run stores ~3 M states.
HASH_BITS = "-w22"

FLAVOURS = ("FUTEX", "CONDVAR", "SPIN")
BLOCKING_FLAVOURS = ("FUTEX", "CONDVAR")

INVALID_END = "invalid end state"
ASSERTION = "assertion violated"
ACCEPTANCE = "acceptance cycle"

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class PanResult:
    """What a pan run reported."""

    errors: int
    violation: str | None  # pan's first "pan:1: ..." report, if any
    complete: bool  # the whole state space was searched (no depth or memory cut-off)
    output: str


def parse_pan(output: str) -> PanResult:
    """Read pan's summary; an output without one means pan did not run to the end."""
    errors = re.search(r"\berrors: (\d+)", output)
    if errors is None:
        raise AssertionError(f"pan printed no error count:\n{output}")
    violation = re.search(r"^pan:1: (.*)$", output, re.MULTILINE)
    truncated = "max search depth too small" in output or "out of memory" in output
    return PanResult(
        errors=int(errors.group(1)),
        violation=violation.group(1) if violation else None,
        complete=not truncated and "Search not completed" not in output,
        output=output,
    )


@dataclass(frozen=True)
class Tools:
    spin: str
    cc: str


def _require(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is required in CI (Debian: apt-get install spin gcc)")
        pytest.skip(f"{name} is not installed (./dev setup installs it)")
    return path


@pytest.fixture(scope="session")
def tools() -> Tools:
    return Tools(spin=_require("spin"), cc=_require("gcc"))


def _run(argv: list[str], cwd: Path) -> str:
    done = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"{argv[0]} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


def verify(
    tools: Tools,
    workdir: Path,
    defines: dict[str, str],
    *,
    liveness: bool = False,
    ignore_end_states: bool = False,
    optimize: str = "-O2",
    model: Path = MODEL,
) -> PanResult:
    """Generate, build and run the verifier for one configuration of the model.

    Safety (default): assertions and invalid end states, built with -DSAFETY. Liveness: the LTL
    property under weak fairness (-a -f); ignore_end_states (-E) leaves only the LTL property to
    find a deadlock.
    """
    flags = [f"-D{name}={value}" if value else f"-D{name}" for name, value in defines.items()]
    if liveness:
        flags.append("-DLIVENESS")
    _run([tools.spin, *flags, "-a", str(model)], workdir)
    cc_flags = [] if liveness else ["-DSAFETY"]
    if model in (POOL_MODEL, POOL_UNORDERED_MODEL):
        cc_flags.append("-DCOLLAPSE")  # pool.pml's 3.8 M states in 180 MB, not 400: the same search
    _run([tools.cc, optimize, *cc_flags, "-o", "pan", "pan.c"], workdir)
    pan_flags = [HASH_BITS]
    if liveness:
        pan_flags += ["-a", "-f"]
    if ignore_end_states:
        pan_flags.append("-E")
    return parse_pan(_run([str(workdir / "pan"), *pan_flags], workdir))


def _flavour(name: str) -> dict[str, str]:
    return {f"FLAVOUR_{name}": ""}


def assert_holds(result: PanResult) -> None:
    assert result.complete, result.output
    assert result.errors == 0, result.output
    assert result.violation is None, result.output


def assert_caught(result: PanResult, kind: str) -> None:
    assert result.errors >= 1, result.output
    assert result.violation is not None, result.output
    assert result.violation.startswith(kind), result.output


# ---- the protocol as the runtime implements it ----


@pytest.mark.parametrize("buffers", [2, 3])
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_every_event_is_delivered_once_in_order_and_nobody_sleeps_forever(
    tools: Tools, tmp_path: Path, flavour: str, buffers: int
) -> None:
    result = verify(tools, tmp_path, {**_flavour(flavour), "B": str(buffers)})
    assert_holds(result)


@pytest.mark.parametrize("buffers", [2, 3])
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_both_threads_always_finish(
    tools: Tools, tmp_path: Path, flavour: str, buffers: int
) -> None:
    result = verify(tools, tmp_path, {**_flavour(flavour), "B": str(buffers)}, liveness=True)
    assert_holds(result)
    assert "acceptance   cycles \t+ (fairness enabled)" in result.output


# ---- deliberate bugs: each one must be reported ----

MUTANTS = [
    ("FUTEX", "NO_RECHECK", INVALID_END),
    ("CONDVAR", "NO_RECHECK", INVALID_END),
    ("FUTEX", "EPOCH_LATE", INVALID_END),
    ("FUTEX", "NOTIFY_REORDER", INVALID_END),
    ("CONDVAR", "NOTIFY_REORDER", INVALID_END),
    ("CONDVAR", "SIGNAL_UNLOCKED", INVALID_END),
    ("FUTEX", "CLOSE_NO_NOTIFY", INVALID_END),
    ("CONDVAR", "CLOSE_NO_NOTIFY", INVALID_END),
    *[(flavour, "END_EARLY", ASSERTION) for flavour in FLAVOURS],
    *[(flavour, "EARLY_RELEASE", ASSERTION) for flavour in FLAVOURS],
]


@pytest.mark.parametrize(("flavour", "mutant", "kind"), MUTANTS)
def test_mutant_is_reported(
    tools: Tools, tmp_path: Path, flavour: str, mutant: str, kind: str
) -> None:
    result = verify(tools, tmp_path, {**_flavour(flavour), f"MUTANT_{mutant}": ""}, optimize="-O0")
    assert_caught(result, kind)


LOST_WAKEUPS = ["NO_RECHECK", "NOTIFY_REORDER", "CLOSE_NO_NOTIFY"]


@pytest.mark.parametrize("mutant", LOST_WAKEUPS)
@pytest.mark.parametrize("flavour", BLOCKING_FLAVOURS)
def test_lost_wakeup_breaks_the_liveness_property_alone(
    tools: Tools, tmp_path: Path, flavour: str, mutant: str
) -> None:
    """With invalid end states ignored (-E), the LTL property must still catch the hang."""
    defines = {**_flavour(flavour), f"MUTANT_{mutant}": ""}
    result = verify(tools, tmp_path, defines, liveness=True, ignore_end_states=True, optimize="-O0")
    assert_caught(result, ACCEPTANCE)


# ---- counter wrap: every run starts two hand-offs below the wrap of head and tail ----


@pytest.mark.parametrize("flavour", BLOCKING_FLAVOURS)
def test_slot_index_taken_from_the_wrapping_counter_is_reported(
    tools: Tools, tmp_path: Path, flavour: str
) -> None:
    """`counter % 3` jumps at the wrap (slots 2, 0, 0): the producer refills a held slot. The
    runtime keeps the slot index in each cursor instead; this shows why the model must too."""
    defines = {**_flavour(flavour), "B": "3", "MUTANT_SLOT_MODULO": ""}
    assert_caught(verify(tools, tmp_path, defines, optimize="-O0"), ASSERTION)


# ---- the output parser ----


def test_parse_pan_reads_a_violation() -> None:
    output = (
        "pan:1: invalid end state (at depth 155)\n"
        "pan: wrote handoff.pml.trail\n"
        "Warning: Search not completed\n"
        "State-vector 52 byte, depth reached 181, errors: 1\n"
    )
    result = parse_pan(output)
    assert result.errors == 1
    assert result.violation == "invalid end state (at depth 155)"
    assert not result.complete


def test_parse_pan_rejects_output_without_a_summary() -> None:
    with pytest.raises(AssertionError, match="no error count"):
        parse_pan("pan: out of memory\n")


# ---- the consumer pool (promela/pool.pml): lanes claimed for a turn, consumers parked ----


def test_pool_lanes_have_one_consumer_and_no_wake_up_is_lost(tools: Tools, tmp_path: Path) -> None:
    """Two producers (a hand-off each, then close), two consumers, wait()'s stop: every buffer
    taken once, never two consumers in a lane, nobody asleep for ever (3.8 M states, ~5 s)."""
    result = verify(tools, tmp_path, {"BUFS": "1"}, model=POOL_MODEL)
    assert_holds(result)


POOL_MUTANTS = [
    ("NO_RECHECK", "1", INVALID_END),
    ("NO_NOTIFY", "2", INVALID_END),  # with one hand-off the close's notify covers it
    ("NO_CLAIM", "1", ASSERTION),
    ("STOP_NO_WAKE", "1", INVALID_END),
]


@pytest.mark.parametrize(("mutant", "buffers", "kind"), POOL_MUTANTS)
def test_pool_mutant_is_reported(
    tools: Tools, tmp_path: Path, mutant: str, buffers: str, kind: str
) -> None:
    defines = {"BUFS": buffers, f"MUTANT_{mutant}": ""}
    result = verify(tools, tmp_path, defines, optimize="-O0", model=POOL_MODEL)
    assert_caught(result, kind)


# ---- the pool's unordered mode and a reused place (promela/pool_unordered.pml) ----


@pytest.mark.parametrize("defines", [{}, {"REUSE": ""}], ids=["one-stream", "reused"])
def test_unordered_pool_takes_every_buffer_once_and_no_wake_up_is_lost(
    tools: Tools, tmp_path: Path, defines: dict[str, str]
) -> None:
    """One producer dealing two buffers over two lanes, two consumers, wait()'s stop; reused: the
    producer's place reopened for a second stream. Every buffer taken once, never two consumers
    in a lane, each lane's end counted once per stream, nobody asleep for ever (0.3 M and 1 M
    states, ~2 and ~6 s)."""
    result = verify(tools, tmp_path, defines, model=POOL_UNORDERED_MODEL)
    assert_holds(result)


UNORDERED_MUTANTS = [
    ("NO_CLAIM", {}, ASSERTION),
    ("CLOSE_ONE", {}, INVALID_END),
    # Three buffers over two lanes of one: the producer blocks, and only a hand-off's wake helps.
    ("NO_NOTIFY", {"BUFS": "3"}, INVALID_END),
    ("REOPEN_UNCLAIMED", {"REUSE": ""}, ASSERTION),
    ("REUSE_UNDRAINED", {"REUSE": "", "BUFS": "1"}, INVALID_END),
]


@pytest.mark.parametrize(("mutant", "defines", "kind"), UNORDERED_MUTANTS)
def test_unordered_pool_mutant_is_reported(
    tools: Tools, tmp_path: Path, mutant: str, defines: dict[str, str], kind: str
) -> None:
    result = verify(
        tools,
        tmp_path,
        {**defines, f"MUTANT_{mutant}": ""},
        optimize="-O0",
        model=POOL_UNORDERED_MODEL,
    )
    assert_caught(result, kind)
