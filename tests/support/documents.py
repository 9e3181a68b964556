"""The recorded documents the report tests read (tests/data/report: a run's hspc-result.json and
hspc-bench.json), raw and through the model's loaders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hspc_gen.model.bench_file import load_bench
from hspc_gen.model.result import TuneResult
from hspc_gen.model.result_file import load_result

DATA = Path(__file__).resolve().parents[1] / "data"


def document(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((DATA / "report" / name).read_text(encoding="utf-8"))
    return loaded


RESULT_DOC, BENCH_DOC = document("hspc-result.json"), document("hspc-bench.json")


def typed(data: dict[str, Any]) -> TuneResult:
    """A result document as the report reads it: through the model's loader."""
    return load_result(data).result


LOADED = load_result(RESULT_DOC)
RESULT, BENCH = LOADED.result, load_bench(BENCH_DOC)
