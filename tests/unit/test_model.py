"""hspc_gen.model: the vocabulary, and the one table of parameter limits, which must agree with
the limits the C++ channel enforces (runtime/hspc/limits.hpp), compiled and printed for real."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hspc_gen.model import LIMITS, SEARCH_MIN_BUFFER_BYTES, Limit

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
PRINT_LIMITS = """
#include <cstdio>
#include "hspc/limits.hpp"
int main() {
  std::printf("%zu %zu %zu %zu %zu %zu\\n", hspc::kMinBuffers, hspc::kMaxBuffers,
              hspc::kMinBufferBytes, hspc::kMaxBufferBytes, hspc::kMaxPaddingBytes,
              hspc::kMaxStackOffsetBytes);
}
"""


def test_the_limits_table_is_the_one_the_channel_enforces(tmp_path: Path) -> None:
    source, exe = tmp_path / "limits.cpp", tmp_path / "limits"
    source.write_text(PRINT_LIMITS, encoding="utf-8")
    subprocess.run(["g++", "-std=c++17", f"-I{RUNTIME}", str(source), "-o", str(exe)], check=True)
    printed = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    buffers_low, buffers_high, bytes_low, bytes_high, padding, stack = map(int, printed.split())
    assert (LIMITS["buffers"].low, LIMITS["buffers"].high) == (buffers_low, buffers_high)
    assert (LIMITS["buffer_bytes"].low, LIMITS["buffer_bytes"].high) == (bytes_low, bytes_high)
    assert (LIMITS["padding_bytes"].low, LIMITS["padding_bytes"].high) == (0, padding)
    assert LIMITS["stack_offset_bytes"].high == stack
    assert LIMITS["padding_bytes"].powers_of_two  # the channel's static_assert asks for it too


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
