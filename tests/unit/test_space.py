"""hspc_gen.search.strategies.space and search.placements: grids, the memory bound, placements, the
measurement pair and the start point."""

from __future__ import annotations

import pytest

from hspc_gen.errors import UserError
from hspc_gen.model import (
    DEFAULT_SPIN_NS,
    ChannelParams,
    PinThreads,
    Primitive,
    SpinBudgets,
    floor_power_of_two,
    next_power_of_two,
)
from hspc_gen.search.strategies.placements import UNPINNED_CPUS, HostShape, placements
from hspc_gen.search.strategies.space import Choice, IntRange, PowerOfTwo, Space

KiB, MiB = 1024, 1024 * 1024
TWO_VCPU = HostShape(2, (0, 1), 2, 1, (), ((0, 1),), 64, 2 * MiB)
SMT_8 = HostShape(
    logical_cpus=8,
    allowed_cpus=tuple(range(8)),
    cores=4,
    threads_per_core=2,
    sibling_pairs=((0, 4), (1, 5), (2, 6), (3, 7)),
    llc_groups=(tuple(range(8)),),
)


def space(
    event_bytes: int = 64,
    memory: int = 1 * MiB,
    pin: PinThreads = PinThreads.auto,
    host: HostShape = TWO_VCPU,
    primitives: tuple[Primitive, ...] = tuple(Primitive),
) -> Space:
    return Space.from_target(
        event_bytes=event_bytes,
        primitives=primitives,
        max_buffer_memory=memory,
        pin_threads=pin,
        host=host,
    )


def test_typed_parameters_enumerate_their_values() -> None:
    assert PowerOfTwo(256, 2048).values() == (256, 512, 1024, 2048)
    assert PowerOfTwo(4096, 16384, with_zero=True).values() == (0, 4096, 8192, 16384)
    assert Choice((2, 3, 4)).values() == (2, 3, 4)
    assert IntRange(1, 7, 3).values() == (1, 4, 7)
    assert next_power_of_two(24) == 32 and next_power_of_two(64) == 64 and next_power_of_two(1) == 1
    assert floor_power_of_two(3 * KiB) == 2 * KiB


def test_grids_are_the_papers_powers_of_two() -> None:
    s = space()
    assert s.padding_values() == (0, 64, 128, 256, 512)
    assert s.stack_offset_values() == (0, 4096, 8192, 16384, 32768, 65536)
    assert s.buffer_counts() == (2, 3, 4, 8, 16, 32, 64)
    # From 256 B up to the largest size two buffers can have under the 1 MiB bound.
    assert s.buffer_sizes() == tuple(256 << k for k in range(12))
    assert s.buffer_sizes()[-1] == 512 * KiB


def test_smallest_buffer_holds_one_event() -> None:
    s = space(event_bytes=1000)
    assert s.buffer_sizes()[0] == 1024
    assert not s.fits(2, 512)


def test_grid_respects_the_memory_bound() -> None:
    s = space(memory=64 * KiB)
    pairs = s.grid()
    assert pairs
    assert all(n * size <= 64 * KiB for n, size in pairs)
    assert (64, 1024) in pairs and (64, 2048) not in pairs
    # Every allowed pair is there: the grid is the whole feasible product.
    feasible = {(n, z) for n in s.buffer_counts() for z in s.buffer_sizes() if n * z <= 64 * KiB}
    assert set(pairs) == feasible


def test_violations_name_what_is_outside() -> None:
    s = space(memory=64 * KiB, primitives=(Primitive.condvar, Primitive.futex))
    inside = ChannelParams(128, 4096, 4, 4096, Primitive.futex)
    assert s.contains(inside)
    assert s.violations(inside.replace(buffers=64, buffer_bytes=4096)) == (
        "buffers * buffer_bytes",
    )
    assert s.violations(inside.replace(padding_bytes=96)) == ("padding_bytes",)
    assert s.violations(inside.replace(primitive=Primitive.pause_spin)) == ("primitive",)
    assert s.violations(inside.replace(producer_cpu=7, consumer_cpu=8)) == ("placement",)


def test_too_little_memory_is_a_user_error() -> None:
    with pytest.raises(UserError, match="max_buffer_memory"):
        space(event_bytes=4096, memory=6 * KiB)


def test_no_primitive_is_a_user_error() -> None:
    with pytest.raises(UserError, match="primitive"):
        space(primitives=())


def test_placements_on_this_two_vcpu_host() -> None:
    # Two CPUs: pinning must use CPU 0 too; there are no SMT siblings.
    assert placements(TWO_VCPU, PinThreads.auto) == (UNPINNED_CPUS, (0, 1))
    assert placements(TWO_VCPU, PinThreads.never) == (UNPINNED_CPUS,)
    assert placements(TWO_VCPU, PinThreads.always) == ((0, 1),)


def test_placements_avoid_cpu0_and_offer_smt_siblings() -> None:
    got = placements(SMT_8, PinThreads.auto)
    assert got[0] == UNPINNED_CPUS
    distinct, siblings = got[1], got[2]
    assert distinct == (1, 2)  # distinct cores, not CPU 0
    assert siblings == (1, 5)  # one SMT pair, not CPU 0's core
    assert all(0 not in p for p in got[1:])


def test_distinct_cores_share_a_last_level_cache() -> None:
    two_llc = HostShape(8, tuple(range(8)), 8, 1, (), ((0, 1, 2, 3), (4, 5, 6, 7)))
    producer, consumer = placements(two_llc, PinThreads.auto)[1]
    assert {producer, consumer} <= {1, 2, 3} or {producer, consumer} <= {4, 5, 6, 7}


def test_placements_follow_the_affinity_mask() -> None:
    masked = HostShape(8, (2, 6), 4, 2, ((0, 4), (1, 5), (2, 6), (3, 7)), (tuple(range(8)),))
    # CPUs 2 and 6 are one core's siblings: no two distinct cores are allowed.
    assert placements(masked, PinThreads.auto) == (UNPINNED_CPUS, (2, 6))
    single = HostShape(1, (3,), 1, 1)
    assert placements(single, PinThreads.always) == (UNPINNED_CPUS,)


def test_the_search_measures_on_two_cores_sharing_a_cache_until_placement_is_asked() -> None:
    """The measurement pair: the first pinned placement that is not SMT siblings; unpinned when
    pinning is not allowed or no two cores are; a placement given stays."""
    assert space().measurement_pair() == (0, 1)
    assert space(host=SMT_8).measurement_pair() == placements(SMT_8, PinThreads.auto)[1]
    assert space(host=SMT_8).measurement_pair() not in SMT_8.sibling_pairs
    assert space(pin=PinThreads.never).measurement_pair() == UNPINNED_CPUS
    masked = HostShape(8, (2, 6), 4, 2, ((0, 4), (1, 5), (2, 6), (3, 7)), (tuple(range(8)),))
    assert space(host=masked).measurement_pair() == UNPINNED_CPUS  # only siblings allowed
    start = space().start()
    assert (start.producer_cpu, start.consumer_cpu) == UNPINNED_CPUS
    measured = space().measured_at(start)
    assert (measured.producer_cpu, measured.consumer_cpu) == (0, 1)
    assert measured.replace(producer_cpu=-1, consumer_cpu=-1) == start
    given = start.replace(producer_cpu=1, consumer_cpu=0)
    assert space().measured_at(given) == given


def test_start_point_is_inside_the_space() -> None:
    s = space()
    start = s.start()
    assert s.contains(start)
    assert start == ChannelParams(64, 0, 3, 4096, Primitive.condvar)


def test_start_point_is_clamped_under_a_small_bound() -> None:
    s = space(memory=4 * KiB, pin=PinThreads.always, primitives=(Primitive.futex,))
    start = s.start()
    assert s.contains(start)
    assert start.buffers * start.buffer_bytes <= 4 * KiB
    assert (start.producer_cpu, start.consumer_cpu) == (0, 1)
    assert start.primitive is Primitive.futex


def test_sizes_around_stay_inside() -> None:
    s = space(memory=64 * KiB)
    assert s.sizes_around(1024, 1) == (512, 1024, 2048)
    assert s.sizes_around(256, 2) == (256, 512, 1024)
    assert s.sizes_around(32 * KiB, 1) == (16 * KiB, 32 * KiB)
    assert s.sizes_around(3000, 1) == ()


@pytest.mark.parametrize("memory", [128, 512, 1000])
def test_a_small_memory_bound_shrinks_the_grid_instead_of_being_broken(memory: int) -> None:
    space = Space.from_target(
        event_bytes=8,
        primitives=tuple(Primitive),
        max_buffer_memory=memory,
        pin_threads=PinThreads.never,
        host=TWO_VCPU,
    )
    assert space.grid() and all(n * size <= memory for n, size in space.grid())
    assert space.contains(space.start())


def spin_space(budgets: SpinBudgets) -> Space:
    return Space.from_target(
        event_bytes=8,
        primitives=tuple(Primitive),
        max_buffer_memory=MiB,
        pin_threads=PinThreads.auto,
        host=TWO_VCPU,
        spin=budgets,
    )


def test_spin_budgets_are_tried_around_the_calibrated_one() -> None:
    space = spin_space(SpinBudgets(sleep_ns=24_000, yield_ns=1_550))
    assert space.spin_values(Primitive.hybrid) == (6000, 12000, 24000, 48000, 96000)
    # A spinning primitive may also yield at once (0); values stay on the 50 ns grain.
    assert space.spin_values(Primitive.pause_spin) == (0, 400, 800, 1550, 3100, 6200)
    assert space.spin_values(Primitive.futex) == (DEFAULT_SPIN_NS,)  # never spins: one value
    assert space.start().spin_ns == space.spin_for(space.primitives[0])


def test_a_spin_budget_set_on_the_command_line_is_the_only_one() -> None:
    space = spin_space(SpinBudgets(sleep_ns=24_000)).narrowed({"spin_ns": 900})
    assert space.spin_values(Primitive.hybrid) == (900,)
    assert space.spin_for(Primitive.hybrid) == 900
    point = space.start().replace(primitive=Primitive.hybrid)
    assert space.contains(point.replace(spin_ns=900))
    assert space.violations(point.replace(spin_ns=1000)) == ("spin_ns",)


def test_placements_are_one_pair_per_measured_class_and_a_hidden_sibling_is_not_measured_on() -> (
    None
):
    """Measured, the placements are unpinned and each class's representative pair (fastest
    class first); the search measures on the first class that is not SMT siblings, hidden or
    declared; `always` races the classes alone, `never` none; each placement is named."""
    classes = (("smt_sibling", 0, 8), ("shared_l3", 2, 5), ("other_socket", 3, 12))
    hidden = HostShape(16, tuple(range(16)), 16, 1, (), (tuple(range(16)),), class_pairs=classes)
    auto = space(host=hidden)
    assert auto.placements == (UNPINNED_CPUS, (0, 8), (2, 5), (3, 12))
    assert auto.measurement_pair() == (2, 5)  # sysfs declares no siblings; measured, 0-8 are
    assert space(host=hidden, pin=PinThreads.always).placements == ((0, 8), (2, 5), (3, 12))
    assert space(host=hidden, pin=PinThreads.never).placements == (UNPINNED_CPUS,)
    start = auto.start()
    assert auto.placement_name(start) == "unpinned"
    assert auto.placement_name(start.replace(producer_cpu=12, consumer_cpu=3)) == "other_socket"
    assert auto.placement_name(start.replace(producer_cpu=1, consumer_cpu=4)) == "pinned"
    masked = HostShape(16, (2, 3, 5), 16, 1, (), (tuple(range(16)),), class_pairs=classes)
    assert space(host=masked).placements == (UNPINNED_CPUS, (2, 5))  # the CPUs it may use
