"""What waiting costs on this host, measured once per host fingerprint and kept in the record
store (FFTW's wisdom; a `CalibrationRecord`): the futex wake-up latency and a context switch
(runtime/harness/calibrate_main.cpp). The spin budgets the search starts from come from them
(model.HostTimings.budgets).

A calibration taken beside other load is kept but marked busy, and a quiet run measures it again.
One that cannot be built or run is data too: the budgets stay at DEFAULT_SPIN_NS and the note
says why.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from hspc_gen.model import HostTimings
from hspc_gen.search.decisions import stats
from hspc_gen.search.measure import load, program
from hspc_gen.search.measure.program import ProgramError
from hspc_gen.search.records.entries import CalibrationRecord
from hspc_gen.search.records.samples import RecordKey
from hspc_gen.search.records.store import RecordStore

SAMPLES = 101
RUN_TIMEOUT_SECONDS = 30.0
PROGRAM = "calibrate_main.cpp"
HEADERS = ("hspc/futex.hpp", "hspc/affinity.hpp", "harness/cpus.hpp")


@dataclass(frozen=True)
class Calibrated:
    timings: HostTimings | None
    note: str | None = None  # why there are no timings (the budgets stay at DEFAULT_SPIN_NS)


NOT_CALIBRATED = Calibrated(None)


def key(fingerprint: str) -> RecordKey:
    """What a calibration is valid for: the host and the program that timed it (its source and
    headers: a program that times differently measures again), whichever compiler built it (the
    wait costs are the kernel's and the CPUs')."""
    return RecordKey(fingerprint, _program_digest(), "", "")


@functools.cache
def _program_digest() -> str:
    """The calibration program's source and headers, read once a process (they are installed)."""
    return program.digest("", PROGRAM, HEADERS)


def cached(store: RecordStore) -> Calibrated:
    """The timings an earlier run measured on this host, without measuring."""
    found = store.latest(CalibrationRecord, key(store.fingerprint))
    if found is None:
        return Calibrated(None, "the host's wait costs were never measured here")
    return Calibrated(timings_of(found))


def calibrate(store: RecordStore, cache_dir: Path, compiler: str) -> Calibrated:
    """The recorded timings, or new ones when there are none or a quiet machine can improve on
    busy ones."""
    known = cached(store)
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
    record = CalibrationRecord(key(store.fingerprint), tuple(wake), tuple(switch), busy)
    store.append(record)
    return Calibrated(timings_of(record))


def timings_of(record: CalibrationRecord) -> HostTimings:
    return HostTimings(stats.figure(record.wake_ns), stats.figure(record.switch_ns), record.busy)


def _build(cache_dir: Path, compiler: str) -> Path:
    """The calibration program, built once per source and compiler."""
    return program.built(cache_dir, compiler, PROGRAM, HEADERS)


def _run(path: Path) -> tuple[list[float], list[float]]:
    out = program.call([str(path), f"--samples={SAMPLES}"], RUN_TIMEOUT_SECONDS, "run")
    lines = {name: values for name, *values in (line.split() for line in out.splitlines() if line)}
    try:
        return [float(v) for v in lines["wake"]], [float(v) for v in lines["switch"]]
    except (KeyError, ValueError):
        raise ProgramError(f"its program printed {out[:200]!r}") from None
