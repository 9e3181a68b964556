"""Whether anything else ran while we measured: the CPU time the whole machine spent (from
/proc/stat) less our own process's and its children's, per second of wall time.

A load average cannot say this: it counts our own benchmark threads, and it lags by a minute. On
a shared 2-vCPU host a neighbour's build halves a spinning channel's throughput, so measurements
taken beside one are marked, and a quiet run measures them again.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path

BUSY_OTHER_CPUS = 0.25
"""Other processes using more than this share of one CPU make a measurement 'busy'."""
QUIET_PROBE_SECONDS = 0.3
"""How long a run looks at the machine before measuring, to say whether it is quiet."""


@dataclass(frozen=True)
class CpuTimes:
    machine_s: float  # CPU time our CPUs spent outside idle and iowait, since boot
    ours_s: float  # this process and its finished children
    wall_s: float


def cpu_times(stat: Path = Path("/proc/stat")) -> CpuTimes:
    """Now, on the CPUs this process may use (a neighbour on other CPUs does not disturb it);
    a machine without /proc/stat reads as if nothing else ever ran."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    ours = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    try:
        machine = _busy_seconds(stat.read_text(encoding="ascii"), os.sched_getaffinity(0))
    except (OSError, ValueError, IndexError):
        machine = ours
    return CpuTimes(machine, ours, time.monotonic())


def _busy_seconds(text: str, cpus: set[int]) -> float:
    """Time outside idle and iowait, summed over the `cpuN` lines of `cpus`."""
    ticks = 0
    for line in text.splitlines():
        name, *fields = line.split()
        if not name.startswith("cpu") or name == "cpu" or int(name[3:]) not in cpus:
            continue
        counts = [int(f) for f in fields[:8]]
        ticks += sum(counts) - counts[3] - counts[4]
    return ticks / os.sysconf("SC_CLK_TCK")


def other_cpus(before: CpuTimes, after: CpuTimes) -> float:
    """CPUs' worth of time other processes used between the two readings."""
    wall = after.wall_s - before.wall_s
    if wall <= 0:
        return 0.0
    others = (after.machine_s - before.machine_s) - (after.ours_s - before.ours_s)
    return max(0.0, others / wall)


def busy(before: CpuTimes, after: CpuTimes) -> bool:
    return other_cpus(before, after) > BUSY_OTHER_CPUS


def machine_busy(seconds: float = QUIET_PROBE_SECONDS) -> tuple[bool, float]:
    """Whether other processes use the machine now (looked at for `seconds`), and how much."""
    before = cpu_times()
    time.sleep(seconds)
    after = cpu_times()
    return busy(before, after), other_cpus(before, after)
