"""hspc_gen.model: the vocabulary, and the one table of parameter limits, which must agree with
the limits the C++ channel enforces (runtime/hspc/limits.hpp), compiled and printed for real."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest

from hspc_gen.model import (
    DEFAULT_SPIN_NS,
    LIMITS,
    SEARCH_MIN_BUFFER_BYTES,
    ChannelParams,
    Figure,
    HostTimings,
    Limit,
    Primitive,
    SpinBudgets,
    spin_budget,
)

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
PRINT_LIMITS = """
#include <cstdio>
#include "hspc/limits.hpp"
int main() {
  std::printf("%zu %zu %zu %zu %zu %zu %zu %zu\\n", hspc::kMinBuffers, hspc::kMaxBuffers,
              hspc::kMinBufferBytes, hspc::kMaxBufferBytes, hspc::kMaxPaddingBytes,
              hspc::kMaxStackOffsetBytes, hspc::kMaxSpinNs, hspc::kMaxPrefetchBytes);
}
"""


def test_the_limits_table_is_the_one_the_channel_enforces(tmp_path: Path) -> None:
    source, exe = tmp_path / "limits.cpp", tmp_path / "limits"
    source.write_text(PRINT_LIMITS, encoding="utf-8")
    subprocess.run(["g++", "-std=c++17", f"-I{RUNTIME}", str(source), "-o", str(exe)], check=True)
    printed = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    buffers_low, buffers_high, bytes_low, bytes_high, padding, stack, spin, prefetch = map(
        int, printed.split()
    )
    assert (LIMITS["buffers"].low, LIMITS["buffers"].high) == (buffers_low, buffers_high)
    assert (LIMITS["buffer_bytes"].low, LIMITS["buffer_bytes"].high) == (bytes_low, bytes_high)
    assert (LIMITS["padding_bytes"].low, LIMITS["padding_bytes"].high) == (0, padding)
    assert LIMITS["stack_offset_bytes"].high == stack
    assert (LIMITS["spin_ns"].low, LIMITS["spin_ns"].high) == (0, spin)
    assert LIMITS["padding_bytes"].powers_of_two  # the channel's static_assert asks for it too
    assert (LIMITS["prefetch_bytes"].high, LIMITS["prefetch_bytes"].powers_of_two) == (
        prefetch,
        True,
    )


def test_the_search_floor_lies_inside_the_channels_domain() -> None:
    assert LIMITS["buffer_bytes"].allows(SEARCH_MIN_BUFFER_BYTES)


@pytest.mark.parametrize(
    ("limit", "value", "allowed"),
    [
        (Limit(0, 512, powers_of_two=True), 0, True),
        (Limit(0, 512, powers_of_two=True), 96, False),
        (Limit(0, 512, powers_of_two=True), 1024, False),
        (Limit(2, 64), 3, True),
        (Limit(2, 64), 1, False),
    ],
)
def test_a_limit_allows_its_domain_only(limit: Limit, value: int, allowed: bool) -> None:
    assert limit.allows(value) is allowed


def test_a_limit_says_its_domain_in_the_units_people_use() -> None:
    assert LIMITS["buffer_bytes"].describe() == "must be between 64 B and 16 MiB"
    assert LIMITS["padding_bytes"].describe() == "must be 0 or a power of two up to 512 B"
    assert LIMITS["buffers"].describe() == "must be between 2 and 64"


def test_an_id_from_before_the_spin_budget_was_searched_names_the_same_point() -> None:
    point = ChannelParams(128, 0, 4, 4096, Primitive.hybrid)
    assert "spin_ns" not in point.identity() and point.as_dict()["spin_ns"] == DEFAULT_SPIN_NS
    assert point.replace(spin_ns=24_000).identity()["spin_ns"] == 24_000


@pytest.mark.parametrize(
    ("cost_ns", "budget"),
    [
        (24_310.0, 24_300),  # rounded to the 50 ns grain
        (10.0, 50),  # never 0: 0 means "never spin"
        (5e6, 1_000_000),  # inside the limit
        (math.nan, DEFAULT_SPIN_NS),  # not measured
    ],
)
def test_a_spin_budget_is_what_the_alternative_costs(cost_ns: float, budget: int) -> None:
    assert spin_budget(cost_ns) == budget


def test_the_hybrid_spins_for_a_wake_up_and_a_spinner_for_a_switch() -> None:
    def measured(ns: float) -> Figure:
        return Figure(ns, ns * 0.9, ns * 1.1, 101)

    budgets = HostTimings(wake_ns=measured(24_000), switch_ns=measured(2_100)).budgets()
    assert budgets == SpinBudgets(sleep_ns=24_000, yield_ns=2_100)
    assert budgets.for_primitive(Primitive.hybrid) == 24_000
    assert budgets.for_primitive(Primitive.backoff_spin) == 2_100
    assert budgets.for_primitive(Primitive.futex) == DEFAULT_SPIN_NS  # unused: the default id
