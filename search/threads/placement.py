"""Where the threads run: candidates from the topology, and the measured choice among them.

Candidates: unpinned (the OS places threads within an affinity mask); compact within one
last-level cache; each producer with its consumers on SMT siblings of one core; one group per
last-level cache (or socket) when the threads outnumber one cache's cores. Rules: a producer and
its consumers sit on distinct cores except in the siblings candidate, which must beat the best
other candidate to be chosen; CPU 0 (which takes most interrupts) is left out whenever the other
CPUs suffice; pinning is recommended only when it beats unpinned beyond the noise margin.
Oversubscribed counts get no pinned candidates: the OS balances them better than a fixed map.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hspc_gen.cpulist import format_cpu_list
from hspc_gen.model import PinThreads
from hspc_gen.model.shape import TopologyShape
from hspc_gen.model.threads import UNPINNED_PLACEMENT
from hspc_gen.search.threads.measure import Config, Lab, Relative

COMPACT = "compact"
SIBLINGS = "smt_siblings"
SPREAD = "spread"
PLACEMENT_ROUNDS = 12
MAX_PLACEMENT_ROUNDS = 36

Assignment = tuple[tuple[int, ...], tuple[int, ...]]


def pool(shape: TopologyShape, threads: int) -> tuple[int, ...]:
    """The CPUs to use for `threads` threads: all allowed, less CPU 0 when the rest suffice."""
    others = tuple(c for c in shape.cpus if c != 0)
    return others if len(others) >= threads else shape.cpus


def affinity_mask(shape: TopologyShape, config: Config) -> tuple[int, ...]:
    """The CPUs a configuration's threads may run on (the harness applies it to unpinned runs)."""
    if config.pinned:
        return tuple(sorted(set(config.producer_cpus + config.consumer_cpus)))
    return pool(shape, config.threads)


def _cores_first(shape: TopologyShape, cpus: Sequence[int]) -> list[int]:
    """The first hardware thread of every core, then the second ones, and so on."""
    rank = {c: shape.siblings(c).index(c) for c in cpus}
    return sorted(cpus, key=lambda c: (rank[c], shape.place(c).core, c))


def _members(config: Config) -> list[list[tuple[bool, int]]]:
    """Per group: its producer, then its consumers, as (is_producer, index)."""
    groups: list[list[tuple[bool, int]]] = [[(True, g)] for g in range(config.producers)]
    for j in range(config.consumers):
        groups[config.group_of(j)].append((False, j))
    return groups


def _assign(
    shape: TopologyShape, config: Config, slots_for: Callable[[int], list[int]]
) -> Assignment | None:
    """Give every thread its own CPU from its group's slots, the group on distinct cores."""
    producers: dict[int, int] = {}
    consumers: dict[int, int] = {}
    for g, members in enumerate(_members(config)):
        slots, cores = slots_for(g), set()
        for is_producer, index in members:
            cpu = next((c for c in slots if shape.place(c).core not in cores), None)
            if cpu is None:
                return None
            slots.remove(cpu)
            cores.add(shape.place(cpu).core)
            (producers if is_producer else consumers)[index] = cpu
    return _tuples(producers, consumers)


def _tuples(producers: dict[int, int], consumers: dict[int, int]) -> Assignment:
    return tuple(producers[i] for i in sorted(producers)), tuple(
        consumers[j] for j in sorted(consumers)
    )


def _llc_pools(shape: TopologyShape, cpus: Sequence[int]) -> list[list[int]]:
    """Each last-level cache's usable CPUs, cores first; caches without CPU 0 first."""
    allowed = set(cpus)
    groups = sorted(shape.llc_groups(), key=lambda g: (0 in g, g))
    usable = [[c for c in g if c in allowed] for g in groups]
    return [_cores_first(shape, g) for g in usable if g]


def _compact(shape: TopologyShape, config: Config, cpus: Sequence[int]) -> Assignment | None:
    for slots in _llc_pools(shape, cpus):
        if len(slots) >= config.threads:
            found = _assign(shape, config, _same_pool(slots))
            if found is not None:
                return found
    return None


def _same_pool(slots: list[int]) -> Callable[[int], list[int]]:
    """Every group draws from one shared pool."""
    return lambda _group: slots


def _spread(shape: TopologyShape, config: Config, cpus: Sequence[int]) -> Assignment | None:
    pools = _llc_pools(shape, cpus)
    most_cores = max(len({shape.place(c).core for c in p}) for p in pools)
    if len(pools) < 2 or config.threads <= most_cores:
        return None
    # Round robin over the caches, skipping full ones: the one with most room from g's turn on.
    return _assign(shape, config, lambda g: max(pools[g % len(pools) :] + pools, key=len))


def _siblings(shape: TopologyShape, config: Config, cpus: Sequence[int]) -> Assignment | None:
    if shape.threads_per_core < 2:
        return None
    allowed = set(cpus)
    whole: dict[int, list[int]] = {}
    for c in _cores_first(shape, cpus):
        whole.setdefault(shape.place(c).core, []).append(c)
    cores = [sorted(s) for s in whole.values() if len(s) >= 2 and set(s) <= allowed]
    producers: dict[int, int] = {}
    consumers: dict[int, int] = {}
    for g, members in enumerate(_members(config)):
        if g >= len(cores) or len(members) > len(cores[g]):
            return None
        for (is_producer, index), cpu in zip(members, cores[g], strict=False):
            (producers if is_producer else consumers)[index] = cpu
    return _tuples(producers, consumers)


def candidates(shape: TopologyShape, config: Config) -> tuple[Config, ...]:
    """The pinned candidates for these counts (none when the threads outnumber the CPUs)."""
    if config.threads > len(shape.cpus):
        return ()
    cpus = pool(shape, config.threads)
    out = []
    for name, make in ((COMPACT, _compact), (SPREAD, _spread), (SIBLINGS, _siblings)):
        found = make(shape, config, cpus)
        if found is not None:
            out.append(Config(config.producers, config.consumers, name, *found))
    return tuple(out)


def pairs_on_siblings(shape: TopologyShape, config: Config) -> bool:
    """Whether any producer shares a core with one of its own consumers."""
    return any(
        shape.place(config.consumer_cpus[j]).core
        == shape.place(config.producer_cpus[config.group_of(j)]).core
        for j in range(config.consumers if config.pinned else 0)
    )


@dataclass(frozen=True)
class PlacementTrial:
    config: Config
    gain: float  # throughput over unpinned, paired
    low: float
    high: float


@dataclass(frozen=True)
class PlacementChoice:
    chosen: Config
    trials: tuple[PlacementTrial, ...]


def choose(
    lab: Lab,
    shape: TopologyShape,
    unpinned: Config,
    pin: PinThreads,
    margin: float,
    *,
    max_rounds: int = MAX_PLACEMENT_ROUNDS,
) -> PlacementChoice:
    """Measure the candidates against unpinned in the same rounds (up to `max_rounds`) and pick."""
    options = () if pin is PinThreads.never else candidates(shape, unpinned)
    if not options:
        return PlacementChoice(unpinned, ())
    rels = _measure(lab, unpinned, options, margin, max_rounds)
    trials = tuple(PlacementTrial(c, r.gain, r.low, r.high) for c, r in rels.items())
    others = [c for c in options if c.placement != SIBLINGS]
    best = max(others or options, key=lambda c: rels[c].gain)
    for c in options:
        if c.placement == SIBLINGS and c is not best and others:
            beats = lab.compare(c, best)
            if beats.low > 1.0 and beats.gain > 1.0 + margin:
                best = c
    wins = rels[best].low > 1.0 and rels[best].gain > 1.0 + margin
    return PlacementChoice(best if wins or pin is PinThreads.always else unpinned, trials)


def unmeasured(shape: TopologyShape, unpinned: Config, pin: PinThreads) -> PlacementChoice:
    """The choice when nothing could be measured: unpinned, unless pinning is demanded."""
    options = candidates(shape, unpinned) if pin is PinThreads.always else ()
    return PlacementChoice(options[0] if options else unpinned, ())


def _measure(
    lab: Lab, unpinned: Config, options: Sequence[Config], margin: float, max_rounds: int
) -> dict[Config, Relative]:
    arms = [unpinned, *options]
    since = lab.run(arms, PLACEMENT_ROUNDS)
    while True:
        rels = {c: lab.compare(c, unpinned) for c in options}
        clear = all(r.low > 1.0 or r.high < 1.0 + margin for r in rels.values())
        if clear or lab.rounds - since >= max_rounds:
            return rels
        lab.run(arms, PLACEMENT_ROUNDS)


def taskset_list(shape: TopologyShape, config: Config) -> str:
    """For `taskset -c`: every CPU the threads may use."""
    return format_cpu_list(affinity_mask(shape, config))


def omp_places(shape: TopologyShape, config: Config) -> str:
    """OMP_PLACES: one place per thread (producers, then consumers) when pinned; otherwise one
    place holding the whole mask, as lower:length intervals."""
    if config.pinned:
        return ",".join(f"{{{c}}}" for c in config.producer_cpus + config.consumer_cpus)
    runs: list[list[int]] = []
    for cpu in affinity_mask(shape, config):
        if runs and cpu == runs[-1][0] + runs[-1][1]:
            runs[-1][1] += 1
        else:
            runs.append([cpu, 1])
    return "{" + ",".join(f"{a}:{n}" if n > 1 else str(a) for a, n in runs) + "}"


def placement_name(config: Config) -> str:
    return config.placement if config.pinned else UNPINNED_PLACEMENT
