"""Which CPU pairs the topology probe measures, in two rounds.

Up to ALL_PAIRS_UP_TO CPUs, every pair (496 at 32 CPUs, under a second). Beyond, a sample that
grows with the CPUs rather than with their square: every CPU against two reference CPUs (rows),
each CPU against the next (adjacent-numbered siblings and cache groups) and against the CPU half
the machine on (siblings as Linux numbers x86 threads), and PER_RELATION pairs of every relation
sysfs declares. The second round re-measures each pair alone in its class (a sample that took a
time slice looks like a class of its own), each class's median pair and STABILITY_PAIRS others
(a host that moves its CPUs, as a cloud guest's vCPUs move on the physical machine, shows it
there), and beyond ALL_PAIRS_UP_TO checks each measured class with CHECKS_PER_CLASS pairs not yet
measured that the first round predicts in it.

The choice is seeded: the same host gives the same pairs.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hspc_gen import __version__
from hspc_gen.host.machine import Host
from hspc_gen.model.topology import Matrix, PairTiming, ProbeHost, Topology
from hspc_gen.topology.classes import Predictor, Relations, classify, cluster

ALL_PAIRS_UP_TO = 32
PER_RELATION = 8
CHECKS_PER_CLASS = 4
STABILITY_PAIRS = 4  # measured pairs measured again, besides each class's median pair
SEED = 20070326

Pair = tuple[int, int]


def probe_host(host: Host) -> ProbeHost:
    """What the topology probe needs of the host: its CPUs, the first round's pairs, and how a
    matrix is classed by what sysfs declares."""
    cpus = tuple(host.allowed_cpus)

    def classified(matrix: Matrix) -> Topology:
        return classify(host, matrix)

    return ProbeHost(
        fingerprint=host.fingerprint,
        cpus=cpus,
        first_round=first_round(host, cpus),
        source=f"{host.model_name}, {len(cpus)} CPUs, kernel {host.kernel}, hspc-gen {__version__}",
        classify=classified,
        relation=Relations(host),
    )


def all_pairs(cpus: Sequence[int]) -> tuple[Pair, ...]:
    ordered = sorted(cpus)
    return tuple((a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :])


def first_round(host: Host, cpus: Sequence[int]) -> tuple[Pair, ...]:
    """The pairs measured first: all of them, or the sample that covers every relation."""
    ordered = sorted(cpus)
    if len(ordered) <= ALL_PAIRS_UP_TO:
        return all_pairs(ordered)
    n = len(ordered)
    chosen: set[Pair] = set()
    for reference in (ordered[0], ordered[n // 2]):
        chosen.update(_pair(reference, cpu) for cpu in ordered if cpu != reference)
    chosen.update(_pair(ordered[i], ordered[i + 1]) for i in range(n - 1))
    chosen.update(_pair(ordered[i], ordered[i + n // 2]) for i in range(n - n // 2))
    relation = Relations(host)
    by_relation: dict[str, list[Pair]] = {}
    for pair in all_pairs(ordered):
        by_relation.setdefault(relation(*pair), []).append(pair)
    rng = random.Random(SEED)
    for name in sorted(by_relation):
        pairs = by_relation[name]
        chosen.update(rng.sample(pairs, min(PER_RELATION, len(pairs))))
    return tuple(sorted(chosen))


def _pair(a: int, b: int) -> Pair:
    return (min(a, b), max(a, b))


@dataclass(frozen=True)
class SecondRound:
    """What the second round measures: pairs again (the lower median stands), pairs again to
    see whether they keep their class (the host may move its CPUs), and new check pairs."""

    again: tuple[Pair, ...] = ()
    stability: tuple[Pair, ...] = ()
    checks: tuple[Pair, ...] = ()

    @property
    def pairs(self) -> tuple[Pair, ...]:
        return tuple(sorted({*self.again, *self.stability, *self.checks}))


def second_round(cpus: Sequence[int], measured: Sequence[PairTiming]) -> SecondRound:
    """Each pair alone in its class again; each class's pair nearest its median and
    STABILITY_PAIRS others again, to compare; on many CPUs, the check pairs."""
    labels = cluster([p.round_trip_ns for p in measured])
    sizes = Counter(labels)
    again = {p.cpus for p, label in zip(measured, labels, strict=True) if sizes[label] == 1}
    if len(measured) < 3:  # one or two pairs: nothing to stand apart from
        again = set()
    stability = _stability(measured, labels) - again
    checks: set[Pair] = set()
    if len(cpus) > ALL_PAIRS_UP_TO:
        checks = _checks(cpus, measured, labels)
    return SecondRound(tuple(sorted(again)), tuple(sorted(stability)), tuple(sorted(checks)))


def _stability(measured: Sequence[PairTiming], labels: Sequence[int]) -> set[Pair]:
    chosen: set[Pair] = set()
    for label in sorted(set(labels)):
        members = [p for p, n in zip(measured, labels, strict=True) if n == label]
        median = float(np.median([p.round_trip_ns for p in members]))
        chosen.add(min(members, key=lambda p: (abs(p.round_trip_ns - median), p.cpus)).cpus)
    rng = random.Random(SEED + 2)
    pairs = [p.cpus for p in measured]
    chosen.update(rng.sample(pairs, min(STABILITY_PAIRS, len(pairs))))
    return chosen


def _checks(
    cpus: Sequence[int], measured: Sequence[PairTiming], labels: Sequence[int]
) -> set[Pair]:
    predictor = Predictor([(p.cpus, label) for p, label in zip(measured, labels, strict=True)])
    done = {p.cpus for p in measured}
    candidates: dict[int, list[Pair]] = {}
    for pair in all_pairs(cpus):
        if pair not in done and (label := predictor(pair)) is not None:
            candidates.setdefault(label, []).append(pair)
    rng = random.Random(SEED + 1)
    chosen: set[Pair] = set()
    for label in sorted(candidates):
        pairs = candidates[label]
        chosen.update(rng.sample(pairs, min(CHECKS_PER_CLASS, len(pairs))))
    return chosen
