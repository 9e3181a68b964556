"""The report's pictures: hspc-report.html and its PNG figures, drawn (reports/html.py) from the
documents in the report folder, hspc-result.json and, once `hspc-gen bench` has run,
hspc-bench.json. Both the tuning run and the bench call this, so the page always shows what the
folder holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hspc_gen.files import write_atomic
from hspc_gen.reports import bench as bench_report


def _document(path: Path) -> dict[str, Any] | None:
    """A JSON document, or None when it is missing or unreadable (a report is drawn without it)."""
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def write_report(folder: Path, result: dict[str, Any]) -> tuple[Path, ...]:
    """Draw the report of `result` (with the bench beside it, if any) into `folder`."""
    # Imported here: drawing loads matplotlib, which the commands that draw nothing never need.
    from hspc_gen.reports import html  # noqa: PLC0415

    bench = _document(folder / bench_report.BENCH_FILE)
    written = []
    for name, content in sorted(html.files(result, bench).items()):
        write_atomic(folder / name, content)
        written.append(folder / name)
    return tuple(written)


def redraw(folder: Path, result_file: Path) -> tuple[Path, ...]:
    """Draw the report again from the result document on disk (after `hspc-gen bench`)."""
    result = _document(result_file)
    return write_report(folder, result) if result is not None else ()
