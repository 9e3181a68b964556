"""The host: its CPUs, cores, packages, caches and NUMA nodes, read from Linux sysfs and procfs.

`read_host()` reads the live machine; `read_host(tree / "sys")` reads a recorded tree (as under
tests/data/sysfs), whose own `proc` sits beside its `sys`. The `fingerprint` keys the measurement
cache: it covers what shapes a measurement (CPU model, topology, caches, kernel, compiler) and
leaves out what changes from run to run (allowed CPUs, CPU quota, load).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shlex
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from hspc_gen.errors import UserError
from hspc_gen.host.sysfs import (
    DEFAULT_LINE_BYTES,
    Cache,
    LogicalCpu,
    read_allowed,
    read_caches,
    read_cpu_quota,
    read_cpuinfo,
    read_cpus,
    read_huge_pages,
    read_nodes,
    read_online,
    read_text,
)
from hspc_gen.host.text import describe
from hspc_gen.model.shape import CpuPlace, TopologyShape

__all__ = ["Cache", "Host", "LogicalCpu", "describe", "read_host"]

LIVE_SYSFS = Path("/sys")
LIVE_PROC = Path("/proc")
# Where the kernel does not describe the caches: the smallest per-core L2 and L1d of mainstream
# x86 and ARM server cores of the last decade, so that buffers sized from them still fit.
DEFAULT_L2_BYTES = 256 << 10
DEFAULT_L1D_BYTES = 32 << 10
FINGERPRINT_HEX_DIGITS = 16


@dataclass(frozen=True)
class Host:
    """What the search needs to know about the machine. Counts and kinds are derived from the
    per-CPU `topology` so that they cannot disagree with it."""

    logical_cpus: tuple[int, ...]  # online CPUs
    allowed_cpus: tuple[int, ...]  # the online CPUs this process may run on
    topology: tuple[LogicalCpu, ...]  # one per online CPU, in CPU order
    numa_nodes: int
    caches: tuple[Cache, ...]  # one per cache instance, sorted by (level, type, cpus)
    cpu_quota: float | None  # cgroup CPU bandwidth limit in CPUs; None when unlimited
    virtual: bool
    model_name: str
    kernel: str
    compiler: str
    huge_pages: str = ""  # transparent huge pages: always, madvise or never ("": not offered)

    @property
    def cores(self) -> int:
        return len({place.core for place in self.topology})

    @property
    def packages(self) -> int:
        return len({place.package for place in self.topology})

    @property
    def threads_per_core(self) -> int:
        """The most online hardware threads any core has (cores differ on hybrid parts and when
        a sibling is offline)."""
        return max(Counter(place.core for place in self.topology).values())

    @property
    def smt(self) -> bool:
        return self.threads_per_core > 1

    @property
    def cache_line_bytes(self) -> int:
        # The largest line any level reports: padding to it keeps apart what any level would share.
        return max((cache.line_bytes for cache in self.caches), default=DEFAULT_LINE_BYTES)

    @property
    def kind(self) -> tuple[str, ...]:
        """The multiprocessor kinds present: CMP (several cores in one package), SMP (several
        packages), SMT (several hardware threads per core). Empty for a single-CPU machine."""
        cores_per_package = Counter(
            package for package, _ in {(p.package, p.core) for p in self.topology}
        )
        kinds = {
            "CMP": max(cores_per_package.values()) > 1,
            "SMP": self.packages > 1,
            "SMT": self.smt,
        }
        return tuple(sorted(name for name, present in kinds.items() if present))

    @property
    def fingerprint(self) -> str:
        identity = {
            "model_name": self.model_name,
            "kernel": self.kernel,
            "compiler": self.compiler,
            "numa_nodes": self.numa_nodes,
            "topology": [[p.cpu, p.package, p.die, p.core, p.node] for p in self.topology],
            "caches": [cache.to_json() for cache in self.caches],
        }
        canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:FINGERPRINT_HEX_DIGITS]

    def place(self, cpu: int) -> LogicalCpu:
        """Where `cpu` sits: its package, die, core and NUMA node."""
        for place in self.topology:
            if place.cpu == cpu:
                return place
        raise UserError(f"CPU {cpu} is not an online CPU of this host (online: {self._online()})")

    def _online(self) -> str:
        return ",".join(str(cpu) for cpu in self.logical_cpus)

    def core_of(self, cpu: int) -> int:
        """The physical core (numbered 0..cores-1) that runs `cpu`."""
        return self.place(cpu).core

    def siblings(self, cpu: int) -> tuple[int, ...]:
        """The online hardware threads of `cpu`'s core, `cpu` included."""
        core = self.place(cpu).core
        return tuple(place.cpu for place in self.topology if place.core == core)

    def llc_groups(self) -> tuple[tuple[int, ...], ...]:
        """The CPUs of each last-level cache instance; empty when sysfs describes no caches."""
        data = [cache for cache in self.caches if cache.type != "Instruction"]
        last = max((cache.level for cache in data), default=0)
        return tuple(cache.cpus for cache in data if cache.level == last)

    def l2_bytes_per_core(self) -> int:
        """An L2's size over the cores sharing it; the smallest such share where they differ."""
        shares = [
            cache.size_bytes // len({self.core_of(cpu) for cpu in cache.cpus})
            for cache in self.caches
            if cache.level == 2 and cache.type != "Instruction"
        ]
        return min(shares, default=DEFAULT_L2_BYTES)

    def l1d_bytes(self) -> int:
        """The smallest level-1 data cache (unified on parts without a split L1)."""
        sizes = [c.size_bytes for c in self.caches if c.level == 1 and c.type != "Instruction"]
        return min(sizes, default=DEFAULT_L1D_BYTES)

    def topology_shape(self) -> TopologyShape:
        """The allowed CPUs with their core, package and last-level cache, the quota and
        whether this is a virtual machine: the value the thread search takes for the host."""
        llc_of = {cpu: i for i, group in enumerate(self.llc_groups()) for cpu in group}
        package_of = {p.cpu: p.package for p in self.topology}
        places = tuple(
            CpuPlace(cpu, self.core_of(cpu), package_of[cpu], llc_of.get(cpu, package_of[cpu]))
            for cpu in self.allowed_cpus
        )
        return TopologyShape(places, self.cpu_quota, self.virtual)

    def to_json(self) -> dict[str, object]:
        return {
            "logical_cpus": list(self.logical_cpus),
            "allowed_cpus": list(self.allowed_cpus),
            "cores": self.cores,
            "packages": self.packages,
            "threads_per_core": self.threads_per_core,
            "smt": self.smt,
            "numa_nodes": self.numa_nodes,
            "cache_line_bytes": self.cache_line_bytes,
            "caches": [cache.to_json() for cache in self.caches],
            "cpu_quota": self.cpu_quota,
            "virtual": self.virtual,
            "kind": list(self.kind),
            "model_name": self.model_name,
            "kernel": self.kernel,
            "compiler": self.compiler,
            "huge_pages": self.huge_pages,
            "fingerprint": self.fingerprint,
        }


def read_host(sysfs_root: Path = LIVE_SYSFS, proc_root: Path = LIVE_PROC) -> Host:
    """The host as sysfs and procfs under the given roots describe it.

    A recorded tree has no process: its allowed CPUs are its online CPUs and it has no CPU quota.
    Given a tree's sysfs and the default proc root, the tree's own `proc` (beside `sys`) is read,
    so that the live machine's /proc/cpuinfo is never mixed into another machine's description.
    """
    cpu_dir = _cpu_dir(sysfs_root)
    live = _same(sysfs_root, LIVE_SYSFS) and _same(proc_root, LIVE_PROC)
    if not _same(sysfs_root, LIVE_SYSFS) and proc_root == LIVE_PROC:
        proc_root = sysfs_root.parent / "proc"
    online = read_online(cpu_dir)
    numa_nodes, node_of = read_nodes(sysfs_root / "devices" / "system" / "node", online)
    info = read_cpuinfo(proc_root / "cpuinfo")
    cgroup_root, self_cgroup = sysfs_root / "fs" / "cgroup", proc_root / "self" / "cgroup"
    return Host(
        logical_cpus=online,
        allowed_cpus=read_allowed(online, cgroup_root, self_cgroup) if live else online,
        topology=read_cpus(cpu_dir, online, node_of),
        numa_nodes=numa_nodes,
        caches=read_caches(cpu_dir, online),
        cpu_quota=read_cpu_quota(cgroup_root, self_cgroup) if live else None,
        virtual=info.hypervisor,
        model_name=info.model_name,
        kernel=_kernel(sysfs_root),
        compiler=compiler_version(),
        huge_pages=read_huge_pages(sysfs_root / "kernel" / "mm" / "transparent_hugepage"),
    )


def _cpu_dir(sysfs_root: Path) -> Path:
    if not sysfs_root.is_dir():
        raise UserError(f"sysfs root {sysfs_root} does not exist or is not a directory")
    cpu_dir = sysfs_root / "devices" / "system" / "cpu"
    if not cpu_dir.is_dir():
        raise UserError(f"sysfs root {sysfs_root} has no devices/system/cpu: is it a sysfs tree?")
    return cpu_dir


def _kernel(sysfs_root: Path) -> str:
    if _same(sysfs_root, LIVE_SYSFS):
        return os.uname().release
    return read_text(sysfs_root.parent / "kernel") or "recorded"


def _same(path: Path, live: Path) -> bool:
    return path.resolve() == live


@functools.cache
def compiler_version() -> str:
    """The first line of `$CXX --version` (else `c++`, as Meson chooses): it names the compiler
    the measurements are built with, and its version."""
    try:
        done = subprocess.run(
            [*shlex.split(os.environ.get("CXX", "c++")), "--version"],
            capture_output=True,
            text=True,
            errors="replace",  # a name that is not UTF-8 still names it (header_text escapes it)
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    lines = done.stdout.splitlines()
    return lines[0].strip() if done.returncode == 0 and lines else "unknown"
