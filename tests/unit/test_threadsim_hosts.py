"""threadsim.hosts: issue 23's machines of 16, 64 and 128 CPUs, and guests
whose sysfs hides the siblings their vCPUs are."""

from __future__ import annotations

from threadsim.hosts import MACHINES, guest


def test_the_machines_have_16_64_and_128_cpus_on_two_sockets_with_smt() -> None:
    metal = [m for m in MACHINES if not m.hidden_smt]
    assert sorted(m.cpus for m in metal) == [16, 64, 128]
    for m in metal:
        assert m.shape == m.physical
        assert m.shape.packages == 2 and m.shape.threads_per_core == 2
    assert max(len(m.shape.llc_groups()) for m in metal) == 8  # four caches a socket


def test_a_guest_says_one_thread_per_core_while_its_vcpus_pair_up() -> None:
    vm = guest(16)
    assert vm.hidden_smt and vm.shape.virtual
    assert vm.shape.threads_per_core == 1 and vm.shape.cores == 16
    assert vm.physical.threads_per_core == 2 and vm.physical.cores == 8
    assert vm.physical.siblings(2) == (2, 3) and vm.shape.siblings(2) == (2,)
    assert {m.cpus for m in MACHINES if m.hidden_smt} == {16, 64}
