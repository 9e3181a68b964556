"""The report's pictures: hspc-report.html and its PNG figures, drawn (reports/html.py) from the
documents in the report folder, hspc-result.json and, once `hspc-gen bench` has run,
hspc-bench.json, each read into the model's types by the model's own loader. Both the tuning run
and the bench call this, so the page always shows what the folder holds."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hspc_gen.errors import UserError
from hspc_gen.files import write_atomic
from hspc_gen.model.bench_file import read_bench
from hspc_gen.model.result_file import ResultFile, UnreadableError, load_result, read_result
from hspc_gen.reports import bench as bench_report


def write_report(folder: Path, document: Mapping[str, Any]) -> tuple[Path, ...]:
    """Draw the report of the result `document` (as written to hspc-result.json: the page shows
    what the file holds), with the bench beside it if any, into `folder`."""
    return _drawn(folder, load_result(document))


def _drawn(folder: Path, loaded: ResultFile) -> tuple[Path, ...]:
    # Imported here: drawing loads matplotlib, which the commands that draw nothing never need.
    from hspc_gen.reports import html  # noqa: PLC0415

    try:
        bench = read_bench(folder / bench_report.BENCH_FILE)
    except UnreadableError:
        bench = None  # a bench file this version cannot read: the page is drawn without it
    written = []
    for name, content in sorted(html.files(loaded, bench).items()):
        write_atomic(folder / name, content)
        written.append(folder / name)
    return tuple(written)


def redraw(folder: Path, result_file: Path) -> tuple[Path, ...]:
    """Draw the report again from the result document on disk (after `hspc-gen bench`); a
    result this version cannot read is refused with the loader's message."""
    return _drawn(folder, readable(result_file))


def readable(result_file: Path) -> ResultFile:
    """The result on disk as the report reads it, or one message saying why it cannot be: asked
    before anything is measured, so a bench does not end in a refusal."""
    try:
        return read_result(result_file)
    except UnreadableError as err:
        raise UserError(f"the report cannot be drawn: {err}") from None
