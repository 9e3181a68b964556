"""hspc_gen.reports.figure_topology and its heat map: the host's CPU pairs from the `topology`
the result's host carries (here a recorded matrix classified as a run would), as data, then drawn
by matplotlib for real."""

from __future__ import annotations

import math
from pathlib import Path

from documents import RESULT, RESULT_DOC
from hspc_gen.host.machine import read_host
from hspc_gen.model.result_file import ResultFile, load_result
from hspc_gen.model.topology import TopologyOutcome, TopologyStatus
from hspc_gen.reports import figure_data, figure_topology, figures, html
from hspc_gen.topology.classes import classify
from hspc_gen.topology.text import read_matrix, topology_json

SYSFS = Path(__file__).resolve().parents[1] / "data" / "sysfs"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def result_with(tree: str, file: str = "matrix.json") -> ResultFile:
    host = read_host(SYSFS / tree / "sys")
    measured = TopologyOutcome(
        TopologyStatus.measured, classify(host, read_matrix(SYSFS / tree / file))
    )
    topology = topology_json(measured)
    return load_result({**RESULT_DOC, "host": {**RESULT_DOC["host"], "topology": topology}})


def test_the_heat_map_holds_every_pair_both_ways() -> None:
    data = figure_topology.topology(result_with("vm-16c", "matrix-hidden-smt.json").result)
    assert data.cpus == tuple(range(16)) and data.empty == ""
    assert [name for name, _ in data.classes] == ["smt_sibling", "shared_l3"]
    for i in range(16):
        assert data.values[i][i] is None
        for j in range(16):
            assert data.values[i][j] == data.values[j][i]
    sibling = data.values[0][8]
    assert sibling is not None and sibling < 24
    assert "120 of 120 pairs measured; 1 disagreement(s) with sysfs" in data.note


def test_a_run_that_measured_no_pairs_says_why() -> None:
    data = figure_topology.topology(RESULT)  # recorded before the topology was measured
    assert data.values == () and data.empty == "the CPU pairs were not measured in this run"
    failed = {"status": "failed", "note": "the CPU pairs could not be measured (no compiler)"}
    host = {**RESULT_DOC["host"], "topology": failed}
    said = figure_topology.topology(load_result({**RESULT_DOC, "host": host}).result)
    assert said.empty == failed["note"]
    assert figures.heatmap(said).startswith(PNG_SIGNATURE)


def test_the_heat_map_is_drawn_and_the_report_shows_it() -> None:
    result = result_with("2s-8c-2t")
    image = figures.heatmap(figure_topology.topology(result.result))
    assert image.startswith(PNG_SIGNATURE)
    assert image == figures.heatmap(figure_topology.topology(result.result))  # the same bytes
    files = html.files(result, None)
    assert files["hspc-topology.png"] == image
    assert "How the CPUs talk" in files[figure_data.REPORT_FILE].decode()


def test_a_single_pair_draws_too() -> None:
    data = figure_topology.topology(result_with("epyc-genoa-2c-vm").result)
    assert data.cpus == (0, 1) and not math.isnan(data.values[0][1] or math.nan)
    assert figures.heatmap(data).startswith(PNG_SIGNATURE)
