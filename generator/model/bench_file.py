"""hspc-bench.json (written by reports/bench.py) read back into the model's BenchReport, for the
report's peer figure: the one reader of that document."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hspc_gen.model import Status
from hspc_gen.model.bench import BenchReport, BenchRow, Contender, Role
from hspc_gen.model.result_file import figure, params, read_json, typed


def read_bench(path: Path) -> BenchReport | None:
    """The bench document at `path`, typed; None when there is none (the bench has not run)."""
    if not path.is_file():
        return None
    return load_bench(read_json(path, "hspc-bench.json"), str(path))


def load_bench(data: object, source: str = "hspc-bench.json") -> BenchReport:
    """A bench document (as json.loads gives it) as typed values."""
    return typed(data, source, "hspc-bench.json", _loaded)


def _loaded(data: Mapping[str, Any]) -> BenchReport:
    return BenchReport(
        target=str(data["target"]),
        fingerprint=str(data["fingerprint"]),
        event_bytes=int(data["event_bytes"]),
        channel=params(data["channel"]),
        header=str(data["header"]),
        cxxflags=str(data["cxxflags"]),
        compiler=str(data["compiler"]),
        rounds=int(data["rounds"]),
        reference=str(data["reference"]),
        rows=tuple(_row(r) for r in data["rows"]),
        missing=tuple(str(m) for m in data.get("missing") or ()),
        remeasured=tuple(str(m) for m in data.get("remeasured") or ()),
    )


def _row(data: Mapping[str, Any]) -> BenchRow:
    return BenchRow(
        contender=Contender(str(data["id"]), Role(data["role"]), str(data["what"])),
        status=Status(data["status"]),
        rate=figure(data.get("events_per_second")),
        vs_reference=figure(data.get("speed_vs_reference")),
        cause=str(data.get("cause") or ""),
        unresolved=str(data.get("unresolved") or ""),
        at_bound=str(data.get("at_bound") or ""),
    )
