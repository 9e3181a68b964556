"""What waiting costs on this host, measured once per host fingerprint and kept in the cache (FFTW's
wisdom): the futex wake-up latency and a context switch (runtime/bench/calibrate_main.cpp). The
spin budgets the search starts from come from them (model.HostTimings.budgets).

A calibration taken beside other load is kept but marked busy, and a quiet run measures it again.
One that cannot be built or run is data too: the budgets stay at DEFAULT_SPIN_NS and the note
says why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hspc_gen.files import write_atomic
from hspc_gen.model import HostTimings
from hspc_gen.search import stats
from hspc_gen.search.measure import load, program
from hspc_gen.search.measure.program import ProgramError

SAMPLES = 101
RUN_TIMEOUT_SECONDS = 30.0
FOLDER = program.FOLDER  # under the cache folder: the program, and one file per host fingerprint
HEADERS = ("hspc/futex.hpp", "hspc/affinity.hpp", "bench/cpus.hpp")
RECORD_PREFIX = "timings-"


@dataclass(frozen=True)
class Calibrated:
    timings: HostTimings | None
    note: str | None = None  # why there are no timings (the budgets stay at DEFAULT_SPIN_NS)


NOT_CALIBRATED = Calibrated(None)


def cached(cache_dir: Path, fingerprint: str) -> Calibrated:
    """The timings an earlier run measured on this host, without measuring."""
    path = record_path(cache_dir, fingerprint)
    try:
        document = timings_document(json.loads(path.read_text(encoding="utf-8")))
        wake, switch = document["wake_ns"], document["switch_ns"]
        timings = HostTimings(stats.figure(wake), stats.figure(switch), document["busy"])
    except FileNotFoundError:
        return Calibrated(None, "the host's wait costs were never measured here")
    except (OSError, ValueError, KeyError, TypeError) as err:
        return Calibrated(None, f"{path} could not be read ({err}): measured again")
    return Calibrated(timings)


def calibrate(cache_dir: Path, fingerprint: str, compiler: str) -> Calibrated:
    """The cached timings, or new ones when there are none or a quiet machine can improve on
    busy ones."""
    known = cached(cache_dir, fingerprint)
    if known.timings is not None and not known.timings.busy:
        return known
    if known.timings is not None and load.machine_busy()[0]:
        return known  # busy then, busy now: measuring again would not tell more
    before = load.cpu_times()
    try:
        wake, switch = _run(_build(cache_dir, compiler))
    except ProgramError as err:
        return Calibrated(known.timings, f"the host's wait costs were not measured: {err}")
    busy = load.busy(before, load.cpu_times())
    document = {"wake_ns": wake, "switch_ns": switch, "busy": busy}
    write_atomic(record_path(cache_dir, fingerprint), json.dumps(document) + "\n")
    return Calibrated(HostTimings(stats.figure(wake), stats.figure(switch), busy))


def record_path(cache_dir: Path, fingerprint: str) -> Path:
    return cache_dir / FOLDER / f"{RECORD_PREFIX}{fingerprint}.json"


def timings_document(data: Mapping[str, Any]) -> dict[str, Any]:
    """A calibration record as its file holds it, checked (ValueError, KeyError or TypeError
    when it is not one) and in one form, so that two records of the same timings compare equal."""
    busy = data["busy"]
    if not isinstance(busy, bool):
        raise TypeError(f"busy is {busy!r}, not true or false")
    return {
        "wake_ns": _floats(data["wake_ns"]),
        "switch_ns": _floats(data["switch_ns"]),
        "busy": busy,
    }


def _floats(values: Any) -> list[float]:
    if not isinstance(values, list):
        raise TypeError(f"{values!r} is not a list of timings")
    return [float(v) for v in values]


def _build(cache_dir: Path, compiler: str) -> Path:
    """The calibration program, built once per source and compiler."""
    return program.built(cache_dir, compiler, "calibrate_main.cpp", HEADERS)


def _run(path: Path) -> tuple[list[float], list[float]]:
    out = program.call([str(path), f"--samples={SAMPLES}"], RUN_TIMEOUT_SECONDS, "run")
    lines = {name: values for name, *values in (line.split() for line in out.splitlines() if line)}
    try:
        return [float(v) for v in lines["wake"]], [float(v) for v in lines["switch"]]
    except (KeyError, ValueError):
        raise ProgramError(f"its program printed {out[:200]!r}") from None
