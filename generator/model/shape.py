"""The host's CPUs as the thread search takes them: a frozen value, built by the host
(`Host.topology_shape`) and passed down, so the search never reads a Host.

A TopologyShape is the part of a Host the thread search needs (allowed CPUs with their core,
package and last-level cache, the cgroup quota, whether it is a virtual machine). Tests build
shapes of 2 to 128 CPUs with `uniform` instead of writing sysfs trees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hspc_gen.model.threads import Capacity

SMT_YIELD = 0.3
"""What a second hardware thread adds to its core: Saunders et al. measured 33-35% offloaded."""


@dataclass(frozen=True, order=True)
class CpuPlace:
    cpu: int
    core: int  # physical core, unique across packages
    package: int
    llc: int  # index of the last-level cache instance


@dataclass(frozen=True)
class TopologyShape:
    places: tuple[CpuPlace, ...]  # the CPUs this process may run on, in CPU order
    cpu_quota: float | None = None  # cgroup CPU bandwidth in CPUs; None: unlimited
    virtual: bool = False

    def __post_init__(self) -> None:
        if not self.places:
            raise ValueError("a topology needs at least one allowed CPU")

    @classmethod
    def uniform(
        cls,
        *,
        packages: int = 1,
        cores_per_package: int,
        threads_per_core: int = 1,
        llc_per_package: int = 1,
        cpu_quota: float | None = None,
        virtual: bool = False,
    ) -> TopologyShape:
        """A regular machine numbered as Linux numbers most x86 parts: the first hardware thread
        of every core, package by package, then the second threads, and so on."""
        cores = packages * cores_per_package
        per_llc = cores_per_package // llc_per_package
        places = [
            CpuPlace(
                cpu=t * cores + core,
                core=core,
                package=core // cores_per_package,
                llc=core // per_llc,
            )
            for t in range(threads_per_core)
            for core in range(cores)
        ]
        return cls(tuple(sorted(places)), cpu_quota, virtual)

    @property
    def cpus(self) -> tuple[int, ...]:
        return tuple(p.cpu for p in self.places)

    @property
    def cores(self) -> int:
        return len({p.core for p in self.places})

    @property
    def packages(self) -> int:
        return len({p.package for p in self.places})

    @property
    def threads_per_core(self) -> int:
        return max(len(self.siblings(p.cpu)) for p in self.places)

    def place(self, cpu: int) -> CpuPlace:
        for p in self.places:
            if p.cpu == cpu:
                return p
        raise KeyError(cpu)

    def siblings(self, cpu: int) -> tuple[int, ...]:
        """The allowed hardware threads of `cpu`'s core, `cpu` included."""
        core = self.place(cpu).core
        return tuple(p.cpu for p in self.places if p.core == core)

    def llc_groups(self) -> tuple[tuple[int, ...], ...]:
        """The allowed CPUs of each last-level cache, in order of their lowest CPU."""
        groups: dict[int, list[int]] = {}
        for p in self.places:
            groups.setdefault(p.llc, []).append(p.cpu)
        return tuple(sorted(tuple(g) for g in groups.values()))

    def usable_cpus(self) -> float:
        """Logical CPUs the process can keep busy at once: the allowed ones, capped by quota."""
        return min(float(len(self.places)), self.cpu_quota or math.inf)

    def core_equivalents(self) -> float:
        """Throughput capacity in whole cores: every core, each extra sibling a SMT_YIELD of
        one, capped by the quota."""
        extra = len(self.places) - self.cores
        return min(self.cores + SMT_YIELD * extra, self.cpu_quota or math.inf)

    def capacity(self) -> Capacity:
        """The shape as the result reports it."""
        return Capacity(
            cpus=len(self.places),
            cores=self.cores,
            threads_per_core=self.threads_per_core,
            packages=self.packages,
            llc_groups=len(self.llc_groups()),
            cpu_quota=self.cpu_quota,
            core_equivalents=self.core_equivalents(),
            virtual=self.virtual,
        )
