from __future__ import annotations

import re

import pytest

from hspc_gen.errors import UserError
from hspc_gen.model import ChannelParams, Primitive
from hspc_gen.target.params import apply, check, fit_memory, parse_overrides
from hspc_gen.target.units import parse_size

BASE = ChannelParams(128, 0, 4, 4096, Primitive.futex)


def test_overrides_parse_typed_values_with_units() -> None:
    got = parse_overrides(
        ["buffers=8", "buffer_bytes=64KiB", "primitive=pause_spin", "spin_ns=750"]
    )
    assert got == {
        "buffers": 8,
        "buffer_bytes": 65536,
        "primitive": Primitive.pause_spin,
        "spin_ns": 750,
    }
    assert apply(BASE, got) == ChannelParams(128, 0, 8, 65536, Primitive.pause_spin, spin_ns=750)


@pytest.mark.parametrize(
    ("spin", "ns"), [("750", 750), ("750ns", 750), ("2us", 2000), ("1.5µs", 1500), ("1ms", 10**6)]
)
def test_spin_ns_takes_durations_as_app_yaml_does(spin: str, ns: int) -> None:
    assert parse_overrides([f"spin_ns={spin}"]) == {"spin_ns": ns}


@pytest.mark.parametrize(
    ("fixed", "fits"),
    [
        (  # neither the count nor the size fits: say which channels near them do
            {"buffers": 64, "buffer_bytes": 16 << 20},
            ["64 buffers of 64KiB (--set buffers=64 --set buffer_bytes=64KiB)",
             "2 buffers of 2MiB (--set buffers=2 --set buffer_bytes=2MiB)",
             "constraints.max_buffer_memory: 1GiB"],
        ),
        (
            {"buffers": 64, "buffer_bytes": 1 << 20},
            ["64 buffers of 64KiB", "4 buffers of 1MiB (--set buffers=4 --set buffer_bytes=1MiB)",
             "2 buffers of 2MiB", "constraints.max_buffer_memory: 64MiB"],
        ),
        (  # the count alone: no size of one event fits 64 of them in 512 B
            {"buffers": 64},
            ["8 buffers of 64B (--set buffers=8 --set buffer_bytes=64B)", "2 buffers of 256B"],
        ),
    ],
)  # fmt: skip
def test_a_set_that_breaks_the_memory_bound_says_what_would_fit(
    fixed: dict[str, int], fits: list[str]
) -> None:
    memory = 512 if fixed == {"buffers": 64} else 4 << 20
    point = apply(BASE, dict(fixed))
    with pytest.raises(UserError) as info:
        fit_memory(point, dict(fixed), memory, event_bytes=8)
    said = str(info.value)
    assert "above constraints.max_buffer_memory" in said and "at most 0" not in said
    for text in fits:
        assert text in said
    for n, size in re.findall(r"--set buffers=(\d+) --set buffer_bytes=(\w+)", said):
        assert int(n) * parse_size(size) <= memory  # every channel named does fit


@pytest.mark.parametrize(
    ("assignment", "expected"),
    [
        ("bufers=4", "unknown parameter (did you mean 'buffers'?)"),
        ("buffers", "expected NAME=VALUE"),
        ("buffers=", "expected NAME=VALUE"),
        ("buffers=1", "must be between 2 and 64"),
        ("buffers=65", "must be between 2 and 64"),
        ("buffers=four", "not a whole number"),
        ("padding_bytes=96", "power of two up to 512"),
        ("padding_bytes=1024", "power of two up to 512"),
        ("stack_offset_bytes=70000", "between 0 B and 64 KiB"),
        ("buffer_bytes=32", "between 64 B and 16 MiB"),
        ("buffer_bytes=32MiB", "between 64 B and 16 MiB"),
        ("primitive=spinlok", "did you mean 'spinlock'?"),
        ("producer_cpu=-2", "-1 for not pinned"),
        ("spin_ns=2000000", "a duration between 0s and 1ms"),
        ("spin_ns=2ms", "a duration between 0s and 1ms"),
        ("spin_ns=-1", "'-1' is negative"),
        ("spin_ns=1.5ns", "not a whole number of nanoseconds"),
        ("spin_ns=soon", "not a duration"),
        ("spin_ns=2 parsecs", "unknown duration unit 'parsecs'"),
        ("buffer_bytes=1MiX", "unknown size unit 'MiX'"),
    ],
)
def test_bad_overrides_name_the_parameter_and_the_reason(assignment: str, expected: str) -> None:
    with pytest.raises(UserError) as info:
        parse_overrides([assignment])
    assert expected in str(info.value)
    assert assignment.partition("=")[0] in str(info.value)


def test_check_rejects_a_cpu_outside_the_affinity_mask() -> None:
    check(BASE.replace(producer_cpu=1, consumer_cpu=-1), allowed_cpus=[0, 1])
    with pytest.raises(UserError, match=r"--set consumer_cpu=7: not a CPU this process may run"):
        check(BASE.replace(consumer_cpu=7), allowed_cpus=[0, 1])


def test_check_rejects_a_primitive_the_constraints_leave_out() -> None:
    check(BASE.replace(primitive=Primitive.futex), [0, 1], (Primitive.futex,))
    refused = r"--set primitive=condvar: app.yaml's constraints.primitives allows only futex"
    with pytest.raises(UserError, match=refused):
        check(BASE.replace(primitive=Primitive.condvar), [0, 1], (Primitive.futex,))
