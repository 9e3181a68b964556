"""`describe(host)`: the host for a person to read, in the spirit of lstopo's summary."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from hspc_gen.cpulist import format_cpu_list
from hspc_gen.host.sysfs import Cache

if TYPE_CHECKING:
    from hspc_gen.host.machine import Host

_TYPE_SUFFIX = {"Data": "d", "Instruction": "i", "Unified": ""}
# Beyond this many instances of one cache, their CPU sets make a line too long to read.
_MAX_LISTED_INSTANCES = 4


def describe(host: Host) -> str:
    lines = [
        f"Host {host.fingerprint}",
        f"  Model      {host.model_name}{' (virtual machine)' if host.virtual else ''}",
        f"  Kind       {' '.join(host.kind) or 'uniprocessor'}",
        f"  Packages   {host.packages}",
        *_packages(host),
        f"  Cores      {host.cores} ({_threads(host)})",
        f"  CPUs       {len(host.logical_cpus)} online: {format_cpu_list(host.logical_cpus)}",
        f"  Allowed    {len(host.allowed_cpus)} of {len(host.logical_cpus)}: "
        f"{format_cpu_list(host.allowed_cpus) or 'none'}",
        f"  CPU quota  {_quota(host.cpu_quota)}",
        f"  NUMA       {_count(host.numa_nodes, 'node')}",
        *_nodes(host),
        f"  Caches     {host.cache_line_bytes}-byte lines",
        *_caches(host),
        f"  Kernel     {host.kernel}",
        f"  Compiler   {host.compiler}",
    ]
    return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _threads(host: Host) -> str:
    if host.cores * host.threads_per_core == len(host.logical_cpus):
        return f"{_count(host.threads_per_core, 'thread')} per core"
    return f"up to {_count(host.threads_per_core, 'thread')} per core"


def _quota(quota: float | None) -> str:
    return "none" if quota is None else f"{quota:g} CPUs (cgroup limit)"


def _packages(host: Host) -> list[str]:
    cpus: dict[int, list[int]] = defaultdict(list)
    cores: dict[int, set[int]] = defaultdict(set)
    for place in host.topology:
        cpus[place.package].append(place.cpu)
        cores[place.package].add(place.core)
    return [
        f"    package {package}: {_count(len(cores[package]), 'core')}, "
        f"CPUs {format_cpu_list(cpus[package])}"
        for package in sorted(cpus)
    ]


def _nodes(host: Host) -> list[str]:
    cpus: dict[int, list[int]] = defaultdict(list)
    for place in host.topology:
        cpus[place.node].append(place.cpu)
    if host.numa_nodes == 1:
        return []
    return [f"    node {node}: CPUs {format_cpu_list(cpus[node])}" for node in sorted(cpus)]


def _size(size_bytes: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size_bytes >= scale and size_bytes % scale == 0:
            return f"{size_bytes // scale} {unit}"
    return f"{size_bytes} B"


def _caches(host: Host) -> list[str]:
    if not host.caches:
        return ["    (sysfs describes no caches)"]
    kinds: dict[tuple[int, str], list[Cache]] = defaultdict(list)
    for cache in host.caches:
        kinds[(cache.level, cache.type)].append(cache)
    return [_cache_line(host, instances) for _, instances in sorted(kinds.items())]


def _cache_line(host: Host, instances: list[Cache]) -> str:
    first = instances[0]
    name = f"L{first.level}{_TYPE_SUFFIX.get(first.type, '?')}"
    sizes = "/".join(_size(size) for size in sorted({c.size_bytes for c in instances}))
    head = f"    {name:<4} {sizes} x {len(instances)}"
    if all(cache.cpus == host.siblings(cache.cpus[0]) for cache in instances):
        return f"{head}, one per core"
    widths = sorted({len(cache.cpus) for cache in instances})
    sharing = f"shared by {'/'.join(str(w) for w in widths)} CPUs"
    if len(instances) > _MAX_LISTED_INSTANCES:
        return f"{head}, each {sharing}"
    listed = " | ".join(format_cpu_list(cache.cpus) for cache in instances)
    return f"{head}, {'each ' if len(instances) > 1 else ''}{sharing}: {listed}"
