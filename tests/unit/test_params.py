from __future__ import annotations

import pytest

from hspc_gen.errors import UserError
from hspc_gen.model import ChannelParams, Primitive
from hspc_gen.params import apply, check, parse_overrides

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
        ("spin_ns=2000000", "between 0 and 1000000"),
        ("spin_ns=-1", "between 0 and 1000000"),
    ],
)
def test_bad_overrides_name_the_parameter_and_the_reason(assignment: str, expected: str) -> None:
    with pytest.raises(UserError) as info:
        parse_overrides([assignment])
    assert expected in str(info.value)
    assert assignment.partition("=")[0] in str(info.value)


def test_check_rejects_a_cpu_outside_the_affinity_mask() -> None:
    check(BASE.replace(producer_cpu=1, consumer_cpu=-1), allowed_cpus=[0, 1])
    with pytest.raises(UserError, match=r"consumer_cpu=7: not a CPU this process may run on"):
        check(BASE.replace(consumer_cpu=7), allowed_cpus=[0, 1])
