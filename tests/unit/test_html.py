"""hspc-report.html and its PNGs from recorded documents: complete, self-contained, the same
bytes each time, and whole in a real browser (headless Chromium: no console error, every figure
decoded; the screenshot is kept in build/test-artifacts/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser import open_page
from test_figure_data import BENCH, RESULT

from hspc_gen.reports import figure_data, html

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_the_report_holds_every_figure_inline_and_beside_it() -> None:
    files = html.files(RESULT, BENCH)
    assert set(files) == {*figure_data.FIGURES, figure_data.REPORT_FILE}
    page = files[figure_data.REPORT_FILE].decode()
    for name in figure_data.FIGURES:
        assert files[name].startswith(PNG_SIGNATURE)
    images = re.findall(r'<img src="([^"]*)"', page)
    assert len(images) == len(figure_data.FIGURES)
    assert all(src.startswith("data:image/png;base64,") for src in images)
    assert not re.search(r"(src|href)=\"(?!data:)", page)  # nothing to fetch: no network


def test_the_same_documents_give_the_same_bytes() -> None:
    assert html.files(RESULT, BENCH) == html.files(RESULT, BENCH)


def test_text_from_the_documents_is_escaped() -> None:
    hostile = {**RESULT, "target": {**RESULT["target"], "name": "<script>alert(1)</script>"}}
    page = html.files(hostile, None)[figure_data.REPORT_FILE].decode()
    assert "<script>" not in page and "&lt;script&gt;" in page


@pytest.mark.slow
def test_chromium_renders_the_report_whole(tmp_path: Path) -> None:
    for name, content in html.files(RESULT, BENCH).items():
        (tmp_path / name).write_bytes(content)
    opened = open_page(tmp_path / figure_data.REPORT_FILE, "recorded-report.png")
    assert opened.console == ()
    assert [alt for alt, _ in opened.images] == list(figure_data.FIGURES.values())
    assert all(width > 0 for _, width in opened.images), opened.images
    assert opened.title.startswith("hspc-gen report")


def test_a_figure_that_cannot_be_drawn_says_so_and_the_others_are_drawn() -> None:
    broken = {**RESULT, "recommendation": {"producers": 1, "consumers": 1, "evidence": {"curve": [
        {"producers": 1, "consumers": 1, "threads": 2, "placement": "unpinned",
         "events_per_s": "not a number", "ci95": None}]}}}  # fmt: skip
    files = html.files(broken, BENCH)
    assert all(files[name].startswith(PNG_SIGNATURE) for name in figure_data.FIGURES)
    assert files["hspc-threads.png"] != html.files(RESULT, BENCH)["hspc-threads.png"]
