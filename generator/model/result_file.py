"""hspc-result.json read back into the typed result: the one reader of the document that
reports/result.py writes, so the report's page and figures, redrawn by `hspc-gen bench` from the
file, work on the same types the run had in hand.

The document keeps what a person reads, rounded to 6 digits, and not everything the run knew: the
loaded result has what the document holds and these stand-ins for what it does not, so that
writing a loaded result gives the same document again (tests/unit/test_result_file.py):
- a rate's quartiles: the document keeps their spread (iqr) only; the loaded q1 and q3 lie
  half of it either side of the median;
- an estimated thread advice (the document's recommendation is null): NOT_KEPT, no threads;
- whether the budget left a whole step out: False (the caveats, which said so, are kept whole);
- a number the document holds as null (not finite when written): NaN;
- the thread counts equally good: the document's list, not judged again from its rounded
  intervals (`ThreadEvidence.judged`).

A document this version cannot read (another schema, a missing or mistyped field) is refused
with one message that says which file and why: `UnreadableError`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from hspc_gen.model import (
    ChannelParams,
    Effort,
    Figure,
    HostTimings,
    Objective,
    Primitive,
    Status,
    Summary,
)
from hspc_gen.model.advice_file import pool_tuning, thread_advice
from hspc_gen.model.caveat import Caveat, CaveatKind
from hspc_gen.model.result import (
    CandidateResult,
    Confirmed,
    Failure,
    RunInfo,
    SearchResult,
    Step,
    TuneResult,
)

SCHEMA_VERSION = 3
"""The hspc-result.json schema this version writes and reads (reports/result.py says what each
version added); fields a later schema 3 added are taken as absent from an earlier file."""

Doc = Mapping[str, Any]
T = TypeVar("T")


class UnreadableError(ValueError):
    """A result document this version cannot read: the message names the file and the reason."""


@dataclass(frozen=True)
class ResultFile:
    """An hspc-result.json as typed values: the result, and the caveats it states (None: an
    older hspc-gen wrote it without them)."""

    result: TuneResult
    caveats: tuple[Caveat, ...] | None


def read_result(path: Path) -> ResultFile:
    """The result document at `path`, typed; UnreadableError when it is missing or not one this
    version reads."""
    return load_result(read_json(path, "hspc-result.json"), str(path))


def read_confirmed(path: Path) -> Confirmed | None:
    """The confirmation the result document at `path` records (its rate and margin, rounded as
    the document holds them); None when it has none, or when this version cannot read the
    document whole (an older hspc-gen wrote it)."""
    try:
        search = read_result(path).result.search
    except UnreadableError:
        return None
    return search.confirmed if search is not None else None


def load_result(data: object, source: str = "hspc-result.json") -> ResultFile:
    """A result document (as json.loads gives it) as typed values."""
    return typed(data, source, "hspc-result.json", _current)


def read_json(path: Path, what: str) -> object:
    """The JSON at `path`; UnreadableError naming `what` it should have been."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise UnreadableError(f"{path}: not a readable {what} ({err})") from None


def typed(data: object, source: str, what: str, load: Callable[[Doc], T]) -> T:
    """`load(data)`, a document that is not `what` this version reads refused in one message
    that names `source` and why."""
    if not isinstance(data, Mapping):
        raise UnreadableError(f"{source}: not an {what} (no JSON object)")
    try:
        return load(data)
    except UnreadableError as err:
        raise UnreadableError(f"{source}: {err}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise UnreadableError(f"{source}: not an {what} this hspc-gen reads ({err!r})") from None


def _current(data: Doc) -> ResultFile:
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise UnreadableError(
            f"written with result schema {version}, and this hspc-gen reads schema"
            f" {SCHEMA_VERSION}: run hspc-gen --target again to write it anew"
        )
    return _loaded(data)


def _loaded(data: Doc) -> ResultFile:
    winner = params(data["winner"]["params"])
    search = _search(data, winner) if "decisions" in data else None
    result = TuneResult(
        run=_run(data),
        winner=winner,
        search=search,
        threads=thread_advice(data.get("recommendation")),
        pool=pool_tuning(data["pool"]) if data.get("pool") is not None else None,
    )
    said = data.get("caveats")
    caveats = None if said is None else tuple(_caveat(c) for c in said)
    return ResultFile(result, caveats)


def _caveat(data: Doc) -> Caveat:
    """A caveat; one of a kind a later hspc-gen added (schema 3 still) is shown as a note."""
    kind = data["kind"]
    known = kind in {k.value for k in CaveatKind}
    return Caveat(CaveatKind(kind) if known else CaveatKind.note, str(data["text"]))


def params(data: Doc) -> ChannelParams:
    """A channel's parameters as the documents hold them (`ChannelParams.as_dict`)."""
    values: dict[str, Any] = {k: int(v) for k, v in data.items() if k != "primitive"}
    return ChannelParams(primitive=Primitive(data["primitive"]), **values)


def number(value: object) -> float:
    """A document's number; null (a figure that was not finite) as NaN."""
    return math.nan if value is None else float(value)  # type: ignore[arg-type]


def figure(data: Doc | None) -> Figure | None:
    if data is None:
        return None
    low, high = data.get("ci95") or (None, None)
    return Figure(number(data["median"]), number(low), number(high), int(data.get("n") or 0))


def summary(data: Doc | None) -> Summary | None:
    """A rate as the document holds it; its quartiles stand around the median, their spread
    the document's iqr (the document keeps no more of them)."""
    shown = figure(data)
    if data is None or shown is None:
        return None
    spread = number(data.get("iqr"))
    return Summary(
        shown.median,
        shown.ci95_low,
        shown.ci95_high,
        shown.n,
        q1=shown.median - spread / 2,
        q3=shown.median + spread / 2,
        preempted_fraction=number(data.get("preempted_fraction")),
    )


def _run(data: Doc) -> RunInfo:
    target, host = data["target"], dict(data["host"])
    return RunInfo(
        target=str(target["name"]),
        event_bytes=int(target["event_bytes"]),
        objective=Objective(target["objective"]),
        effort=Effort(data["effort"]),
        budget_seconds=float(data["budget_seconds"]),
        elapsed_seconds=float(data["elapsed_seconds"]),
        host=host,
        host_model=str(host.get("model_name", "")),
        fingerprint=str(data["fingerprint"]),
        tool_version=str(data["tool"]["version"]),
        other_cpus=float(data.get("other_cpus_before") or 0.0),
        busy=bool(data.get("busy")),
        notes=tuple(str(n) for n in data.get("notes") or ()),
        timings=_timings(data.get("host_timings")),
    )


def _timings(data: Doc | None) -> HostTimings | None:
    if data is None:
        return None
    wake, switch = figure(data["wake_ns"]), figure(data["switch_ns"])
    if wake is None or switch is None:
        raise ValueError("host_timings without both wake_ns and switch_ns")
    return HostTimings(wake, switch, busy=bool(data.get("busy")))


def _search(data: Doc, winner: ChannelParams) -> SearchResult:
    confirmation = data.get("confirmation")
    return SearchResult(
        winner=winner,
        confirmed=_confirmed(data, confirmation) if confirmation is not None else None,
        trail=tuple(step(d) for d in data["decisions"]),
        candidates=tuple(_candidate(c) for c in data.get("candidates") or ()),
        failures=tuple(
            Failure(str(f["id"]), Status(f["status"]), str(f["cause"]))
            for f in data.get("failures") or ()
        ),
        budget_exhausted=bool(data.get("budget_exhausted")),
        measured_plans=int(data.get("measured_plans") or 0),
        cached_plans=int(data.get("cached_plans") or 0),
        remeasured_plans=int(data.get("remeasured_plans") or 0),
        seed=int(data["seed"]),
        oversubscribed=bool(data.get("oversubscribed")),
        placement=str(data["winner"].get("placement") or ""),
    )


def _confirmed(data: Doc, confirmation: Doc) -> Confirmed:
    winner, bound = data["winner"], data.get("latency_bound")
    return Confirmed(
        winner_id=winner.get("id"),
        rate=summary(winner.get("events_per_second")),
        latency_ns=figure(winner.get("latency_ns")),
        efficiency=figure(data.get("efficiency")),
        baselines=baselines(data.get("baselines")),
        decision=step(confirmation),
        latency_bound_ns=None if bound is None else number(bound["max_latency_ns"]),
        latency_p99_ns=None if bound is None else figure(bound.get("p99_wait_ns")),
        unresolved=str(data.get("efficiency_unresolved") or ""),
        at_bound=str(data.get("efficiency_at_bound") or ""),
        remeasured=str(data.get("remeasured") or ""),
    )


def baselines(data: Doc | None) -> dict[str, Summary]:
    """The limit lines by name, those with a rate (a line the document holds as null is none)."""
    found = {name: summary(line.get("events_per_second")) for name, line in (data or {}).items()}
    return {name: rate for name, rate in found.items() if rate is not None}


def step(data: Doc) -> Step:
    rounds = int(data["rounds"])
    return Step(
        stage=str(data["stage"]),
        step=str(data["step"]),
        winner=data.get("winner"),
        ties=tuple(str(t) for t in data.get("ties") or ()),
        noise_floor=number(data.get("noise_floor")),
        margin=number(data.get("margin")),
        precision=number(data.get("precision")),
        rounds=rounds,
        excluded={str(arm): Status(s) for arm, s in (data.get("excluded") or {}).items()},
        proposed=int(data.get("proposed") or 0),
        screened=int(data.get("screened") or 0),
        seconds=float(data.get("seconds") or 0.0),
        disturbed=number(data.get("disturbed_samples", 0.0)),
        planned_rounds=int(data.get("planned_rounds", rounds)),
        cut=bool(data.get("cut")),
        baselines=baselines(data.get("baselines")),
        host_noise=number(data.get("host_noise")),
    )


def _candidate(data: Doc) -> CandidateResult:
    dropped = data.get("dropped_after_round")
    return CandidateResult(
        id=str(data["id"]),
        stage=str(data["stage"]),
        step=str(data["step"]),
        params=params(data["params"]),
        status=Status(data["status"]),
        dropped_after_round=None if dropped is None else int(dropped),
        won_step=bool(data.get("won_step")),
        rate=summary(data.get("events_per_second")),
        cost_vs_winner=figure(data.get("cost_vs_winner")),
    )
