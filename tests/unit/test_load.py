"""hspc_gen.search.measure.load: other processes' CPU time on our CPUs, from /proc/stat."""

from __future__ import annotations

import os
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
    before = load.cpu_times()
    subprocess.run([sys.executable, "-c", "sum(range(3 * 10**6))"], check=True)
    after = load.cpu_times()
    assert after.ours_s > before.ours_s  # the child's CPU time is ours
    assert load.other_cpus(before, after) < 1.0


def test_other_load_is_cpu_time_per_wall_second() -> None:
    before = load.CpuTimes(machine_s=10.0, ours_s=2.0, wall_s=100.0)
    after = load.CpuTimes(machine_s=13.0, ours_s=3.0, wall_s=104.0)
    assert load.other_cpus(before, after) == 0.5  # 3 s of CPU, 1 s of it ours, in 4 s
    assert load.busy(before, after)
    idle = load.CpuTimes(machine_s=11.0, ours_s=3.0, wall_s=104.0)
    assert not load.busy(before, idle)
