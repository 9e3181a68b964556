"""Write the sysfs/procfs trees tests/unit/test_host.py reads, deterministically, and the CPU-pair
matrices (make_matrices.py) tests/unit/test_topology.py classifies against them.

    python tests/data/sysfs/make_trees.py                 # regenerate the synthetic trees
    python tests/data/sysfs/make_trees.py --record NAME   # record this machine as tree NAME,
                                                          # its CPU pairs measured (matrix.json)

Each tree is a filesystem root: <tree>/sys/devices/system/{cpu,node}/..., <tree>/proc/cpuinfo and an
optional <tree>/kernel. Besides the files hspc_gen.host.machine reads (the *_list files) it holds
what hwloc reads (the hex masks), so `lstopo-no-graphics --input <tree>` parses the same machine and
the tests can cross-check the two. A recording copies only those files from the live /sys, and only
the cpuinfo fields either reader uses. A recording measures the machine's CPU pairs too, with
`hspc-gen host --save-matrix <tree>/matrix.json` (a few seconds; run it on a quiet machine, and on a
shared one under the measuring lock), which `hspc-gen host --sysfs-root <tree>/sys` then finds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from make_matrices import MATRIX_FILE, write_matrices

from hspc_gen.cpulist import format_cpu_list

HERE = Path(__file__).resolve().parent
_KiB = 1 << 10
_MiB = 1 << 20
CACHE_FILES = ("level", "type", "size", "coherency_line_size", "shared_cpu_list", "shared_cpu_map")
TOPOLOGY_FILES = (
    "physical_package_id",
    "die_id",
    "core_id",
    "core_cpus_list",
    "core_cpus",
    "package_cpus",
    "thread_siblings_list",
    "thread_siblings",
    "core_siblings",
)
CPUINFO_FIELDS = ("processor", "vendor_id", "cpu family", "model", "model name", "stepping")
CPUINFO_FIELDS_TAIL = ("physical id", "siblings", "core id", "cpu cores", "flags")


@dataclass(frozen=True)
class Shape:
    """A synthetic machine. CPUs are numbered as Linux numbers most x86 parts: the first thread
    of every core (package by package), then the second threads, and so on; `adjacent` numbers a
    core's threads consecutively instead, as some AMD firmware does."""

    name: str
    model_name: str
    vendor: str
    cpuid: tuple[int, int, int]  # cpu family, model, stepping
    packages: int
    cores_per_package: int
    threads_per_core: int
    caches: tuple[tuple[int, str, int], ...]  # (level, type, size in bytes) per core, L3 aside
    l3_bytes: int
    l3_per_package: int = 1
    adjacent: bool = False
    offline: tuple[int, ...] = ()
    old_kernel: bool = False  # before Linux 5.7: thread_siblings*, core_siblings, no die_id
    kernel: str | None = None
    virtual: bool = False  # a guest: cpuinfo's flags say "hypervisor"

    @property
    def cores(self) -> int:
        return self.packages * self.cores_per_package

    @property
    def cpus(self) -> int:
        return self.cores * self.threads_per_core

    def cpu(self, core: int, thread: int) -> int:
        """The CPU number of `thread` of global core `core`."""
        if self.adjacent:
            return core * self.threads_per_core + thread
        return thread * self.cores + core

    def core_cpus(self, core: int) -> list[int]:
        return [self.cpu(core, t) for t in range(self.threads_per_core)]

    def package_cpus(self, package: int) -> list[int]:
        first = package * self.cores_per_package
        return [
            c for core in range(first, first + self.cores_per_package) for c in self.core_cpus(core)
        ]

    def l3_cpus(self, package: int, group: int) -> list[int]:
        per_group = self.cores_per_package // self.l3_per_package
        first = package * self.cores_per_package + group * per_group
        return [c for core in range(first, first + per_group) for c in self.core_cpus(core)]


_SKYLAKE = ((1, "Data", 32 * _KiB), (1, "Instruction", 32 * _KiB))
SHAPES = (
    Shape(
        "1s-4c-8t",
        "Intel(R) Core(TM) i7-7700 CPU @ 3.60GHz",
        "GenuineIntel",
        (6, 158, 9),
        packages=1,
        cores_per_package=4,
        threads_per_core=2,
        caches=(*_SKYLAKE, (2, "Unified", 256 * _KiB)),
        l3_bytes=8 * _MiB,
        kernel="6.1.0-18-amd64",
    ),
    Shape(
        "2s-4c-nosmt",
        "Intel(R) Xeon(R) CPU E5-2609 v2 @ 2.50GHz",
        "GenuineIntel",
        (6, 62, 4),
        packages=2,
        cores_per_package=4,
        threads_per_core=1,
        caches=(*_SKYLAKE, (2, "Unified", 256 * _KiB)),
        l3_bytes=10 * _MiB,
        old_kernel=True,
        kernel="3.10.0-1160.el7.x86_64",
    ),
    Shape(
        "2s-8c-2t",
        "Intel(R) Xeon(R) Silver 4110 CPU @ 2.10GHz",
        "GenuineIntel",
        (6, 85, 4),
        packages=2,
        cores_per_package=8,
        threads_per_core=2,
        caches=(*_SKYLAKE, (2, "Unified", 1 * _MiB)),
        l3_bytes=11 * _MiB,
    ),
    Shape(
        "1s-8c-split-l3",
        "AMD Ryzen 7 2700X Eight-Core Processor",
        "AuthenticAMD",
        (23, 8, 2),
        packages=1,
        cores_per_package=8,
        threads_per_core=2,
        caches=((1, "Data", 32 * _KiB), (1, "Instruction", 64 * _KiB), (2, "Unified", 512 * _KiB)),
        l3_bytes=8 * _MiB,
        l3_per_package=2,
        adjacent=True,
    ),
    Shape(
        "1s-4c-8t-offline",
        "Intel(R) Core(TM) i7-7700 CPU @ 3.60GHz",
        "GenuineIntel",
        (6, 158, 9),
        packages=1,
        cores_per_package=4,
        threads_per_core=2,
        caches=(*_SKYLAKE, (2, "Unified", 256 * _KiB)),
        l3_bytes=8 * _MiB,
        offline=(5,),
    ),
    # The 16-CPU KVM guest of ../shared/data/many-core (Intel Xeon, family 6 model 207): 16 cores
    # of one thread in sysfs, one package, one NUMA node, 2 MiB L2 per core, one L3.
    Shape(
        "vm-16c",
        "Intel(R) Xeon(R) Processor",
        "GenuineIntel",
        (6, 207, 2),
        packages=1,
        cores_per_package=16,
        threads_per_core=1,
        caches=((1, "Data", 48 * _KiB), (1, "Instruction", 32 * _KiB), (2, "Unified", 2 * _MiB)),
        l3_bytes=300 * _MiB,
        kernel="6.18.0",
        virtual=True,
    ),
)


def cpu_mask(cpus: Iterable[int], nbits: int) -> str:
    """The kernel's bitmap format: hex, one digit per 4 possible CPUs, a comma every 32."""
    value = sum(1 << cpu for cpu in set(cpus))
    digits = f"{value:0{max(1, -(-nbits // 4))}x}"
    groups: list[str] = []
    while digits:
        groups.insert(0, digits[-8:])
        digits = digits[:-8]
    return ",".join(groups)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n", encoding="utf-8")


def write_shape(shape: Shape, root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)
    cpu_dir = root / "sys" / "devices" / "system" / "cpu"
    online = [cpu for cpu in range(shape.cpus) if cpu not in shape.offline]
    for name in ("possible", "present"):
        write(cpu_dir / name, f"0-{shape.cpus - 1}")
    write(cpu_dir / "online", format_cpu_list(online))
    # CPU 0 cannot be taken offline on x86, so the kernel gives it no `online` file.
    for cpu in range(1, shape.cpus):
        write(cpu_dir / f"cpu{cpu}" / "online", "0" if cpu in shape.offline else "1")
    for core in range(shape.cores):
        for cpu in shape.core_cpus(core):
            if cpu not in shape.offline:
                _write_topology(shape, cpu_dir / f"cpu{cpu}" / "topology", core, online)
                _write_caches(shape, cpu_dir / f"cpu{cpu}" / "cache", core, online)
    _write_nodes(shape, root / "sys" / "devices" / "system" / "node", online)
    write(root / "proc" / "cpuinfo", _cpuinfo(shape, online))
    if shape.kernel is not None:
        write(root / "kernel", shape.kernel)


def _write_topology(shape: Shape, topology: Path, core: int, online: list[int]) -> None:
    # The kernel drops offline CPUs from every sibling mask.
    package = core // shape.cores_per_package
    siblings = [c for c in shape.core_cpus(core) if c in online]
    in_package = [c for c in shape.package_cpus(package) if c in online]
    files = {
        "physical_package_id": str(package),
        "core_id": str(core % shape.cores_per_package),
    }
    if shape.old_kernel:
        files["thread_siblings_list"] = format_cpu_list(siblings)
        files["thread_siblings"] = cpu_mask(siblings, shape.cpus)
        files["core_siblings"] = cpu_mask(in_package, shape.cpus)
    else:
        files["die_id"] = "0"
        files["core_cpus_list"] = format_cpu_list(siblings)
        files["core_cpus"] = cpu_mask(siblings, shape.cpus)
        files["package_cpus"] = cpu_mask(in_package, shape.cpus)
    for name, text in files.items():
        write(topology / name, text)


def _write_caches(shape: Shape, cache_dir: Path, core: int, online: list[int]) -> None:
    package = core // shape.cores_per_package
    group = core % shape.cores_per_package // (shape.cores_per_package // shape.l3_per_package)
    per_core = [(level, kind, size, shape.core_cpus(core)) for level, kind, size in shape.caches]
    l3 = (3, "Unified", shape.l3_bytes, shape.l3_cpus(package, group))
    for index, (level, kind, size, cpus) in enumerate([*per_core, l3]):
        shared = [c for c in cpus if c in online]
        files = {
            "level": str(level),
            "type": kind,
            "size": f"{size // _KiB}K",
            "coherency_line_size": "64",
            "shared_cpu_list": format_cpu_list(shared),
            "shared_cpu_map": cpu_mask(shared, shape.cpus),
        }
        for name, text in files.items():
            write(cache_dir / f"index{index}" / name, text)


def _write_nodes(shape: Shape, node_dir: Path, online: list[int]) -> None:
    """One NUMA node per package, as on every multi-socket x86 server."""
    nodes = f"0-{shape.packages - 1}" if shape.packages > 1 else "0"
    write(node_dir / "online", nodes)
    write(node_dir / "possible", nodes)
    for package in range(shape.packages):
        cpus = [c for c in shape.package_cpus(package) if c in online]
        write(node_dir / f"node{package}" / "cpulist", format_cpu_list(cpus))
        write(node_dir / f"node{package}" / "cpumap", cpu_mask(cpus, shape.cpus))


def _cpuinfo(shape: Shape, online: list[int]) -> str:
    blocks = []
    for cpu in online:
        core = next(c for c in range(shape.cores) if cpu in shape.core_cpus(c))
        package = core // shape.cores_per_package
        family, model, stepping = shape.cpuid
        fields = {
            "processor": cpu,
            "vendor_id": shape.vendor,
            "cpu family": family,
            "model": model,
            "model name": shape.model_name,
            "stepping": stepping,
            "physical id": package,
            "siblings": len([c for c in shape.package_cpus(package) if c in online]),
            "core id": core % shape.cores_per_package,
            "cpu cores": shape.cores_per_package,
            "flags": "fpu tsc cx8 sse2"
            + (" ht" if shape.threads_per_core > 1 else "")
            + (" hypervisor" if shape.virtual else ""),
        }
        blocks.append("\n".join(f"{key}\t: {value}" for key, value in fields.items()))
    return "\n\n".join(blocks) + "\n"


def write_cgroups(out: Path) -> None:
    """cgroup hierarchies for the quota and cpuset readers: v2 with a limit on an ancestor, v1
    inside a container; each `proc/<view>/cgroup` is one process's view of them."""
    v2 = out / "cgroup" / "v2"
    shutil.rmtree(v2, ignore_errors=True)
    fs = v2 / "sys" / "fs" / "cgroup"
    write(fs / "cgroup.controllers", "cpuset cpu io memory pids")
    write(fs / "cpuset.cpus.effective", "0-63")
    write(fs / "app.slice" / "cpu.max", "150000 100000")
    write(fs / "app.slice" / "job" / "cpu.max", "max 100000")
    write(fs / "app.slice" / "job" / "cpuset.cpus.effective", "1-3")
    write(v2 / "proc" / "self" / "cgroup", "0::/app.slice/job")
    write(v2 / "proc" / "unlimited" / "cgroup", "0::/")
    v1 = out / "cgroup" / "v1"
    shutil.rmtree(v1, ignore_errors=True)
    cpu = v1 / "sys" / "fs" / "cgroup" / "cpu"
    write(cpu / "cpu.cfs_quota_us", "-1")
    write(cpu / "cpu.cfs_period_us", "100000")
    write(cpu / "docker" / "abc" / "cpu.cfs_quota_us", "250000")
    write(cpu / "docker" / "abc" / "cpu.cfs_period_us", "100000")
    write(v1 / "proc" / "self" / "cgroup", "12:cpu,cpuacct:/docker/abc\n0::/")
    write(v1 / "proc" / "namespaced" / "cgroup", "12:cpu,cpuacct:/kubepods/xyz\n0::/")


def generate_all(out: Path) -> None:
    for shape in SHAPES:
        write_shape(shape, out / shape.name)
    write_cgroups(out)
    write_matrices(out)


def record(root: Path, sys_root: Path = Path("/sys"), proc_root: Path = Path("/proc")) -> None:
    """Copy this machine's topology files, and nothing else, into the tree `root`."""
    shutil.rmtree(root, ignore_errors=True)
    cpu_dir = Path("devices") / "system" / "cpu"
    node_dir = Path("devices") / "system" / "node"
    wanted = [cpu_dir / name for name in ("online", "possible", "present")]
    for cpu in sorted((sys_root / cpu_dir).glob("cpu[0-9]*")):
        wanted.append(cpu.relative_to(sys_root) / "online")
        wanted += [cpu.relative_to(sys_root) / "topology" / name for name in TOPOLOGY_FILES]
        for index in sorted((cpu / "cache").glob("index[0-9]*")):
            wanted += [index.relative_to(sys_root) / name for name in CACHE_FILES]
    wanted += [node_dir / "online", node_dir / "possible"]
    for node in sorted((sys_root / node_dir).glob("node[0-9]*")):
        wanted += [node.relative_to(sys_root) / name for name in ("cpulist", "cpumap")]
    for relative in wanted:
        if (sys_root / relative).is_file():
            write(root / "sys" / relative, (sys_root / relative).read_text().strip())
    keep = (*CPUINFO_FIELDS, *CPUINFO_FIELDS_TAIL)
    lines = (proc_root / "cpuinfo").read_text().splitlines()
    kept = [line for line in lines if not line.strip() or line.split(":")[0].strip() in keep]
    write(root / "proc" / "cpuinfo", "\n".join(kept).strip() + "\n")
    write(root / "kernel", os.uname().release)


def record_matrix(root: Path) -> None:
    """This machine's CPU pairs, measured by hspc-gen itself, beside the tree `root` (a cache of
    its own: a recording leaves the user's record store alone)."""
    with tempfile.TemporaryDirectory() as cache:
        save = ["host", "--save-matrix", str(root / MATRIX_FILE), "--cache", cache]
        hspc_gen = [sys.executable, "-m", "hspc_gen", *save]
        subprocess.run(hspc_gen, check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description="Write the sysfs trees the host tests read.")
    parser.add_argument("--record", metavar="NAME", help="record this machine as tree NAME")
    parser.add_argument("--no-matrix", action="store_true", help="record no CPU-pair matrix")
    parser.add_argument("--out", type=Path, default=HERE, help="where the trees go")
    args = parser.parse_args()
    if args.record:
        record(args.out / args.record)
        if not args.no_matrix:
            record_matrix(args.out / args.record)
    else:
        generate_all(args.out)


if __name__ == "__main__":
    main()
