"""The append-only record store: one JSON Lines file per host fingerprint under a cache directory.

Each line is one entry of a kind `search.records.entries` knows (samples, a budget's cut, the
CPU-pair matrix, the host's calibration, the user's code's cost, a bench round), stamped with the
store's schema version: every fact the tool measures on a host lives here. Lines are only ever
appended (flushed and fsynced), so a run killed mid-write leaves at most one partial last line,
which
loading skips. An entry is reused only when its whole `RecordKey` matches (host fingerprint,
source hash, compiler, flags): anything else is stale, as FFTW rejects wisdom from another build.
A line that cannot be read (another version's schema, or damaged) is never used and never fatal:
`skipped` says which, for the run's report.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypeVar

from hspc_gen.search.records.entries import Entry, entry_from_dict
from hspc_gen.search.records.samples import Cut, MatrixRecord, Record, RecordKey

FOLDER = "records"  # under the cache folder
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")
LOCK_POLL_SECONDS = 0.5
E = TypeVar("E", bound=Entry)


def store_file_name(fingerprint: str) -> str:
    """The file name for a fingerprint: itself when it is a safe name, else a hash of it."""
    if SAFE_NAME.fullmatch(fingerprint):
        return f"{fingerprint}.jsonl"
    digest = hashlib.sha256(fingerprint.encode()).hexdigest()[:16]
    return f"host-{digest}.jsonl"


def entry_line(entry: Entry) -> str:
    """An entry as the store writes it: one canonical JSON line (the same entry, the same bytes)."""
    return json.dumps(entry.to_dict(), sort_keys=True, separators=(",", ":")) + "\n"


@dataclass(frozen=True)
class Loaded:
    """The entries of one store file in its order, and the lines that could not be read (and
    why)."""

    entries: tuple[Entry, ...]
    skipped: tuple[str, ...] = ()

    @property
    def records(self) -> tuple[Record, ...]:
        return of_kind(self.entries, Record)

    @property
    def cuts(self) -> tuple[Cut, ...]:
        return of_kind(self.entries, Cut)

    @property
    def matrices(self) -> tuple[MatrixRecord, ...]:
        return of_kind(self.entries, MatrixRecord)


def of_kind(entries: Iterable[Entry], kind: type[E]) -> tuple[E, ...]:
    return tuple(e for e in entries if isinstance(e, kind))


def read_records(path: Path) -> Loaded:
    """Every readable entry in `path`; a missing file is an empty store.

    A last line without its newline is a write cut short by a kill and is skipped silently;
    any other unreadable line is skipped and reported.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Loaded(())
    return parse_lines(text, path)


def parse_lines(text: str, path: Path) -> Loaded:
    """`read_records` of a store file's text (`path` names it in what is skipped)."""
    lines = text.split("\n")
    # split() leaves "" after a final newline, or the unterminated fragment of a cut-short write.
    lines.pop()
    entries: list[Entry] = []
    skipped: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entries.append(entry_from_dict(json.loads(line)))
        except (ValueError, KeyError, TypeError, IndexError) as err:
            skipped.append(f"{path}:{number}: {type(err).__name__}: {err}")
    return Loaded(tuple(entries), tuple(skipped))


class RecordStore:
    """Entries of one host, appended to `<cache_dir>/<fingerprint>.jsonl` and indexed in memory."""

    def __init__(self, cache_dir: Path, fingerprint: str) -> None:
        self.fingerprint = fingerprint
        self.path = cache_dir / store_file_name(fingerprint)
        self._set_aside: tuple[str, ...] = ()
        self.reload()

    def reload(self) -> None:
        """Read the file again, with what other runs appended since this store was opened."""
        loaded = read_records(self.path)
        self._unread = loaded.skipped
        self._entries: list[Entry] = list(loaded.entries)
        self._records: list[Record] = list(loaded.records)
        self._cuts: set[Cut] = set(loaded.cuts)

    @property
    def skipped(self) -> tuple[str, ...]:
        """What could not be read, each with where and why: the file's lines, then what was
        `set_aside` (a damaged file of the previous version): what it held is measured again."""
        return self._unread + self._set_aside

    def set_aside(self, what: Iterable[str]) -> None:
        """Name facts that were meant for this store and could not be taken in."""
        self._set_aside += tuple(what)

    def append(self, entry: Entry) -> None:
        """Write one entry as one line and make it durable before returning."""
        if entry.key.fingerprint != self.fingerprint:
            raise ValueError(
                f"record for host {entry.key.fingerprint!r} in the store of {self.fingerprint!r}"
            )
        append_lines(self.path, entry_line(entry))
        self._entries.append(entry)
        if isinstance(entry, Record):
            self._records.append(entry)
        elif isinstance(entry, Cut):
            self._cuts.add(entry)

    def extend(self, records: Iterable[Record]) -> None:
        for record in records:
            self.append(record)

    def records(self) -> tuple[Record, ...]:
        return tuple(self._records)

    def lookup(self, key: RecordKey, arm: str) -> tuple[Record, ...]:
        """The records of `arm` measured under exactly `key`, oldest first."""
        return tuple(r for r in self._records if r.key == key and r.arm == arm)

    def matrices(self, key: RecordKey) -> tuple[MatrixRecord, ...]:
        """The topology matrices measured under exactly `key`, oldest first."""
        return self.keyed(MatrixRecord, key)

    def entries(self) -> tuple[Entry, ...]:
        """Every entry, in the file's order."""
        return tuple(self._entries)

    def keyed(self, kind: type[E], key: RecordKey) -> tuple[E, ...]:
        """The entries of `kind` recorded under exactly `key`, oldest first."""
        return tuple(e for e in of_kind(self._entries, kind) if e.key == key)

    def latest(self, kind: type[E], key: RecordKey) -> E | None:
        """The last entry of `kind` recorded under exactly `key` (a fact measured again is
        appended: the newest says what holds)."""
        found = self.keyed(kind, key)
        return found[-1] if found else None

    def was_cut(self, cut: Cut) -> bool:
        """Whether this cut was recorded (by this command's earlier, cold run)."""
        return cut in self._cuts

    def trimmed(self, key: RecordKey, run: str) -> int | None:
        """How many candidates this command's earlier run kept of the batch keyed `key`."""
        kept = [c.keep for c in self._cuts if c.key == key and c.run == run and c.keep]
        return min(kept) if kept else None


def append_lines(path: Path, lines: str) -> None:
    """Append whole `lines` (each ending in a newline) in one write, durable on return. Every
    writer of a store appends, never rewrites, so a run appending beside another (or beside a
    wisdom import) loses nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as f:
        # A previous writer killed mid-line left an unterminated fragment: end it, so that these
        # lines start a line of their own and only the fragment is lost.
        if f.tell() > 0:
            f.seek(-1, os.SEEK_END)
            if f.read(1) != b"\n":
                f.write(b"\n")
        f.write(lines.encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())


class StoreBusyError(Exception):
    """Another run held the store's lock for longer than this run could wait."""


@contextlib.contextmanager
def locked(store: RecordStore, deadline: float, on_wait: Callable[[str], None]) -> Iterator[None]:
    """One run at a time measures with a host's records: two at once would disturb each
    other's samples and record them as sound. Waits for the other run until `deadline`, then
    reads the store again: what the run it waited for measured is replayed, not measured twice."""
    with lock(store.path, deadline, on_wait):
        store.reload()
        yield


@contextlib.contextmanager
def lock(store_path: Path, deadline: float, on_wait: Callable[[str], None]) -> Iterator[None]:
    """The lock of the store file `store_path`, as `locked` takes it: whoever rewrites the file
    (a wisdom import) holds it too, so that no run appends to the file being replaced."""
    path = store_path.with_suffix(".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as handle:
        _acquire(handle, path, deadline, on_wait)
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _acquire(handle: IO[str], path: Path, deadline: float, on_wait: Callable[[str], None]) -> None:
    told = False
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        handle.seek(0)
        holder = handle.read().strip() or "?"
        if time.monotonic() >= deadline:
            raise StoreBusyError(
                f"another hspc-gen run (pid {holder}) is measuring with this host's records"
                f" ({path}); run again when it has finished"
            )
        if not told:
            on_wait(f"waiting for another hspc-gen run (pid {holder}) to finish measuring")
            told = True
        time.sleep(LOCK_POLL_SECONDS)
