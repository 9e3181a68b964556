"""The kernel's CPU list notation ("0-3,8,10-11"): read from sysfs, written for taskset -c."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from hspc_gen.errors import UserError


def parse_cpu_list(text: str, source: Path) -> tuple[int, ...]:
    """The kernel's cpulist format, "0-3,8,10-11", as sorted CPU numbers."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        first, dash, last = part.partition("-")
        try:
            low, high = int(first), int(last if dash else first)
        except ValueError:
            raise UserError(f"{source}: malformed CPU list {text.strip()!r}") from None
        if low < 0 or high < low:
            raise UserError(f"{source}: malformed CPU list {text.strip()!r}")
        cpus.update(range(low, high + 1))
    return tuple(sorted(cpus))


def format_cpu_list(cpus: Iterable[int]) -> str:
    """The inverse of parse_cpu_list: runs of consecutive CPUs as ranges."""
    runs: list[list[int]] = []
    for cpu in sorted(set(cpus)):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
