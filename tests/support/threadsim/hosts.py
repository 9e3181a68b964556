"""The simulated machines: what sysfs tells the search, and what the CPUs really are.

Issue 23's hosts: 16, 64 and 128 CPUs on two sockets with two hardware threads per core, and
cloud guests whose sysfs says "one thread per core" while pairs of their vCPUs are siblings of
one physical core (the guide's many-core.md: only measurement shows it). The OS of such a guest
spreads threads over vCPUs as if each were a core (pool.py's `hidden_smt`), and a "compact"
placement can put a producer and its consumer on one core without knowing.
"""

from __future__ import annotations

from dataclasses import dataclass

from hspc_gen.model.shape import CpuPlace, TopologyShape


@dataclass(frozen=True)
class Machine:
    name: str
    shape: TopologyShape  # what sysfs says: the search sees this
    physical: TopologyShape  # what the CPUs are: the simulator's physics runs on this
    multiplexed: bool = True  # False: the CPUs shared as issue 5's fluid model did (pool.py)

    @property
    def hidden_smt(self) -> bool:
        """The guest's OS cannot see which of its CPUs share a core."""
        return self.physical.threads_per_core > self.shape.threads_per_core

    @property
    def cpus(self) -> int:
        return len(self.shape.places)


def two_sockets(cores_per_package: int, llc_per_package: int = 1) -> Machine:
    shape = TopologyShape.uniform(
        packages=2,
        cores_per_package=cores_per_package,
        threads_per_core=2,
        llc_per_package=llc_per_package,
    )
    return Machine(f"{4 * cores_per_package}cpu-2s-smt2", shape, shape)


def guest(vcpus: int) -> Machine:
    """A one-socket guest of `vcpus` vCPUs declared as cores; vCPUs 2i and 2i+1 are really the
    two hardware threads of physical core i (as a hypervisor pins them in pairs)."""
    declared = TopologyShape.uniform(cores_per_package=vcpus, virtual=True)
    physical = TopologyShape(
        tuple(CpuPlace(cpu=v, core=v // 2, package=0, llc=0) for v in range(vcpus)),
        virtual=True,
    )
    return Machine(f"{vcpus}vcpu-guest-hidden-smt", declared, physical)


MACHINES: tuple[Machine, ...] = (
    two_sockets(4),
    guest(16),
    two_sockets(16),
    guest(64),
    two_sockets(32, llc_per_package=4),
)
"""16, 64 and 128 CPUs (the last with four last-level caches per socket), and the guests."""
