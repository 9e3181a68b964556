"""A contest (`hspc-gen bench`'s plan of the tuned channel against its peers and baselines) made
without a compiler, over a small header (`HEADER`) and the tuned parameters (`PARAMS`), and a
contender's sample of one round (`sample`)."""

from __future__ import annotations

from pathlib import Path

from hspc_gen.model import ChannelParams, Primitive
from hspc_gen.model.workload import Workload
from hspc_gen.render import render_contest_files
from hspc_gen.search import contest
from hspc_gen.search.records.samples import Sample

PARAMS = ChannelParams(128, 0, 4, 16384, Primitive.futex)
HEADER = (
    "// a header\nnamespace app {\ntemplate <class T> struct Channel {};\n}  // namespace app\n"
)


def a_contest(header: Path = Path("app_channel.hpp"), **fields: object) -> contest.Contest:
    def render(rows: tuple[str, ...]) -> dict[str, str]:  # the header is read when built
        return render_contest_files(PARAMS, 8, header.read_text(), "app", tuned_rows=rows)

    return contest.Contest(
        target="app",
        fingerprint="f",
        compiler="g++",
        params=PARAMS,
        header=header,
        workload=Workload(),
        render=render,
        event_bytes=8,
        **fields,  # type: ignore[arg-type]
    )


def sample(arm: str, round_number: int, ns_per_event: float, verified: bool = True) -> Sample:
    """`arm`'s sample of round `round_number`: a thousand events at `ns_per_event`."""
    events = 1000
    return Sample(arm, round_number, events, ns_per_event * events, 0, 0, 0, 0, 0, verified)
