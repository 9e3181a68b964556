"""What hspc-gen wrote before the one store (main up to dd4fbca), read as this version's records.

That version kept two measured facts in JSON files of their own beside the store, in the cache's
`host` folder: the host's calibration (`timings-<fingerprint>.json`) and the user's code's cost
(`user-code-<fingerprint>-<code digest>.json`); its wisdom files (format 1) carried them by those
names. Their documents are exactly what a `CalibrationRecord` and a `UserCodeRecord` hold, and
their names say the key, so they are read, not refused: a user keeps what that version measured.
The store's own lines of that version are this version's schema and need nothing.

Only this module knows those names: it can go when no cache of that version is left.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hspc_gen.search.measure import calibrate, preflight
from hspc_gen.search.records.entries import (
    CalibrationRecord,
    Entry,
    UserCodeRecord,
    floats,
    strict_bool,
)
from hspc_gen.search.records.samples import RecordKey
from hspc_gen.search.records.store import FOLDER, SAFE_NAME, RecordStore

HOST_FOLDER = "host"  # under the cache folder, where that version kept them
CALIBRATION_PREFIX = "timings-"
USER_CODE_PREFIX = "user-code-"
SUFFIX = ".json"
DIGEST_LENGTH = 16
WISDOM_FORMAT = 1  # the wisdom format that carried them by file name

HostRecord = CalibrationRecord | UserCodeRecord


def legacy_key(name: str, fingerprint: str) -> RecordKey | None:
    """The key of the record a file of that version named `name` holds for `fingerprint`; None
    when it is no such file of this host's."""
    if name == f"{CALIBRATION_PREFIX}{fingerprint}{SUFFIX}":
        return calibrate.key(fingerprint)
    head = f"{USER_CODE_PREFIX}{fingerprint}-"
    if not (name.startswith(head) and name.endswith(SUFFIX)):
        return None
    digest = name[len(head) : -len(SUFFIX)]
    if len(digest) != DIGEST_LENGTH or not set(digest) <= set(string.hexdigits.lower()):
        return None
    return preflight.code_key(fingerprint, digest)


def legacy_record(key: RecordKey, document: Mapping[str, Any]) -> HostRecord:
    """The record a file of that version held (KeyError, TypeError or ValueError when its
    document is not one)."""
    busy = strict_bool(document["busy"])
    if key == calibrate.key(key.fingerprint):
        wake, switch = floats(document["wake_ns"]), floats(document["switch_ns"])
        return CalibrationRecord(key, wake, switch, busy)
    producer, consumer = float(document["producer_ns"]), float(document["consumer_ns"])
    return UserCodeRecord(key, producer, consumer, busy)


def legacy_fingerprint(name: str) -> str | None:
    """The host a file of that version belongs to, by its name alone."""
    if not name.endswith(SUFFIX):
        return None
    stem = name[: -len(SUFFIX)]
    if stem.startswith(CALIBRATION_PREFIX):
        found = stem[len(CALIBRATION_PREFIX) :]
    elif stem.startswith(USER_CODE_PREFIX):
        found = stem[len(USER_CODE_PREFIX) :].rpartition("-")[0]
    else:
        return None
    return found if SAFE_NAME.fullmatch(found) and legacy_key(name, found) else None


def pending(
    cache_dir: Path, fingerprint: str, held: Iterable[Entry]
) -> tuple[list[HostRecord], list[str]]:
    """The records `fingerprint`'s files of that version hold that `held` (its store's entries)
    has none of under their key, and the files that cannot be read."""
    have = {(type(e), e.key) for e in held}
    records: list[HostRecord] = []
    unreadable: list[str] = []
    for path in sorted((cache_dir / HOST_FOLDER).glob(f"*{SUFFIX}")):
        key = legacy_key(path.name, fingerprint)
        if key is None:
            continue
        try:
            record = legacy_record(key, json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            unreadable.append(str(path))
            continue
        if (type(record), key) not in have:
            records.append(record)
    return records, unreadable


def legacy_hosts(cache_dir: Path) -> tuple[str, ...]:
    """The hosts the cache holds files of that version for."""
    names = (p.name for p in (cache_dir / HOST_FOLDER).glob(f"*{SUFFIX}"))
    return tuple(sorted({fp for name in names if (fp := legacy_fingerprint(name)) is not None}))


def adopt(cache_dir: Path, store: RecordStore) -> int:
    """Append to `store` each record its host's files of that version hold and the store lacks
    (once: the store's own answer from then on); how many. The files stay, for that version;
    one that cannot be read is set aside in the store, so that its notes name it."""
    records, unreadable = pending(cache_dir, store.fingerprint, store.entries())
    store.set_aside(f"{path}: a file of the previous hspc-gen, not readable" for path in unreadable)
    for record in records:
        store.append(record)
    return len(records)


def opened(cache_dir: Path, fingerprint: str) -> RecordStore:
    """The record store of `fingerprint` in the cache, with its files of that version adopted."""
    store = RecordStore(cache_dir / FOLDER, fingerprint)
    adopt(cache_dir, store)
    return store


def wisdom_records(fingerprint: str, host_files: Mapping[str, Any]) -> tuple[int, list[HostRecord]]:
    """The records a format-1 wisdom part's host files hold, and how many it held that are not
    its host's or cannot be read."""
    records, bad = [], 0
    for name, document in sorted(host_files.items()):
        key = legacy_key(str(name), fingerprint)
        try:
            if key is None:
                raise ValueError(f"{name} is no file of host {fingerprint}")
            records.append(legacy_record(key, document))
        except (KeyError, TypeError, ValueError):
            bad += 1
    return bad, records
