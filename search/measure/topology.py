"""The host's communication structure, measured: the topology probe
(runtime/harness/topology_main.cpp) times a cache line's round trip and a block's transfer between
pairs of CPUs (topology.plan chooses them), and topology.classes classes them.

Measured once per host fingerprint, probe and compiler, and kept in the record store as a
`MatrixRecord` (exported and imported with wisdom like every measured fact). A matrix measured
beside other load is kept but marked busy, and a quiet run measures it again. A probe that cannot
be built or run is a `failed` outcome with the reason: the run goes on with sysfs alone.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hspc_gen.model.topology import (
    Matrix,
    PairTiming,
    ProbeHost,
    Topology,
    TopologyOutcome,
    TopologyStatus,
)
from hspc_gen.search.measure import load, program
from hspc_gen.search.measure.program import ProgramError
from hspc_gen.search.records.samples import MatrixRecord, RecordKey
from hspc_gen.search.records.store import RecordStore
from hspc_gen.topology import plan as topology_plan
from hspc_gen.topology.classes import moved

PROBE = "topology_main.cpp"
PROBE_HEADERS = ("harness/cpus.hpp",)  # what the probe includes of runtime/: its build depends on
SAMPLES = 21  # per pair and figure: a median that ten samples taking a time slice cannot move
ROUND_TRIPS = 200  # per round-trip sample: 10-80 us, far below a time slice
BLOCK_BYTES = 64 << 10  # a channel buffer's size, within every core's L2
FLAGS = (f"--samples={SAMPLES}", f"--round-trips={ROUND_TRIPS}", f"--block-bytes={BLOCK_BYTES}")
RUN_TIMEOUT_SECONDS = 120.0  # per round; a stalled pair gives up after 0.5 s on its own


def record_key(fingerprint: str, compiler: str) -> RecordKey:
    """What a stored matrix is valid for: this host, this probe built by this compiler."""
    return RecordKey(fingerprint, program.digest(compiler, PROBE), compiler, " ".join(FLAGS))


def stored(store: RecordStore, key: RecordKey, cpus: Sequence[int]) -> Matrix | None:
    """The latest matrix measured under `key` that covers `cpus`, restricted to them."""
    for record in reversed(store.matrices(key)):
        if set(cpus) <= set(record.matrix.cpus):
            return record.matrix.restricted(cpus)
    return None


def host_topology(
    host: ProbeHost,
    store: RecordStore,
    cache_dir: Path,
    compiler: str,
    *,
    measure: bool,
    again: bool = False,
    on_measure: Callable[[str], None] = lambda _: None,
) -> TopologyOutcome:
    """The stored topology, or one measured now (when `measure`) where none is stored, a quiet
    machine can improve on a busy one, or `again` asks for a fresh one."""
    key = record_key(host.fingerprint, compiler)
    known = stored(store, key, host.cpus)
    if known is not None and not again and _settled(known, measure=measure):
        topology = host.classify(known)
        if not measure:
            return TopologyOutcome(TopologyStatus.stored, topology)
        return rechecked(host, topology, cache_dir, compiler)
    if not measure:
        return TopologyOutcome(
            TopologyStatus.not_measured,
            None,
            "the CPU pairs were never measured on this host: the structure is sysfs's alone",
        )
    on_measure(f"measuring how this host's {len(host.cpus)} CPUs talk, pair by pair")
    try:
        matrix = measured(host, cache_dir, compiler)
    except ProgramError as err:
        if known is not None:
            why = f"the CPU pairs could not be measured again ({err}): the earlier matrix stands"
            return TopologyOutcome(TopologyStatus.stored, host.classify(known), why)
        why = f"the CPU pairs could not be measured ({err}): the structure is sysfs's alone"
        return TopologyOutcome(TopologyStatus.failed, None, why)
    store.append(MatrixRecord(key, matrix))
    return TopologyOutcome(TopologyStatus.measured, host.classify(matrix))


def rechecked(
    host: ProbeHost, topology: Topology, cache_dir: Path, compiler: str
) -> TopologyOutcome:
    """A stored topology, its classes' representative pairs measured again: a host that moved
    its CPUs since (a guest's vCPUs on the physical machine) is said in the note."""
    pairs = [c.representative for c in topology.classes]
    if not pairs:
        return TopologyOutcome(TopologyStatus.stored, topology)
    try:
        again = run_probe(program.built(cache_dir, compiler, PROBE, PROBE_HEADERS), pairs)
    except ProgramError as err:
        why = f"its pairs could not be measured again to see whether they moved ({err})"
        return TopologyOutcome(TopologyStatus.stored, topology, why)
    repeats = [(p.a, p.b, p.round_trip_ns) for p in again.pairs]
    found = moved(topology.matrix, topology.classes, repeats, host.relation)
    # The topology stays the one measured (its classes, its disagreements); the note says
    # what this look found.
    note = f"since the pairs were measured, {found[0].text}" if found else ""
    return TopologyOutcome(TopologyStatus.stored, topology, note)


def _settled(known: Matrix, *, measure: bool) -> bool:
    """Whether a stored matrix stands: a busy one is measured again on a quiet machine (busy
    then, busy now: measuring again would not tell more)."""
    return not measure or not known.busy or load.machine_busy()[0]


def measured(host: ProbeHost, cache_dir: Path, compiler: str) -> Matrix:
    """Every pair of the allowed CPUs (or the sample, on many), then the second round; busy when
    other processes used the CPUs meanwhile. ProgramError when the probe cannot build or run."""
    probe = program.built(cache_dir, compiler, PROBE, PROBE_HEADERS)
    cpus = host.cpus
    # /proc/stat counts in 10 ms ticks: a measurement of a few ms is judged by a look before it.
    busy_before = load.machine_busy()[0]
    before = load.cpu_times()
    first = run_probe(probe, host.first_round)
    second = topology_plan.second_round(cpus, first.pairs)
    matrix = merged(first, run_probe(probe, second.pairs), second) if second.pairs else first
    after = load.cpu_times()
    seconds = after.wall_s - before.wall_s
    busy_during = seconds >= load.QUIET_PROBE_SECONDS and load.busy(before, after)
    return dataclasses.replace(
        matrix, busy=busy_before or busy_during, seconds=round(seconds, 3), source=host.source
    )


def run_probe(probe: Path, pairs: Sequence[tuple[int, int]]) -> Matrix:
    listed = ",".join(f"{a}:{b}" for a, b in pairs)
    out = program.call([str(probe), *FLAGS, f"--pairs={listed}"], RUN_TIMEOUT_SECONDS, "run")
    try:
        return from_probe(json.loads(out))
    except (ValueError, KeyError, TypeError) as err:
        raise ProgramError(f"its program printed no matrix ({err}): {out[:200]!r}") from None


def from_probe(document: Mapping[str, Any]) -> Matrix:
    """The probe's JSON as a Matrix: each pair's medians and quartiles of its samples."""
    pairs: list[PairTiming] = []
    skipped: list[tuple[int, int, str]] = []
    for item in document["pairs"]:
        a, b = sorted((int(item["a"]), int(item["b"])))
        if "skipped" in item:
            skipped.append((a, b, str(item["skipped"])))
            continue
        trips, block = _quartiles(item["round_trip_ns"]), _quartiles(item["block_ns"])
        pairs.append(PairTiming(a, b, *trips, *block))
    return Matrix(
        cpus=tuple(sorted(int(c) for c in document["cpus"])),
        pairs=tuple(sorted(pairs, key=lambda p: p.cpus)),
        block_bytes=int(document["block_bytes"]),
        samples=int(document["samples"]),
        round_trips=int(document["round_trips"]),
        skipped=tuple(sorted(skipped)),
    )


def _quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    array = np.asarray(values, dtype=float)
    if array.size == 0 or not np.all(np.isfinite(array)) or np.any(array <= 0):
        raise ValueError(f"samples that are not positive times: {list(values)[:8]}")
    q1, median, q3 = np.percentile(array, [25, 50, 75])
    return (round(float(median), 2), round(float(q1), 2), round(float(q3), 2))


def merged(first: Matrix, second: Matrix, plan: topology_plan.SecondRound) -> Matrix:
    """The second round added to the first: of a pair measured again because it stood alone,
    the lower median stands (other load only ever adds time); a pair measured again to compare
    keeps its first median, the second in `repeats`; a new pair is a check pair."""
    pairs = {p.cpus: p for p in first.pairs}
    repeats = list(first.repeats)
    for pair in second.pairs:
        known = pairs.get(pair.cpus)
        if known is None:
            pairs[pair.cpus] = dataclasses.replace(pair, check=True)
        elif pair.cpus in plan.stability:
            repeats.append((pair.a, pair.b, pair.round_trip_ns))
        elif pair.round_trip_ns < known.round_trip_ns:
            pairs[pair.cpus] = pair
    skipped = {(a, b): why for a, b, why in (*first.skipped, *second.skipped)}
    left_out = tuple((a, b, why) for (a, b), why in sorted(skipped.items()) if (a, b) not in pairs)
    return dataclasses.replace(
        first,
        pairs=tuple(pairs[cpus] for cpus in sorted(pairs)),
        skipped=left_out,
        repeats=tuple(sorted(repeats)),
    )
