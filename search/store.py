"""The append-only record store: one JSON Lines file per host fingerprint under a cache directory.

Each line is one `Record`. Lines are only ever appended (flushed and fsynced), so a run killed
mid-write leaves at most one partial last line, which loading skips. A record is reused only when
its whole `RecordKey` matches (host fingerprint, rendered source hash, compiler, flags): anything
else is stale, as FFTW rejects wisdom from another build.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hspc_gen.search.records import Record, RecordKey

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")


def store_file_name(fingerprint: str) -> str:
    """The file name for a fingerprint: itself when it is a safe name, else a hash of it."""
    if _SAFE_NAME.fullmatch(fingerprint):
        return f"{fingerprint}.jsonl"
    digest = hashlib.sha256(fingerprint.encode()).hexdigest()[:16]
    return f"host-{digest}.jsonl"


@dataclass(frozen=True)
class Loaded:
    """The records of one store file, and how many lines could not be read (and why)."""

    records: tuple[Record, ...]
    skipped: tuple[str, ...] = ()


def read_records(path: Path) -> Loaded:
    """Every well-formed record in `path`; a missing file is an empty store.

    A last line without its newline is a write cut short by a kill and is skipped silently;
    any other unreadable line is skipped and reported.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Loaded(())
    lines = text.split("\n")
    # split() leaves "" after a final newline, or the unterminated fragment of a cut-short write.
    lines.pop()
    records: list[Record] = []
    skipped: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(Record.from_dict(json.loads(line)))
        except (ValueError, KeyError, TypeError) as err:
            skipped.append(f"{path}:{number}: {type(err).__name__}: {err}")
    return Loaded(tuple(records), tuple(skipped))


class RecordStore:
    """Records of one host, appended to `<cache_dir>/<fingerprint>.jsonl` and indexed in memory."""

    def __init__(self, cache_dir: Path, fingerprint: str) -> None:
        self.fingerprint = fingerprint
        self.path = cache_dir / store_file_name(fingerprint)
        loaded = read_records(self.path)
        self.skipped = loaded.skipped
        self._records: list[Record] = list(loaded.records)

    def append(self, record: Record) -> None:
        """Write one record as one line and make it durable before returning."""
        if record.key.fingerprint != self.fingerprint:
            raise ValueError(
                f"record for host {record.key.fingerprint!r} in the store of {self.fingerprint!r}"
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(record.to_dict(), sort_keys=True, separators=(",", ":")) + "\n"
        with self.path.open("a+b") as f:
            # A previous writer killed mid-line left an unterminated fragment: end it, so that
            # this record starts a line of its own and only the fragment is lost.
            if f.tell() > 0:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    f.write(b"\n")
            f.write(line.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        self._records.append(record)

    def extend(self, records: Iterable[Record]) -> None:
        for record in records:
            self.append(record)

    def records(self) -> tuple[Record, ...]:
        return tuple(self._records)

    def lookup(self, key: RecordKey, arm: str) -> tuple[Record, ...]:
        """The records of `arm` measured under exactly `key`, oldest first."""
        return tuple(r for r in self._records if r.key == key and r.arm == arm)

    def stale(self, key: RecordKey) -> tuple[Record, ...]:
        """Records of this host under another source, compiler or flags: never reused."""
        return tuple(r for r in self._records if r.key != key)
