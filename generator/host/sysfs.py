"""Readers for Linux sysfs and procfs: the raw facts `machine.read_host` assembles into a `Host`.

Every reader takes its directory as an argument, so a recorded tree under tests/data/sysfs reads
exactly as the live /sys does. A file that is missing is an answer ("the kernel does not say");
a file that is there but malformed is the user's to fix (UserError naming it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from hspc_gen.cpulist import parse_cpu_list
from hspc_gen.errors import UserError

# Where the kernel leaves coherency_line_size out (some ARM and virtual machines), 64 bytes is the
# line of every mainstream x86 and ARM core; padding to it is what a compiler's
# hardware_destructive_interference_size would do too.
DEFAULT_LINE_BYTES = 64
_SYSFS_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_CPU_DIR = re.compile(r"cpu(\d+)")


@dataclass(frozen=True)
class Cache:
    """One cache instance: a level and type, and the online CPUs that share it."""

    level: int
    type: str  # "Data", "Instruction" or "Unified", as sysfs spells it
    size_bytes: int
    line_bytes: int
    cpus: tuple[int, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "level": self.level,
            "type": self.type,
            "size_bytes": self.size_bytes,
            "line_bytes": self.line_bytes,
            "cpus": list(self.cpus),
        }


@dataclass(frozen=True)
class LogicalCpu:
    """Where one online logical CPU sits: `core` numbers the physical cores 0.. in order of
    their lowest CPU, because sysfs core_id is only unique within a package (and die)."""

    cpu: int
    package: int
    die: int
    core: int
    node: int


@dataclass(frozen=True)
class CpuInfo:
    model_name: str
    hypervisor: bool


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise UserError(f"{path}: cannot read: {error.strerror}") from None


def read_int(path: Path) -> int | None:
    text = read_text(path)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise UserError(f"{path}: expected an integer, found {text!r}") from None


def read_size(path: Path) -> int | None:
    """sysfs cache sizes: "48K", "32768K", "1M"."""
    text = read_text(path)
    if text is None:
        return None
    match = re.fullmatch(r"(\d+)\s*([KMG]?)", text)
    if match is None:
        raise UserError(f"{path}: expected a size such as 48K, found {text!r}")
    return int(match[1]) * _SYSFS_SIZE_UNITS[match[2]]


def read_online(cpu_dir: Path) -> tuple[int, ...]:
    """The online CPUs: cpuN directories remain for offline CPUs, so the `online` list decides."""
    online_file = cpu_dir / "online"
    text = read_text(online_file)
    if text is not None:
        cpus = parse_cpu_list(text, online_file)
    else:
        cpus = tuple(
            sorted(
                int(match[1])
                for entry in cpu_dir.iterdir()
                if (match := _CPU_DIR.fullmatch(entry.name)) and read_int(entry / "online") != 0
            )
        )
    if not cpus:
        raise UserError(f"{cpu_dir}: no online CPUs")
    return cpus


def read_nodes(node_dir: Path, online: Iterable[int]) -> tuple[int, dict[int, int]]:
    """The NUMA node count and each online CPU's node; without NUMA in the kernel, one node."""
    online_file = node_dir / "online"
    text = read_text(online_file)
    if text is None:
        return 1, {}
    nodes = parse_cpu_list(text, online_file)
    wanted = set(online)
    node_of: dict[int, int] = {}
    for node in nodes:
        cpulist = node_dir / f"node{node}" / "cpulist"
        for cpu in parse_cpu_list(read_text(cpulist) or "", cpulist):
            if cpu in wanted:
                node_of[cpu] = node
    return max(len(nodes), 1), node_of


def _core_siblings(topology: Path, cpu: int, online: frozenset[int]) -> frozenset[int]:
    # core_cpus_list is the name since Linux 5.7; thread_siblings_list the older one.
    for name in ("core_cpus_list", "thread_siblings_list"):
        text = read_text(topology / name)
        if text is not None:
            return frozenset(parse_cpu_list(text, topology / name)) & online | {cpu}
    return frozenset({cpu})


def read_cpus(
    cpu_dir: Path, online: tuple[int, ...], node_of: Mapping[int, int]
) -> tuple[LogicalCpu, ...]:
    """Each online CPU's package, die, physical core and NUMA node."""
    online_set = frozenset(online)
    siblings: dict[int, frozenset[int]] = {}
    places: dict[int, tuple[int, int]] = {}
    for cpu in online:
        topology = cpu_dir / f"cpu{cpu}" / "topology"
        siblings[cpu] = _core_siblings(topology, cpu, online_set)
        package = read_int(topology / "physical_package_id")
        die = read_int(topology / "die_id")
        places[cpu] = (package or 0, die or 0)
    core_numbers: dict[frozenset[int], int] = {}
    for cpu in online:
        core_numbers.setdefault(siblings[cpu], len(core_numbers))
    return tuple(
        LogicalCpu(cpu, *places[cpu], core_numbers[siblings[cpu]], node_of.get(cpu, 0))
        for cpu in online
    )


def _read_cache(index: Path, cpu: int, online: frozenset[int]) -> Cache | None:
    level = read_int(index / "level")
    kind = read_text(index / "type")
    size = read_size(index / "size")
    if level is None or kind is None or size is None:
        return None
    shared_file = index / "shared_cpu_list"
    shared_text = read_text(shared_file)
    shared = set(parse_cpu_list(shared_text, shared_file)) if shared_text is not None else set()
    line = read_int(index / "coherency_line_size")
    cpus = tuple(sorted(shared & online | {cpu}))
    return Cache(level, kind, size, line or DEFAULT_LINE_BYTES, cpus)


def read_caches(cpu_dir: Path, online: tuple[int, ...]) -> tuple[Cache, ...]:
    """Every cache instance once: each CPU lists the caches it sees, so shared ones repeat."""
    online_set = frozenset(online)
    found: dict[tuple[int, str, tuple[int, ...]], Cache] = {}
    for cpu in online:
        cache_dir = cpu_dir / f"cpu{cpu}" / "cache"
        if not cache_dir.is_dir():
            continue
        for index in cache_dir.iterdir():
            if not index.name.startswith("index"):
                continue
            cache = _read_cache(index, cpu, online_set)
            if cache is not None:
                found.setdefault((cache.level, cache.type, cache.cpus), cache)
    return tuple(found[key] for key in sorted(found))


def read_cpuinfo(path: Path) -> CpuInfo:
    """The model name (x86 "model name", ARM "Model"/"CPU part" aside) and the hypervisor flag
    x86 guests see; a missing file says neither."""
    fields: dict[str, str] = {}
    for line in (read_text(path) or "").splitlines():
        key, colon, value = line.partition(":")
        if colon:
            fields.setdefault(key.strip(), value.strip())
    model = fields.get("model name") or fields.get("Model") or fields.get("cpu model") or "unknown"
    return CpuInfo(model, "hypervisor" in fields.get("flags", "").split())


def _cgroup_paths(self_cgroup: Path) -> dict[str, str]:
    """/proc/self/cgroup as {controller: path}; the v2 unified hierarchy under the key ""."""
    paths: dict[str, str] = {}
    for line in (read_text(self_cgroup) or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(","):
                paths[controller] = parts[2]
    return paths


def _own_and_ancestors(mount: Path, path: str) -> list[Path]:
    """Our cgroup's directory under `mount`, then each parent up to the mount itself."""
    own = mount / path.strip("/")
    # Inside a cgroup namespace (containers) /proc/self/cgroup may name a path the mount does not
    # show: the mount root is then our own cgroup.
    if not own.is_dir():
        own = mount
    chain = [own]
    while chain[-1] != mount:
        chain.append(chain[-1].parent)
    return chain


def _v2_quota(directory: Path) -> float | None:
    text = read_text(directory / "cpu.max")
    if text is None or text.startswith("max"):
        return None
    try:
        quota, period = (int(word) for word in text.split()[:2])
    except ValueError:
        raise UserError(
            f"{directory / 'cpu.max'}: expected 'QUOTA PERIOD', found {text!r}"
        ) from None
    return quota / period if quota > 0 and period > 0 else None


def _v1_quota(directory: Path) -> float | None:
    quota = read_int(directory / "cpu.cfs_quota_us")
    period = read_int(directory / "cpu.cfs_period_us")
    if quota is None or period is None or quota <= 0 or period <= 0:
        return None
    return quota / period


def read_cpu_quota(cgroup_root: Path, self_cgroup: Path) -> float | None:
    """The tightest CPU bandwidth limit on our cgroup and its ancestors, in CPUs; None if none.

    cgroup v2 (cpu.max) first; cgroup v1 (cpu.cfs_quota_us), still common on older hosts, after.
    """
    paths = _cgroup_paths(self_cgroup)
    quotas: list[float | None] = []
    if (cgroup_root / "cgroup.controllers").is_file():
        quotas = [_v2_quota(d) for d in _own_and_ancestors(cgroup_root, paths.get("", "/"))]
    elif (cgroup_root / "cpu").is_dir():
        mount = cgroup_root / "cpu"
        quotas = [_v1_quota(d) for d in _own_and_ancestors(mount, paths.get("cpu", "/"))]
    limits = [q for q in quotas if q is not None]
    return min(limits) if limits else None


def read_allowed(online: Iterable[int], cgroup_root: Path, self_cgroup: Path) -> tuple[int, ...]:
    """The CPUs this process may run on: its affinity, within the cgroup's cpuset."""
    allowed = set(os.sched_getaffinity(0)) & set(online)
    own = _own_and_ancestors(cgroup_root, _cgroup_paths(self_cgroup).get("", "/"))[0]
    effective = own / "cpuset.cpus.effective"
    # Current kernels already keep affinity inside the cpuset; intersecting keeps it so on any
    # that do not, and costs one read.
    text = read_text(effective)
    if text:
        allowed &= set(parse_cpu_list(text, effective))
    return tuple(sorted(allowed))


def read_huge_pages(folder: Path) -> str:
    """The transparent huge pages mode, the bracketed word of `enabled` ("" when not offered)."""
    try:
        text = (folder / "enabled").read_text(encoding="utf-8")
    except OSError:
        return ""
    start, end = text.find("["), text.find("]")
    return text[start + 1 : end] if 0 <= start < end else ""
