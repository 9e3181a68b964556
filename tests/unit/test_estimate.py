"""hspc_gen.estimate: every parameter from the host's topology, within the target's limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from hspc_gen import estimate, wiring
from hspc_gen.errors import UserError
from hspc_gen.host.machine import read_host
from hspc_gen.model import (
    DEFAULT_SPIN_NS,
    LIMITS,
    PinThreads,
    Primitive,
    SpinBudgets,
    smallest_buffer_memory,
)
from hspc_gen.model.topology import TopologyOutcome, TopologyStatus
from hspc_gen.target.app import load_target
from hspc_gen.target.params import fit_memory
from hspc_gen.topology.classes import classify
from hspc_gen.topology.text import read_matrix

SYSFS = Path(__file__).resolve().parents[1] / "data" / "sysfs"
HOSTS = ("epyc-2c-vm", "1s-4c-8t", "2s-8c-2t")


# Every bound app.yaml accepts for the event (it refuses the smaller ones: test_target).
BOUNDS = [
    (event, memory)
    for event in (1, 8, 24, 100, 4096)
    for memory in (128, 511, 512, 1000, 4096, 1 << 20, 4 << 20)
    if memory >= smallest_buffer_memory(event)
]


@pytest.mark.parametrize("host_name", HOSTS)
@pytest.mark.parametrize(("event_bytes", "memory"), BOUNDS)
def test_the_estimate_never_exceeds_the_memory_bound(
    host_name: str, event_bytes: int, memory: int
) -> None:
    host = read_host(SYSFS / host_name / "sys")
    point = estimate.estimate(host, event_bytes, memory, tuple(Primitive), PinThreads.auto)
    assert point.buffers * point.buffer_bytes <= memory
    assert point.buffer_bytes >= event_bytes and LIMITS["buffers"].allows(point.buffers)
    assert LIMITS["buffer_bytes"].allows(point.buffer_bytes)


def test_free_parameters_give_way_to_the_memory_bound_and_fixed_ones_are_refused() -> None:
    host = read_host(SYSFS / "epyc-2c-vm" / "sys")
    point = estimate.estimate(host, 8, 4 << 20, tuple(Primitive), PinThreads.auto)
    many = point.replace(buffers=64)
    fitted = fit_memory(many, {"buffers": 64}, 8192, 8)
    assert (fitted.buffers, fitted.buffer_bytes) == (64, 128)
    big = point.replace(buffer_bytes=4096)
    assert fit_memory(big, {"buffer_bytes": 4096}, 8192, 8).buffers == 2
    with pytest.raises(UserError, match=r"--set buffers=64: 64 buffer\(s\) of 64B take 4KiB"):
        fit_memory(many, {"buffers": 64}, 512, 8)


def test_a_primitive_set_on_the_command_line_starts_at_its_own_spin_budget() -> None:
    host = read_host(SYSFS / "epyc-2c-vm" / "sys")
    target = load_target(Path(__file__).resolve().parents[2] / "examples" / "bare.yaml")
    budgets = SpinBudgets(sleep_ns=28_000, yield_ns=2_450)
    estimated = wiring.estimated_params(target, host, {}, budgets)
    assert (estimated.primitive, estimated.spin_ns) == (Primitive.futex, DEFAULT_SPIN_NS)
    hybrid = wiring.estimated_params(target, host, {"primitive": Primitive.hybrid}, budgets)
    assert hybrid.spin_ns == 28_000
    spinlock = wiring.estimated_params(target, host, {"primitive": Primitive.spinlock}, budgets)
    assert spinlock.spin_ns == 2_450
    told: dict[str, int | Primitive] = {"primitive": Primitive.hybrid, "spin_ns": 700}
    assert wiring.estimated_params(target, host, told, budgets).spin_ns == 700


def measured(tree: str, matrix: str = "matrix.json") -> TopologyOutcome:
    host = read_host(SYSFS / tree / "sys")
    topology = classify(host, read_matrix(SYSFS / tree / matrix))
    return TopologyOutcome(TopologyStatus.recorded, topology)


def test_siblings_a_guest_hides_from_sysfs_but_its_pairs_measure_move_the_stack() -> None:
    """A 16-vCPU guest whose sysfs says one thread per core, measured with hidden siblings:
    the estimate offsets the stacks, as it does for siblings sysfs declares."""
    host = read_host(SYSFS / "vm-16c" / "sys")
    target = load_target(Path(__file__).resolve().parents[2] / "examples" / "app.yaml")
    assert not host.smt
    declared = wiring.estimated_params(target, host, {})
    hidden = wiring.estimated_params(
        target, host, {}, topology=measured("vm-16c", "matrix-hidden-smt.json")
    )
    plain = wiring.estimated_params(target, host, {}, topology=measured("vm-16c"))
    assert declared.stack_offset_bytes == plain.stack_offset_bytes == 0
    assert hidden.stack_offset_bytes == 4096 + 4 * host.cache_line_bytes
    unmeasured = TopologyOutcome(TopologyStatus.recorded, None)
    assert wiring.measured_pairs(unmeasured) is None and wiring.measured_pairs(None) is None


@pytest.mark.parametrize(
    ("tree", "matrix"),
    [("vm-16c", "matrix-hidden-smt.json"), ("2s-8c-2t", "matrix.json"), ("vm-16c", "matrix.json")],
)
def test_a_pinned_estimate_takes_the_fastest_measured_pair_of_two_cores(
    tree: str, matrix: str
) -> None:
    host = read_host(SYSFS / tree / "sys")
    outcome = measured(tree, matrix)
    pairs = wiring.measured_pairs(outcome)
    assert pairs is not None and pairs.smt == (host.smt or "hidden" in matrix)
    producer, consumer = estimate.placement(host, PinThreads.always, pairs)
    assert outcome.topology is not None
    (near,) = [c for c in outcome.topology.classes if c.name != "smt_sibling"][:1]
    assert (producer, consumer) == near.representative  # as the search's placements hold it
    assert producer in host.allowed_cpus and consumer in host.allowed_cpus
    assert estimate.placement(host, PinThreads.auto, pairs) == (-1, -1)
