"""`hspc-gen bench`: the header an earlier run wrote, timed beside this host's peer queues and
the limit lines (search/contest.py measures, reports/bench.py tells), hspc-bench.json beside the
result."""

from __future__ import annotations

import math
from pathlib import Path

from hspc_gen import wiring
from hspc_gen.batch import Show, quiet
from hspc_gen.emit import json_text, write_atomic
from hspc_gen.errors import UserError
from hspc_gen.host import read_host
from hspc_gen.model.bench import BenchReport
from hspc_gen.pipeline import Outputs
from hspc_gen.report import redraw
from hspc_gen.reports import bench as bench_report
from hspc_gen.search.contest import Contest, measure
from hspc_gen.search.measure.toolchain import app_work
from hspc_gen.search.store import locked
from hspc_gen.target import Target, load_target


def bench(  # noqa: PLR0917 (the command's own options, in its order)
    target_path: Path,
    result: Path | None,
    out: Path | None,
    rounds: int,
    cxxflags: str,
    cache: Path | None,
    show: Show = quiet,
) -> BenchReport:
    """`hspc-gen bench`: the header an earlier run wrote, beside the host's peer queues and the
    limit lines, timed side by side; hspc-bench.json beside the result."""
    target, host = load_target(target_path), read_host()
    written = Outputs.of(target, out)
    source = result or written.result
    if not source.is_file():
        raise UserError(f"no result at {source}: run hspc-gen --target first, or pass --from")
    params = wiring.winner_of(source, target)
    header = _header_beside(source, target, written)
    folder = out or target.output.report
    wiring.check_outputs(folder / bench_report.BENCH_FILE, cache=cache)
    contest = Contest(
        target=target.name,
        fingerprint=host.fingerprint,
        compiler=host.compiler,
        params=params,
        header=header,
        namespace=target.output.namespace,
        workload=target.workload,
        app=app_work(target.workload),
        event_bytes=target.event.size,
        cxxflags=cxxflags,
        rounds=rounds,
    )
    store = wiring.record_store(host, cache)
    with locked(store, math.inf, show):
        report = measure(contest, wiring.cache_dir(cache) / "bench", show, store)
    write_atomic(folder / bench_report.BENCH_FILE, json_text(bench_report.document(report)))
    redraw(folder, source)
    return report


def _header_beside(result: Path, target: Target, written: Outputs) -> Path:
    """The header the result's run wrote: beside the result, else where the target puts it."""
    for path in (result.parent / target.output.header.name, written.header):
        if path.is_file():
            return path
    raise UserError(f"no {target.output.header.name} beside {result} nor at {written.header}")
