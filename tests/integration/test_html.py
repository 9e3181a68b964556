"""hspc-report.html and its PNGs from recorded documents: complete, self-contained, the same
bytes each time, and whole in a real browser (headless Chromium: no console error, every figure
decoded; the screenshot is kept in build/test-artifacts/); with threads.consumers: adaptive, the
pool's parameters in the summary's words."""

from __future__ import annotations

import dataclasses
import html as htmllib
import json
import math
import re
from pathlib import Path

import pytest

from browser import open_page, open_pages
from caveat_results import every_result, summary_notes
from documents import BENCH, LOADED, RESULT, RESULT_DOC, typed
from hspc_gen.model.result_file import load_result
from hspc_gen.model.threads import ThreadAdvice
from hspc_gen.reports import figure_data, html
from hspc_gen.reports.result import document as result_document
from hspc_gen.reports.summary import render as render_summary
from pools import ESTIMATED_POOL

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_the_report_holds_every_figure_inline_and_beside_it() -> None:
    files = html.files(LOADED, BENCH)
    assert set(files) == {*figure_data.FIGURES, figure_data.REPORT_FILE}
    page = files[figure_data.REPORT_FILE].decode()
    for name in figure_data.FIGURES:
        assert files[name].startswith(PNG_SIGNATURE)
    images = re.findall(r'<img src="([^"]*)"', page)
    assert len(images) == len(figure_data.FIGURES)
    assert all(src.startswith("data:image/png;base64,") for src in images)
    assert not re.search(r"(src|href)=\"(?!data:)", page)  # nothing to fetch: no network


def test_the_same_documents_give_the_same_bytes() -> None:
    assert html.files(LOADED, BENCH) == html.files(LOADED, BENCH)


def test_text_from_the_documents_is_escaped() -> None:
    name = "<script>alert(1)</script>"
    hostile = load_result({**RESULT_DOC, "target": {**RESULT_DOC["target"], "name": name}})
    page = html.files(hostile, None)[figure_data.REPORT_FILE].decode()
    assert "<script>" not in page and "&lt;script&gt;" in page


@pytest.mark.slow
def test_chromium_renders_the_report_whole(tmp_path: Path) -> None:
    for name, content in html.files(LOADED, BENCH).items():
        (tmp_path / name).write_bytes(content)
    opened = open_page(tmp_path / figure_data.REPORT_FILE, "recorded-report.png")
    assert opened.console == ()
    assert [alt for alt, _ in opened.images] == list(figure_data.FIGURES.values())
    assert all(width > 0 for _, width in opened.images), opened.images
    assert opened.title.startswith("hspc-gen report")


def test_a_figure_that_cannot_be_drawn_says_so_and_the_others_are_drawn() -> None:
    measured = RESULT.threads
    assert isinstance(measured, ThreadAdvice) and measured.evidence is not None
    endless = tuple(dataclasses.replace(p, events_per_s=math.inf) for p in measured.evidence.curve)
    evidence = dataclasses.replace(measured.evidence, curve=endless)  # matplotlib refuses inf
    advice = dataclasses.replace(measured, evidence=evidence)
    broken = dataclasses.replace(LOADED, result=dataclasses.replace(RESULT, threads=advice))
    files = html.files(broken, BENCH)
    assert all(files[name].startswith(PNG_SIGNATURE) for name in figure_data.FIGURES)
    assert files["hspc-threads.png"] != html.files(LOADED, BENCH)["hspc-threads.png"]


def trail_rows(summary: str) -> list[list[str]]:
    """The summary's per-step table, row by row (its heading row first)."""
    lines = summary.splitlines()
    heading = "| stage | step | screened | rounds | margin | host noise | disturbed | winner |"
    if heading not in lines:
        return []
    start = lines.index(heading)
    rows = []
    for line in lines[start:]:
        if not line.startswith("| "):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return [rows[0], *rows[2:]]  # less the |---| line


@pytest.mark.slow
def test_the_page_states_every_caveat_and_step_the_summary_states(tmp_path: Path) -> None:
    """Chromium reads each page as a person would: every note of the summary (the budget ran
    out, not confirmed, a busy machine, an efficiency unresolved or at the bound, a thread
    failure, a replay...) and every row of its per-step table is on the page."""
    results = every_result(tmp_path / "results")
    for name, result in results.items():
        (tmp_path / name).mkdir()
        written = load_result(json.loads(json.dumps(result_document(result))))
        for file, content in html.files(written, None).items():
            (tmp_path / name / file).write_bytes(content)
    pages = [(tmp_path / name / figure_data.REPORT_FILE, f"caveats-{name}.png") for name in results]
    for (name, result), opened in zip(results.items(), open_pages(pages), strict=True):
        assert opened.console == (), name
        notes = summary_notes(result)
        assert notes, name
        for note in notes:
            assert note in opened.text, (name, note)
        summary = render_summary(result)
        for row in trail_rows(summary):
            assert "\t".join(row) in opened.text, (name, row)
        if result.search is not None and result.search.trail:
            assert trail_rows(summary), name


def test_the_buffer_caption_names_what_a_line_is_as_drawn() -> None:
    by_primitive = html.panels(RESULT, None)[1]
    assert "one line per primitive;" in by_primitive.explains
    one = [c for c in RESULT_DOC["candidates"] if c["stage"] == "one"]
    stage_one = typed({**RESULT_DOC, "candidates": one})
    assert {s.label.split(", ")[0] for s in figure_data.curves(stage_one).series} == {"futex"}
    by_count = html.panels(stage_one, None)[1]
    assert "one line per buffer count (of the one primitive measured);" in by_count.explains


def test_a_result_older_than_its_caveats_sends_the_reader_to_its_summary() -> None:
    assert "caveats" not in RESULT_DOC and LOADED.caveats is None  # the example predates them
    page = html.files(LOADED, BENCH)[figure_data.REPORT_FILE].decode()
    assert "This result does not list its caveats" in page and "hspc-summary.md" in page
    assert '<table id="trail">' in page and "<td>8.3%</td>" in page  # its steps, all the same


def test_the_pools_parameters_are_on_the_page_in_the_summarys_words() -> None:
    """threads.consumers: adaptive: the page (from the result as written) states kPoolTuning's
    fields, values and reasons as the summary does, the estimate's stand-ins said to be so."""
    result = dataclasses.replace(RESULT, pool=ESTIMATED_POOL)
    written = load_result(json.loads(json.dumps(result_document(result))))
    page = html.render(written, (), {})
    summary = render_summary(result).splitlines()
    heading = (
        "Pool (threads.consumers: adaptive; estimated, nothing measured): the header's"
        " kPoolTuning, which ConsumerPool runs with unless given other PoolOptions (the fields"
        " not listed keep their defaults):"
    )
    assert heading in summary
    assert f'<section id="pool"><p>{htmllib.escape(heading)}</p>' in page
    assert "<tr><th>PoolOptions</th><th>value</th><th>why</th></tr>" in page
    wake = "the default spin budget's, not measured"
    assert wake in ESTIMATED_POOL.grow_wait_ns.why
    assert "the tuner's floor, nothing decided" in ESTIMATED_POOL.grow_wait_ns.why
    assert "the estimate's 1 consumer(s) for 1 producer(s), from the topology (not measured)" in (
        ESTIMATED_POOL.start_consumers.why
    )
    for name, choice in ESTIMATED_POOL.choices():
        assert f"| {name} | {choice.value} | {choice.why} |" in summary
        cells = f"<td>{name}</td><td>{choice.value}</td><td>{htmllib.escape(choice.why)}</td>"
        assert f"<tr>{cells}</tr>" in page, name


def test_without_the_switch_the_page_has_no_pool() -> None:
    assert RESULT.pool is None
    page = html.render(LOADED, (), {})
    assert 'id="pool"' not in page and "kPoolTuning" not in page
