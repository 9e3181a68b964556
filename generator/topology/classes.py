"""The host's measured structure: a matrix of CPU pairs (model.topology) clustered into classes,
named after what sysfs declares where the two agree, and the places where they do not.

Classes come from gaps: sorted by round trip, the pairs split wherever one is GAP_RATIO or more
slower than the one before. The relations the measurement tells apart differ by multiples (one
line's transfer: SMT siblings 4-10 ns, one L3 16-51 ns, across L3 groups 84-154 ns, across
sockets 108-197 ns), while one class's pairs differ by percents and by the distance on the die's
mesh or ring, which leaves no gap.

`classify(host, matrix)` gives the Topology; `representative_pairs(topology)` one placement per
class for a search to race (`text.read_matrix` reads a recorded matrix file).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from hspc_gen.host.machine import Host
from hspc_gen.model.topology import (
    RELATIONS,
    Disagreement,
    DisagreementKind,
    LatencyClass,
    Matrix,
    PairTiming,
    RepresentativePair,
    Topology,
)

GAP_RATIO = 1.4
"""A pair this much slower than the next faster one starts a new class. Pairs of one class
differ by less (a mesh's near and far cores, 1.2-1.3x; noise, a few percent); the nearest
classes of one host by more (across L3 groups and across sockets, 1.5-2x on the published
matrices of nviennot/core-to-core-latency)."""
SIBLING_ROUND_TRIP_NS = 24.0
"""A round trip below this is two hardware threads of one core: siblings take 8-20 ns, two cores
sharing an L3 32-100 ns (twice the one-way figures above)."""
HOME_SHARE = 0.25
"""A relation's pairs are at home in the fastest class holding this share of them: a class of
SMT siblings hidden in a declared L3 holds 1/(CPUs-1) of its pairs, the near half of an L3
declared one but measuring as two holds about half."""
EXAMPLE_PAIRS = 4  # pairs a disagreement names as examples


class Relations:
    """What sysfs declares between two CPUs (model.topology.RELATIONS), looked up in O(1)."""

    def __init__(self, host: Host) -> None:
        self._place = {p.cpu: p for p in host.topology}
        data = [c for c in host.caches if c.type != "Instruction"]
        self._l2 = _instances(c.cpus for c in data if c.level == 2)
        self._llc = _instances(c.cpus for c in data if c.level >= 3)
        self._caches = bool(data)

    def __call__(self, a: int, b: int) -> str:
        pa, pb = self._place[a], self._place[b]
        if (pa.package, pa.node) != (pb.package, pb.node):
            return "other_socket"
        if pa.core == pb.core:
            return "smt_sibling"
        if self._l2.get(a, set()) & self._l2.get(b, set()):
            return "shared_l2"
        if self._llc.get(a, set()) & self._llc.get(b, set()):
            return "shared_l3"
        return "other_l3" if self._caches else "same_package"


def _instances(groups: Iterable[tuple[int, ...]]) -> dict[int, set[int]]:
    """Each CPU's cache instances of one kind, by index."""
    found: dict[int, set[int]] = {}
    for index, cpus in enumerate(groups):
        for cpu in cpus:
            found.setdefault(cpu, set()).add(index)
    return found


def cluster(round_trips: Sequence[float]) -> list[int]:
    """Each value's class, 0 for the fastest: a new class starts at every gap of GAP_RATIO."""
    values = np.asarray(round_trips, dtype=float)
    if values.size == 0:
        return []
    order = np.argsort(values, kind="stable")
    breaks = np.diff(np.log(values[order])) > math.log(GAP_RATIO)
    labels = np.empty(values.size, dtype=int)
    labels[order] = np.concatenate(([0], np.cumsum(breaks)))
    return [int(label) for label in labels]


def classify(host: Host, matrix: Matrix) -> Topology:
    """The matrix's classes, named after sysfs where they agree, and the disagreements."""
    matrix = matrix.restricted(host.logical_cpus)
    relation = Relations(host)
    labels = cluster([p.round_trip_ns for p in matrix.pairs])
    groups: list[list[PairTiming]] = [[] for _ in range(max(labels, default=-1) + 1)]
    for pair, label in zip(matrix.pairs, labels, strict=True):
        groups[label].append(pair)
    counts = [Counter(relation(p.a, p.b) for p in group) for group in groups]
    medians = [float(np.median([p.round_trip_ns for p in group])) for group in groups]
    names = _names(counts, medians)
    checks = _checks(matrix.pairs, labels)
    classes = tuple(
        _latency_class(matrix, name, group, count, checks.get(i, (0, 0)))
        for i, (name, group, count) in enumerate(zip(names, groups, counts, strict=True))
    )
    disagreements = _disagreements(classes, groups, relation, homes(counts))
    disagreements += moved(matrix, classes, matrix.repeats, relation)
    sysfs_kind = host.kind
    return Topology(matrix, classes, disagreements, measured_kind(classes, sysfs_kind), sysfs_kind)


def _rank(relation: str) -> int:
    return RELATIONS.index(relation) if relation in RELATIONS else len(RELATIONS)


def homes(counts: Sequence[Counter[str]]) -> dict[str, int]:
    """Each relation's home class: the fastest holding HOME_SHARE of its pairs, else the one
    holding most. Other load only ever slows a pair, so a relation's pairs in a faster class
    are really faster; a sibling class inside a declared L3 holds few of its pairs."""
    found: dict[str, int] = {}
    for relation in {r for c in counts for r in c}:
        total = sum(c[relation] for c in counts)
        shared = [i for i, c in enumerate(counts) if c[relation] >= HOME_SHARE * total]
        most = max(range(len(counts)), key=lambda i: (counts[i][relation], -i))
        found[relation] = shared[0] if shared else most
    return found


def _names(counts: list[Counter[str]], medians: list[float]) -> list[str]:
    """Each class's name: its pairs' commonest relation where it is that relation's home; a
    class split off a home takes the nearest free relation between its named neighbours. A class
    faster than SIBLING_ROUND_TRIP_NS is SMT siblings, whatever sysfs says."""
    majority = [min(c, key=lambda r: (-c[r], _rank(r))) for c in counts]
    home = homes(counts)
    names: list[str | None] = [m if home[m] == i else None for i, m in enumerate(majority)]
    if medians and medians[0] < SIBLING_ROUND_TRIP_NS and "smt_sibling" not in names:
        names[0] = "smt_sibling"
    for i, name in enumerate(names):
        if name is None:
            names[i] = _free_name(names, i, majority[i], medians[i] < SIBLING_ROUND_TRIP_NS)
    return [n or majority[i] for i, n in enumerate(names)]


def _free_name(names: list[str | None], i: int, majority: str, sibling: bool) -> str:
    below = max((_rank(n) for n in names[:i] if n is not None), default=-1)
    above = min((_rank(n) for n in names[i + 1 :] if n is not None), default=len(RELATIONS))
    taken = {n for n in names if n is not None} | {"same_package"}
    if not sibling:
        taken.add("smt_sibling")
    free = [r for r in RELATIONS[below + 1 : above] if r not in taken]
    if free:
        return free[0]
    return f"{majority}_{'near' if below < _rank(majority) else 'far'}"


def _latency_class(
    matrix: Matrix,
    name: str,
    group: list[PairTiming],
    count: Counter[str],
    checked: tuple[int, int],
) -> LatencyClass:
    round_trips = [p.round_trip_ns for p in group]
    median = round(float(np.median(round_trips)), 2)
    representative = min(group, key=lambda p: (abs(p.round_trip_ns - median), p.a, p.b))
    rates = [matrix.transfer_gbps(p) for p in group]
    return LatencyClass(
        name=name,
        round_trip_ns=median,
        round_trip_range=(min(round_trips), max(round_trips)),
        transfer_gbps=round(float(np.median(rates)), 3),
        pairs=tuple(p.cpus for p in group),
        representative=representative.cpus,
        sysfs=tuple(sorted(count.items(), key=lambda item: (_rank(item[0]), item[0]))),
        checked=checked[0],
        confirmed=checked[1],
    )


def _checks(pairs: Sequence[PairTiming], labels: Sequence[int]) -> dict[int, tuple[int, int]]:
    """Per class, the check pairs predicted in it and how many of them measured in it. A pair
    is predicted in the first class at which the other pairs join its CPUs (nearer classes
    nest in farther ones: two CPUs each sharing an L3 with a third share it with each other)."""
    found: dict[int, list[int]] = {}
    predict = Predictor([(p.cpus, n) for p, n in zip(pairs, labels, strict=True) if not p.check])
    for pair, label in zip(pairs, labels, strict=True):
        if pair.check:
            predicted = predict(pair.cpus)
            if predicted is not None:
                found.setdefault(predicted, []).append(int(predicted == label))
    return {label: (len(hits), sum(hits)) for label, hits in found.items()}


class Predictor:
    """The class measured pairs put an unmeasured pair in: the first class at which the pairs
    of it and all nearer classes join its two CPUs (None when they never do)."""

    def __init__(self, known: Sequence[tuple[tuple[int, int], int]]) -> None:
        self._levels: list[tuple[int, _Joined]] = []
        for level in sorted({label for _, label in known}):
            joined = _Joined()
            for (a, b), label in known:
                if label <= level:
                    joined.join(a, b)
            self._levels.append((level, joined))

    def __call__(self, pair: tuple[int, int]) -> int | None:
        for level, joined in self._levels:
            if joined.root(pair[0]) == joined.root(pair[1]):
                return level
        return None


class _Joined:
    """Union-find over CPUs."""

    def __init__(self) -> None:
        self._parent: dict[int, int] = {}

    def root(self, cpu: int) -> int:
        parent = self._parent
        while parent.get(cpu, cpu) != cpu:
            parent[cpu] = parent.get(parent[cpu], parent[cpu])  # halve the path as it is walked
            cpu = parent[cpu]
        return cpu

    def join(self, a: int, b: int) -> None:
        self._parent[self.root(a)] = self.root(b)


def _disagreements(
    classes: Sequence[LatencyClass],
    groups: list[list[PairTiming]],
    relation: Relations,
    home: Mapping[str, int],
) -> tuple[Disagreement, ...]:
    """One disagreement per (relation, class) that is not the class's own name, and one where
    a relation sysfs says is nearer measures slower than one it says is farther."""
    found: list[Disagreement] = []
    for cls, group in zip(classes, groups, strict=True):
        for rel, count in cls.sysfs:
            if rel == cls.name:
                continue
            pairs = tuple(p.cpus for p in group if relation(p.a, p.b) == rel)
            found.append(_disagreement(cls, rel, pairs, count, classes[home[rel]]))
    named = [c for c in classes if c.name in RELATIONS]
    for faster, slower in itertools.pairwise(named):
        if _rank(faster.name) > _rank(slower.name):
            found.append(_order(faster, slower))
    return tuple(found)


def _disagreement(
    cls: LatencyClass, rel: str, pairs: tuple[tuple[int, int], ...], count: int, home: LatencyClass
) -> Disagreement:
    a, b = pairs[0]
    example = f"e.g. CPUs {a} and {b}"
    measured = f"{cls.round_trip_ns:.0f} ns round trip"
    if cls.name == "smt_sibling":
        kind = DisagreementKind.sibling_latency
        text = (
            f"{count} pair(s) sysfs calls {rel} measure {measured}, as SMT siblings do ({example}):"
            " they are hardware threads of one physical core that the host does not declare"
        )
    elif home is not cls:
        kind = DisagreementKind.split_level
        text = (
            f"sysfs calls {count} pair(s) {rel} that measure {measured} ({cls.name}), apart from"
            f" its other {rel} pairs ({home.round_trip_ns:.0f} ns), {example}: what sysfs shows"
            " as one level is two"
        )
    else:
        kind = DisagreementKind.merged
        text = (
            f"sysfs tells {count} {rel} pair(s) from {cls.name} pairs, but they measure alike"
            f" ({measured}, {example})"
        )
    return Disagreement(kind, rel, cls.name, pairs[:EXAMPLE_PAIRS], count, text)


def _order(faster: LatencyClass, slower: LatencyClass) -> Disagreement:
    text = (
        f"sysfs calls {slower.name} nearer than {faster.name}, but its pairs measure slower"
        f" ({slower.round_trip_ns:.0f} ns against {faster.round_trip_ns:.0f} ns)"
    )
    return Disagreement(
        DisagreementKind.order,
        slower.name,
        slower.name,
        slower.pairs[:EXAMPLE_PAIRS],
        len(slower.pairs),
        text,
    )


def moved(
    matrix: Matrix,
    classes: Sequence[LatencyClass],
    repeats: Sequence[tuple[int, int, float]],
    relation: Callable[[int, int], str],  # Relations, or what a ProbeHost carries of it
) -> tuple[Disagreement, ...]:
    """Pairs measured again (`repeats`: a, b, the new median) that moved by GAP_RATIO or more
    from the matrix's median: the host moves these CPUs about (a guest's vCPUs on the physical
    machine), or other load disturbed them; one disagreement for all, the largest move named."""
    found = [(matrix.pair(a, b), again) for a, b, again in repeats]
    changed = [(p, t, _ratio(p.round_trip_ns, t)) for p, t in found if p is not None]
    changed = [c for c in changed if c[2] >= GAP_RATIO]
    if not changed:
        return ()
    first, again, _ = max(changed, key=lambda c: c[2])
    name = next((c.name for c in classes if first.cpus in c.pairs), "?")
    load = " (other load ran meanwhile)" if matrix.busy else ""
    text = (
        f"{len(changed)} of {len(repeats)} pair(s) measured again moved by {GAP_RATIO}x or more"
        f"{load}, e.g. CPUs {first.a} and {first.b}: {first.round_trip_ns:.0f} ns, then"
        f" {again:.0f} ns: the host moves these CPUs about (a guest's vCPUs on the physical"
        " machine), so the classes are one moment's and a placement by CPU number may not keep"
        " its class"
    )
    pairs = tuple(c[0].cpus for c in changed)[:EXAMPLE_PAIRS]
    return (
        Disagreement(
            DisagreementKind.moved, relation(first.a, first.b), name, pairs, len(changed), text
        ),
    )


def _ratio(x: float, y: float) -> float:
    return max(x, y) / min(x, y)


def measured_kind(classes: Sequence[LatencyClass], sysfs_kind: tuple[str, ...]) -> tuple[str, ...]:
    """HSPC's kinds (CMP, SMP, SMT) from what the pairs measure: SMT where some measure as
    siblings, SMP where some cross sockets, CMP where other cores of one package talk. With no
    pair measured (one CPU), sysfs's."""
    names = {relation_of(c) for c in classes}
    if not names:
        return sysfs_kind
    kinds = {
        "SMT": "smt_sibling" in names,
        "SMP": "other_socket" in names,
        "CMP": bool(names - {"smt_sibling", "other_socket"}),
    }
    return tuple(sorted(k for k, present in kinds.items() if present))


def relation_of(c: LatencyClass) -> str:
    """The relation of RELATIONS a class is named for (`shared_l3_far`: shared_l3)."""
    return c.name.removesuffix("_near").removesuffix("_far")


def representative_pairs(
    topology: Topology, classes: Sequence[LatencyClass] | None = None
) -> tuple[RepresentativePair, ...]:
    """One (producer_cpu, consumer_cpu) per measured class (of `classes`, all by default),
    fastest class first: the pair whose round trip is nearest the class's median (the lower CPUs
    on a tie), the producer on the lower CPU. Racing these places a channel once in each way
    the host can place it."""
    chosen = topology.classes if classes is None else classes
    return tuple(RepresentativePair(c.name, *c.representative, c.round_trip_ns) for c in chosen)


def moved_pairs(topology: Topology) -> frozenset[tuple[int, int]]:
    """The pairs seen to move when measured again: the host moves its CPUs about."""
    found = (d.pairs for d in topology.disagreements if d.kind is DisagreementKind.moved)
    return frozenset(pair for pairs in found for pair in pairs)


def lasting_classes(topology: Topology) -> tuple[LatencyClass, ...]:
    """The classes a placement can rest on: the largest (where a pair most likely stays), and
    each other that sysfs explains or that reaches every CPU measured (a host's structure is
    the same around each CPU: hidden SMT siblings pair every CPU, a split L3 splits all of
    them), unless a pair of it moved when measured again. A class of a few pairs that sysfs
    does not explain is one moment of a guest whose vCPUs move on the physical machine: a
    16-vCPU guest measured four times had 1 to 4 pairs at 64 ns, different ones each time,
    among 116 to 120 at about 206 ns."""
    if not topology.classes:
        return ()
    moved, largest = moved_pairs(topology), typical_class(topology)
    cpus = set(topology.matrix.cpus)

    def lasts(c: LatencyClass) -> bool:
        reaches = {cpu for pair in c.pairs for cpu in pair} == cpus
        return c is largest or ((c.agrees or reaches) and not moved & set(c.pairs))

    return tuple(c for c in topology.classes if lasts(c))


def typical_class(topology: Topology) -> LatencyClass:
    """The class most pairs measure in (the faster of two as large)."""
    return max(topology.classes, key=lambda c: (len(c.pairs), -c.round_trip_ns))
