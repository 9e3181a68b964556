"""`hspc-gen host`: the host as sysfs declares it, and as its CPU pairs measure.

On the live host the measured topology comes from the record store, or is measured (a few
seconds, once per host) and kept there. A recorded sysfs tree is another machine: nothing here
can measure it, so its matrix is a recorded one, given with --matrix or found beside the tree
(`<tree>/matrix.json`, as `<tree>/proc` is). `--save-matrix FILE` measures this host afresh and
writes its matrix in the form --matrix reads: how the recorded matrices under tests/data/sysfs
are made.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from hspc_gen import wiring
from hspc_gen.cpulist import format_cpu_list
from hspc_gen.errors import UserError
from hspc_gen.files import write_atomic
from hspc_gen.host.machine import LIVE_SYSFS, Host, read_host
from hspc_gen.model.topology import TopologyOutcome, TopologyStatus
from hspc_gen.search.api import Show, locked, quiet
from hspc_gen.topology.classes import classify
from hspc_gen.topology.text import matrix_text, read_matrix

MATRIX_BESIDE_TREE = "matrix.json"


@dataclass(frozen=True)
class Survey:
    host: Host
    topology: TopologyOutcome

    def document(self) -> dict[str, object]:
        return wiring.host_document(self.host, self.topology)


@dataclass(frozen=True)
class SurveyOptions:
    sysfs_root: Path = LIVE_SYSFS
    matrix: Path | None = None  # a recorded matrix to classify instead of measuring
    cache: Path | None = None
    measure: bool = True  # measure when the store holds no matrix (else sysfs alone)
    save_matrix: Path | None = None  # measure afresh and write the matrix here


def survey(options: SurveyOptions, show: Show = quiet) -> Survey:
    host = read_host(options.sysfs_root)
    live = options.sysfs_root.resolve() == LIVE_SYSFS
    matrix = options.matrix
    if options.save_matrix is not None and (matrix is not None or not live):
        raise UserError("--save-matrix measures this host: not with --matrix or --sysfs-root")
    beside = options.sysfs_root.parent / MATRIX_BESIDE_TREE
    if matrix is None and not live and beside.is_file():
        matrix = beside
    if matrix is not None:
        pairs = read_matrix(matrix)
        if foreign := sorted(set(pairs.cpus) - set(host.logical_cpus)):
            raise UserError(
                f"{matrix}: a matrix of another machine (CPUs {format_cpu_list(foreign)} are"
                f" not among this one's {format_cpu_list(host.logical_cpus)}): give"
                " --sysfs-root DIR, the tree it was recorded with"
            )
        recorded = classify(host, pairs)
        return Survey(host, TopologyOutcome(TopologyStatus.recorded, recorded, str(matrix)))
    if not live:
        why = "a recorded sysfs tree: nothing to measure here (--matrix FILE: one recorded there)"
        return Survey(host, TopologyOutcome(TopologyStatus.not_measured, None, why))
    save = options.save_matrix
    wiring.check_outputs(*((save,) if save else ()), cache=options.cache)
    store = wiring.record_store(host, options.cache)
    with locked(store, math.inf, show):
        outcome = wiring.host_topology(
            host,
            store,
            options.cache,
            measure=options.measure or save is not None,
            again=save is not None,
            show=show,
        )
    if save is not None and outcome.status is TopologyStatus.measured and outcome.topology:
        write_atomic(save, matrix_text(outcome.topology.matrix))
    return Survey(host, outcome)
