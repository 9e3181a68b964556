"""hspc_gen.search.measure.load: other processes' CPU time on our CPUs, from /proc/stat."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

from hspc_gen.search.measure import load

STAT = """cpu  500 0 100 900 10 0 0 0 0 0
cpu0 200 0 50 450 5 0 0 0 0 0
cpu1 300 0 50 450 5 0 0 0 0 0
intr 12345
"""


def test_busy_time_counts_our_cpus_lines_outside_idle_and_iowait() -> None:
    only_cpu1 = load._busy_seconds(STAT, {1})
    both = load._busy_seconds(STAT, {0, 1})
    ticks = os.sysconf("SC_CLK_TCK")
    assert only_cpu1 == 350 / ticks and both == 600 / ticks


def test_our_own_children_are_not_other_load() -> None:
    """A child we waited for is ours: all its CPU time counts in ours_s, which other_cpus takes
    off the machine's (the formula: the next test). Nothing here depends on what else runs: an
    assertion that other_cpus stays under 1 failed whenever the machine was busy, as it may be."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    before = load.cpu_times()
    subprocess.run([sys.executable, "-c", "sum(range(3 * 10**6))"], check=True)
    after = load.cpu_times()
    done = resource.getrusage(resource.RUSAGE_CHILDREN)
    child_s = (done.ru_utime + done.ru_stime) - (children.ru_utime + children.ru_stime)
    assert child_s > 0
    assert after.ours_s - before.ours_s >= child_s  # the child's CPU time is ours


def test_other_load_is_cpu_time_per_wall_second() -> None:
    before = load.CpuTimes(machine_s=10.0, ours_s=2.0, wall_s=100.0)
    after = load.CpuTimes(machine_s=13.0, ours_s=3.0, wall_s=104.0)
    assert load.other_cpus(before, after) == 0.5  # 3 s of CPU, 1 s of it ours, in 4 s
    assert load.busy(before, after)
    idle = load.CpuTimes(machine_s=11.0, ours_s=3.0, wall_s=104.0)
    assert not load.busy(before, idle)
