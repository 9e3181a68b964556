"""Write the synthetic CPU-pair matrices beside the synthetic sysfs trees, deterministically (run
by make_trees.py). Each is what the topology probe would measure on a host whose pairs really are
`truth` (by default what the tree declares): the round trip and block rate of each relation, 20%
slower across the die's far end (a mesh), with 2% seeded noise. The figures are the published
matrices' (nviennot/core-to-core-latency), round trips twice their one-way times.

    vm-16c/matrix.json             the 16-CPU guest as sysfs declares it: one L3, all alike
    vm-16c/matrix-hidden-smt.json  the same guest whose vCPUs i and i+8 share a physical core
    vm-16c/matrix-split-l3.json    the same guest whose one declared L3 is two (CPUs 0-7, 8-15)
    2s-8c-2t/matrix.json           two sockets of 8 cores, 2 threads each, as declared

A recorded machine's matrix.json is measured there (make_trees.py --record NAME).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hspc_gen.host.machine import Host, read_host
from hspc_gen.model.topology import Matrix, PairTiming
from hspc_gen.topology.classes import Relations
from hspc_gen.topology.text import matrix_text

MATRIX_FILE = "matrix.json"
BLOCK_BYTES = 64 << 10
ROUND_TRIP_NS = {
    "smt_sibling": 15.0,
    "shared_l2": 40.0,
    "shared_l3": 90.0,
    "other_l3": 200.0,
    "other_socket": 400.0,
}
TRANSFER_GBPS = {
    "smt_sibling": 45.0,
    "shared_l2": 30.0,
    "shared_l3": 18.0,
    "other_l3": 11.0,
    "other_socket": 7.0,
}
MESH_SPREAD = 0.2
NOISE = 0.02

Truth = Callable[[int, int], str]


def _hidden_siblings(declared: Truth) -> Truth:
    return lambda a, b: "smt_sibling" if abs(a - b) == 8 else declared(a, b)


def _split_l3(declared: Truth) -> Truth:
    return lambda a, b: "other_l3" if (a < 8) != (b < 8) else declared(a, b)


@dataclass(frozen=True)
class Synthetic:
    tree: str
    file: str
    truth: Callable[[Truth], Truth] = lambda declared: declared


SYNTHETIC = (
    Synthetic("vm-16c", MATRIX_FILE),
    Synthetic("vm-16c", "matrix-hidden-smt.json", _hidden_siblings),
    Synthetic("vm-16c", "matrix-split-l3.json", _split_l3),
    Synthetic("2s-8c-2t", MATRIX_FILE),
)


def synthetic(tree: Path, truth: Callable[[Truth], Truth], seed: str) -> Matrix:
    host = read_host(tree / "sys")
    relation = truth(Relations(host))
    rng = random.Random(seed)
    cpus = host.logical_cpus
    pairs = [(a, b) for i, a in enumerate(cpus) for b in cpus[i + 1 :]]
    source = f"synthetic: {seed} (tests/data/sysfs/make_matrices.py)"
    return probed(host, relation, pairs, rng, source)


def probed(
    host: Host, relation: Truth, pairs: Sequence[tuple[int, int]], rng: random.Random, source: str
) -> Matrix:
    """What the probe would measure of `pairs` on `host`, whose pairs really are `relation`."""
    timed = []
    for a, b in pairs:
        kind = relation(a, b)
        far = 1 + MESH_SPREAD * abs(host.core_of(a) - host.core_of(b)) / host.cores
        trip = round(ROUND_TRIP_NS[kind] * far * rng.lognormvariate(0, NOISE), 2)
        block = float(round(BLOCK_BYTES / TRANSFER_GBPS[kind] * far * rng.lognormvariate(0, NOISE)))
        spread = [round(value * f, 2) for value in (trip, block) for f in (0.98, 1.03)]
        timed.append(PairTiming(a, b, trip, spread[0], spread[1], block, spread[2], spread[3]))
    return Matrix(host.logical_cpus, tuple(timed), BLOCK_BYTES, 21, 200, source=source)


def write_matrices(out: Path) -> None:
    for made in SYNTHETIC:
        matrix = synthetic(out / made.tree, made.truth, f"{made.tree}/{made.file}")
        (out / made.tree / made.file).write_text(matrix_text(matrix), encoding="utf-8")
