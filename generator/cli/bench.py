"""`hspc-gen bench`: the header an earlier run wrote, timed beside this host's peer queues and
the limit lines (search/contest.py measures, reports/bench.py tells), hspc-bench.json beside the
result (--out elsewhere: there, without the page, which shows only the result beside it)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

from hspc_gen import wiring
from hspc_gen.errors import UserError
from hspc_gen.files import json_text, write_atomic
from hspc_gen.host.machine import Host, read_host
from hspc_gen.model import ChannelParams
from hspc_gen.model.bench import BenchReport
from hspc_gen.pipeline import Outputs
from hspc_gen.render import AppWork, render_contest_files
from hspc_gen.report import readable, redraw
from hspc_gen.reports import bench as bench_report
from hspc_gen.search import api as search
from hspc_gen.search.api import Contest, Show, locked, quiet
from hspc_gen.target.app import Target, load_target


@dataclass(frozen=True)
class Benched:
    """What a bench wrote: the report, hspc-bench.json's folder, the result it benched, and
    whether that folder's page was drawn again with the bench (only beside that result)."""

    report: BenchReport
    folder: Path
    source: Path
    redrawn: bool


def bench(  # noqa: PLR0917 (the command's own options, in its order)
    target_path: Path,
    result: Path | None,
    out: Path | None,
    rounds: int,
    cxxflags: str,
    cache: Path | None,
    show: Show = quiet,
) -> Benched:
    """`hspc-gen bench`: the header an earlier run wrote, beside the host's peer queues and the
    limit lines, timed side by side; hspc-bench.json beside the result (the folder whose report
    it extends, redrawn with it), or in `out`: the page only if `out` is the result's folder."""
    target, host = load_target(target_path), read_host()
    written = Outputs.of(target, out)
    source = result or written.result
    if not source.is_file():
        raise UserError(f"no result at {source}: run hspc-gen --target first, or pass --from")
    params = wiring.winner_of(source, target)
    readable(source)  # the page is redrawn after the rounds: refuse now, not then
    header = _header_beside(source, target, written)
    folder = out or source.parent  # the result's own folder, by default
    wiring.check_outputs(folder / bench_report.BENCH_FILE, cache=cache)
    contest = _contest(target, host, params, header, (cxxflags, rounds))
    store = wiring.record_store(host, cache)
    with locked(store, math.inf, show):
        busy, _ = search.machine_busy()  # a quiet machine measures again what load disturbed
        contest = dataclasses.replace(contest, quiet=not busy)
        report = search.contest(contest, wiring.cache_dir(cache) / "bench", show, store)
    write_atomic(folder / bench_report.BENCH_FILE, json_text(bench_report.document(report)))
    beside = folder.resolve() == source.parent.resolve()
    if beside:  # never a page of one result drawn beside another's, or beside none
        redraw(folder, source)
    return Benched(report, folder, source, beside)


def _contest(
    target: Target, host: Host, params: ChannelParams, header: Path, build: tuple[str, int]
) -> Contest:
    """What the contest measures, and how its Meson project renders for the tuned rows that
    build (the render stage: the tuned header beside the peers); `build` is --cxxflags and
    --rounds."""
    workload = target.workload.value()
    header_text, app, size = (
        header.read_text(encoding="utf-8"),
        AppWork.of(workload),
        target.event.size,
    )

    def render(rows: tuple[str, ...]) -> dict[str, str]:
        namespace = target.output.namespace
        return render_contest_files(params, size, header_text, namespace, tuned_rows=rows, app=app)

    cxxflags, rounds = build
    return Contest(
        target=target.name,
        fingerprint=host.fingerprint,
        compiler=host.compiler,
        params=params,
        header=header,
        workload=workload,
        render=render,
        event_bytes=target.event.size,
        cxxflags=cxxflags,
        rounds=rounds,
    )


def _header_beside(result: Path, target: Target, written: Outputs) -> Path:
    """The header the result's run wrote: beside the result, else where the target puts it."""
    for path in (result.parent / target.output.header.name, written.header):
        if path.is_file():
            return path
    raise UserError(f"no {target.output.header.name} beside {result} nor at {written.header}")
