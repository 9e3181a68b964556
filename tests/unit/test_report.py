"""hspc_gen.report: the report folder's pictures drawn from its documents, each read by the
model's loader; a result this version cannot read is refused in one message, and the page is
the same bytes drawn from the run's document or redrawn from the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from documents import BENCH_DOC, LOADED, RESULT_DOC
from hspc_gen.errors import UserError
from hspc_gen.report import redraw, write_report
from hspc_gen.reports import figure_data, html
from hspc_gen.reports.bench import BENCH_FILE


def test_a_redraw_from_the_file_gives_the_runs_bytes(tmp_path: Path) -> None:
    run, again = tmp_path / "run", tmp_path / "again"
    for folder in (run, again):
        folder.mkdir()
        (folder / BENCH_FILE).write_text(json.dumps(BENCH_DOC), encoding="utf-8")
    written = write_report(run, RESULT_DOC)
    assert sorted(p.name for p in written) == sorted(
        [*figure_data.FIGURES, figure_data.REPORT_FILE]
    )
    result_file = again / "hspc-result.json"
    result_file.write_text(json.dumps(RESULT_DOC), encoding="utf-8")
    redrawn = redraw(again, result_file)
    assert [p.read_bytes() for p in redrawn] == [p.read_bytes() for p in written]


def test_an_older_result_is_refused_in_one_message(tmp_path: Path) -> None:
    result_file = tmp_path / "hspc-result.json"
    result_file.write_text(json.dumps({**RESULT_DOC, "schema_version": 2}), encoding="utf-8")
    with pytest.raises(UserError, match="written with result schema 2") as refused:
        redraw(tmp_path, result_file)
    assert str(result_file) in str(refused.value) and "\n" not in str(refused.value)
    assert not (tmp_path / figure_data.REPORT_FILE).exists()


def test_a_bench_file_it_cannot_read_leaves_the_peers_out(tmp_path: Path) -> None:
    (tmp_path / BENCH_FILE).write_text('{"rows": "nothing"}', encoding="utf-8")
    write_report(tmp_path, RESULT_DOC)
    without = html.files(LOADED, None)  # the page as drawn before any bench ran
    assert (tmp_path / "hspc-peers.png").read_bytes() == without["hspc-peers.png"]
    assert (tmp_path / figure_data.REPORT_FILE).read_bytes() == without[figure_data.REPORT_FILE]
