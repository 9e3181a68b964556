"""hspc_gen.search.measure.topology: the real probe (runtime/harness/topology_main.cpp, built with
the real compiler) run on this machine's CPUs, its matrix kept in the record store and reused, and
a probe that cannot be built or run as a recorded status. Nothing here asserts how long anything
took: the structure of what came back."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest

from hspc_gen.host.machine import Host, read_host
from hspc_gen.model.topology import (
    DisagreementKind,
    Matrix,
    PairTiming,
    TopologyOutcome,
    TopologyStatus,
)
from hspc_gen.search.measure import program
from hspc_gen.search.measure import topology as probe
from hspc_gen.search.records.samples import MatrixRecord
from hspc_gen.search.records.store import RecordStore
from hspc_gen.topology.classes import Relations, classify, moved
from hspc_gen.topology.plan import SecondRound, probe_host
from hspc_gen.topology.text import read_matrix

CPUS = sorted(os.sched_getaffinity(0))
SYSFS = Path(__file__).resolve().parents[1] / "data" / "sysfs"


def measure(cache: Path, host: Host, *, measure: bool = True) -> TopologyOutcome:
    store = RecordStore(cache / "records", host.fingerprint)
    return probe.host_topology(probe_host(host), store, cache, "c++", measure=measure)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TopologyOutcome]:
    cache = tmp_path_factory.mktemp("cache")
    return cache, measure(cache, read_host())


def built(cache: Path) -> Path:
    (found,) = (cache / program.FOLDER).glob("topology-*")
    return found


def test_this_host_is_measured_pair_by_pair(measured: tuple[Path, TopologyOutcome]) -> None:
    _, outcome = measured
    assert outcome.status is TopologyStatus.measured and outcome.note == ""
    topology = outcome.topology
    assert topology is not None
    matrix = topology.matrix
    assert matrix.cpus == tuple(CPUS)
    assert len(matrix.pairs) == len(CPUS) * (len(CPUS) - 1) // 2 and matrix.skipped == ()
    assert (matrix.samples, matrix.round_trips, matrix.block_bytes) == (
        probe.SAMPLES,
        probe.ROUND_TRIPS,
        probe.BLOCK_BYTES,
    )
    for pair in matrix.pairs:
        figures = (pair.round_trip_ns, pair.round_trip_q1, pair.round_trip_q3, pair.block_ns)
        assert all(math.isfinite(v) and v > 0 for v in figures)
        assert pair.round_trip_q1 <= pair.round_trip_ns <= pair.round_trip_q3
        assert pair.a < pair.b and not pair.check
    assert sum(len(c.pairs) for c in topology.classes) == len(matrix.pairs)
    assert "hspc-gen" in matrix.source and matrix.seconds > 0


def test_it_is_kept_in_the_record_store_and_reused(
    measured: tuple[Path, TopologyOutcome],
) -> None:
    cache, outcome = measured
    host = read_host()
    store = RecordStore(cache / "records", host.fingerprint)
    key = probe.record_key(host.fingerprint, "c++")
    assert outcome.topology is not None
    (record,) = store.matrices(key)
    assert record == MatrixRecord(key, outcome.topology.matrix)
    again = measure(cache, host, measure=False)
    if not outcome.topology.matrix.busy:  # a busy one is measured again on a quiet machine
        again = measure(cache, host)
    assert again.status is TopologyStatus.stored and again.topology is not None
    # The same matrix and classes; checked again, its pairs may have moved since (this VM's do).
    assert again.topology.matrix == outcome.topology.matrix
    assert again.topology.classes == outcome.topology.classes
    assert len(store.matrices(key)) == 1
    # Another probe (or compiler) is another key: nothing stored under it.
    assert probe.stored(store, probe.record_key(host.fingerprint, "g++ -O0"), CPUS) is None


def test_a_stored_matrix_covers_fewer_allowed_cpus_but_not_more(tmp_path: Path) -> None:
    host = read_host()
    store = RecordStore(tmp_path / "records", host.fingerprint)
    key = probe.record_key(host.fingerprint, "c++")
    timing = PairTiming(0, 1, 50.0, 49.0, 52.0, 2300.0, 2290.0, 2310.0)
    store.append(MatrixRecord(key, Matrix((0, 1), (timing,), 65536)))
    kept = probe.stored(store, key, [0])
    assert kept is not None and kept.cpus == (0,) and kept.pairs == ()
    assert probe.stored(store, key, [0, 1, 2]) is None


def test_without_measuring_nothing_stored_is_sysfs_alone(tmp_path: Path) -> None:
    outcome = measure(tmp_path, read_host(), measure=False)
    assert outcome == TopologyOutcome(
        TopologyStatus.not_measured,
        None,
        "the CPU pairs were never measured on this host: the structure is sysfs's alone",
    )
    assert not (tmp_path / "records").exists() and not (tmp_path / "host").exists()


def test_a_probe_that_cannot_be_built_is_a_status_and_the_run_goes_on(tmp_path: Path) -> None:
    host = read_host()
    store = RecordStore(tmp_path / "records", host.fingerprint)
    outcome = probe.host_topology(
        probe_host(host), store, tmp_path, "/nonexistent/c++", measure=True
    )
    assert outcome.status is TopologyStatus.failed and outcome.topology is None
    assert "could not build its program" in outcome.note and "sysfs's alone" in outcome.note
    assert store.records() == () and not (tmp_path / "records").exists()


def test_the_probe_skips_a_cpu_it_may_not_use_and_refuses_bad_flags(
    measured: tuple[Path, TopologyOutcome],
) -> None:
    cache, _ = measured
    program_path = built(cache)
    unusable = max(CPUS) + 1
    done = subprocess.run(
        [program_path, "--samples=3", "--round-trips=10", f"--pairs={CPUS[0]}:{unusable}"],
        capture_output=True,
        text=True,
        check=True,
    )
    document = json.loads(done.stdout)
    assert document["cpus"] == CPUS
    (skipped,) = document["pairs"]
    assert skipped == {
        "a": CPUS[0],
        "b": unusable,
        "skipped": f"CPU {unusable} is not one this process may use",
    }
    matrix = probe.from_probe(document)
    assert matrix.pairs == () and matrix.skipped == ((CPUS[0], unusable, skipped["skipped"]),)
    for flag in ("--samples=0", "--pairs=1:1", "--block-bytes=100", "--nope"):
        bad = subprocess.run([program_path, flag], capture_output=True, text=True, check=False)
        assert bad.returncode == 2 and "--pairs=A:B" in bad.stderr and bad.stdout == "", flag


@pytest.mark.skipif(len(CPUS) < 2, reason="a pair needs two CPUs this process may use")
def test_the_probe_measures_a_pair_both_ways(measured: tuple[Path, TopologyOutcome]) -> None:
    cache, _ = measured
    a, b = CPUS[:2]
    argv = [str(built(cache)), "--samples=5", "--round-trips=20", "--block-bytes=4096"]
    done = subprocess.run([*argv, f"--pairs={a}:{b},{b}:{a}"], capture_output=True, check=True)
    document = json.loads(done.stdout)
    assert [(p["a"], p["b"]) for p in document["pairs"]] == [(a, b), (b, a)]
    for pair in document["pairs"]:
        assert len(pair["round_trip_ns"]) == len(pair["block_ns"]) == 5
        assert all(math.isfinite(v) and v > 0 for v in pair["round_trip_ns"] + pair["block_ns"])
    assert [p.cpus for p in probe.from_probe(document).pairs] == [(a, b), (a, b)]


def test_the_second_round_adds_check_pairs_keeps_the_lower_median_and_compares() -> None:
    def timing(a: int, b: int, trip: float) -> PairTiming:
        return PairTiming(a, b, trip, trip, trip, 1000.0, 1000.0, 1000.0)

    first = Matrix((0, 1, 2, 3), (timing(0, 1, 90.0), timing(0, 2, 400.0)), 4096, 21, 200)
    second = Matrix(
        (0, 1, 2, 3), (timing(0, 1, 300.0), timing(0, 2, 95.0), timing(1, 2, 91.0)), 4096
    )
    plan = SecondRound(again=((0, 2),), stability=((0, 1),), checks=((1, 2),))
    both = probe.merged(first, second, plan)
    assert [(p.cpus, p.round_trip_ns, p.check) for p in both.pairs] == [
        ((0, 1), 90.0, False),  # compared: the first stands, the second is a repeat
        ((0, 2), 95.0, False),  # taken by a time slice the first time
        ((1, 2), 91.0, True),
    ]
    assert both.repeats == ((0, 1, 300.0),)
    skipped = Matrix((0, 1, 2), (), 4096, skipped=((1, 2, "stalled"),))
    assert probe.merged(skipped, second, plan).skipped == ()


def test_a_stored_matrix_is_checked_again_and_a_move_is_said(tmp_path: Path) -> None:
    """The 16-CPU guest's first run, stored; its representative pairs measured again on the
    synthetic probe of the same host's second run (recorded a few seconds later), where CPUs 4
    and 15 no longer measure 64 ns."""
    host = read_host(SYSFS / "xeon-16c-vm" / "sys")
    stored = classify(host, read_matrix(SYSFS / "xeon-16c-vm" / "matrix-run1.json"))
    later = read_matrix(SYSFS / "xeon-16c-vm" / "matrix-run2.json")
    repeats = [(a, b, later.pair(a, b).round_trip_ns) for a, b in ((4, 15), (11, 14))]  # type: ignore[union-attr]
    (said,) = moved(stored.matrix, stored.classes, repeats, Relations(host))
    assert said.kind is DisagreementKind.moved and said.pairs == ((4, 15),)
    assert "CPUs 4 and 15: 64 ns, then 195 ns" in said.text
    assert moved(stored.matrix, stored.classes, [(11, 14, 205.0)], Relations(host)) == ()


def test_a_probe_printing_no_matrix_is_an_error_of_the_program() -> None:
    with pytest.raises(ValueError, match="not positive times"):
        probe.from_probe(
            {
                "cpus": [0, 1],
                "block_bytes": 64,
                "samples": 1,
                "round_trips": 1,
                "pairs": [{"a": 0, "b": 1, "round_trip_ns": [], "block_ns": [1.0]}],
            }
        )


@pytest.mark.skipif(len(CPUS) < 2, reason="a pair needs two CPUs this process may use")
def test_a_stored_matrix_is_checked_against_the_host_now(tmp_path: Path) -> None:
    """A stored pair at 50 us, far from anything two CPUs take: measured again now, it moved."""
    host = read_host()
    store = RecordStore(tmp_path / "records", host.fingerprint)
    a, b = CPUS[:2]
    far = PairTiming(a, b, 50000.0, 49000.0, 51000.0, 9000.0, 8900.0, 9100.0)
    stored = Matrix(tuple(CPUS), (far,), probe.BLOCK_BYTES, probe.SAMPLES, probe.ROUND_TRIPS)
    store.append(MatrixRecord(probe.record_key(host.fingerprint, "c++"), stored))
    outcome = probe.host_topology(probe_host(host), store, tmp_path, "c++", measure=True)
    assert outcome.status is TopologyStatus.stored and outcome.topology is not None
    assert outcome.topology.matrix == stored.restricted(host.allowed_cpus)
    assert outcome.note.startswith("since the pairs were measured, 1 of 1 pair(s) measured again")
    assert f"CPUs {a} and {b}: 50000 ns, then" in outcome.note
    untouched = probe.host_topology(probe_host(host), store, tmp_path, "c++", measure=False)
    assert (
        untouched.note == "" and len(store.matrices(probe.record_key(host.fingerprint, "c++"))) == 1
    )
