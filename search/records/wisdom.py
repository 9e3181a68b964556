"""Fleet wisdom, after FFTW's: what one host measured, carried to others of the same fingerprint,
which then replay it (the same command writes the same header bytes) instead of measuring.

A wisdom file holds, per host fingerprint, every entry of its record store (`search.records.store`:
the samples, the budget's cuts, the measured CPU-pair matrix, the calibration, the user's code's
costs, the bench's rounds): all that a run reads instead of measuring, as records and nothing else.
It is one JSON document: the format's name, its version (the store's schema version), and
the payload with the sha256 of its canonical JSON, so that a file damaged, cut short or edited is
refused whole. (A content hash, not a signature: it tells damage and stray edits, not who made
the file.) A file of format 1 (hspc-gen up to dd4fbca, which carried the calibration and the
costs as files by name) is read through `search.records.migrate`; any other version is refused.

An import checks the whole file before it writes anything, then merges part by part, keeping
every host's part as FFTW keeps all wisdom. An entry the cache holds already is not written again
(importing twice changes nothing). An entry for a measurement the cache holds its own of (the
same plan's arm, a cut of the same plan and run, the same bench round) is left out: appended, it
would override the cache's own (a replay takes a round's latest samples), which measured this
very host. A host record (the calibration, a user's code's cost) is taken when the cache has none
for its key, or only one measured beside other load where the import's was not; else the cache's
own is kept. What this version cannot read is left out too; all are counted. The entries taken
are appended to a store file under the store's own lock, in one write, as a run appends its own:
nothing a run appends meanwhile is lost.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hspc_gen import __version__
from hspc_gen.errors import UserError
from hspc_gen.files import write_atomic
from hspc_gen.model.wisdom import HostPart, WisdomAction, WisdomReport
from hspc_gen.search.records import migrate
from hspc_gen.search.records.entries import (
    CalibrationRecord,
    Entry,
    UserCodeRecord,
    entry_from_dict,
    slot,
)
from hspc_gen.search.records.samples import STORE_SCHEMA
from hspc_gen.search.records.store import (
    FOLDER,
    SAFE_NAME,
    append_lines,
    entry_line,
    lock,
    parse_lines,
    store_file_name,
)

FORMAT = "hspc-gen wisdom"
FORMAT_VERSION = STORE_SCHEMA
READ_VERSIONS = (migrate.WISDOM_FORMAT, FORMAT_VERSION)
_MAGIC = f'{{"format":"{FORMAT}"'  # how every wisdom file begins (canonical: keys sorted)
UNREADABLE_LINE = "lines of the record store that cannot be read (another version's, or damaged)"
UNREADABLE_ENTRY = "record-store entries this hspc-gen cannot read (another record format)"
FOREIGN_ENTRY = "entries keyed to another host than the part of the file they are in"
UNREADABLE_HOST_FILE = "host records (calibration, user's code's cost) unreadable or not its host's"
BAD_FINGERPRINT = "parts for a host fingerprint that cannot name a file"
HOST_RECORDS = (CalibrationRecord, UserCodeRecord)

Reasons = Counter[str]


@dataclass(frozen=True)
class HostWisdom:
    """One host's wisdom: its store's entries, in the store's order (the latest samples of a
    round are the ones a replay takes; the latest host record is the one that holds)."""

    fingerprint: str
    entries: tuple[Entry, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"fingerprint": self.fingerprint, "entries": [e.to_dict() for e in self.entries]}

    @property
    def host_records(self) -> int:
        return sum(isinstance(e, HOST_RECORDS) for e in self.entries)


@dataclass(frozen=True)
class Wisdom:
    made_by: str  # the hspc-gen version that wrote it
    hosts: tuple[HostWisdom, ...]
    ignored: tuple[tuple[str, int], ...] = ()  # what was left out of it, and why


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _digest(payload: Any) -> str:
    return hashlib.sha256(_canonical(payload).encode("ascii")).hexdigest()


def encode(hosts: Sequence[HostWisdom]) -> str:
    """The wisdom file's text: canonical JSON, its payload's sha256 beside it."""
    payload = {"hspc_gen": __version__, "hosts": [h.to_dict() for h in hosts]}
    document = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "sha256": _digest(payload),
        "payload": payload,
    }
    return _canonical(document) + "\n"


def decode(data: bytes, name: str) -> Wisdom:
    """The wisdom in a file's bytes, or UserError with one line saying why it is refused."""
    version, payload = _checked_payload(data, name)
    try:
        made_by = str(payload["hspc_gen"])
        ignored: Reasons = Counter()
        hosts = tuple(_host(part, version, ignored) for part in payload["hosts"])
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise UserError(f"{name}: wisdom this hspc-gen cannot read ({err!r})") from None
    kept = tuple(h for h in hosts if h is not None)
    return Wisdom(made_by, kept, tuple(sorted((k, v) for k, v in ignored.items() if v)))


def _checked_payload(data: bytes, name: str) -> tuple[int, Any]:
    try:
        text = data.decode("utf-8")
        document = json.loads(text)
    except ValueError as err:  # JSONDecodeError and UnicodeDecodeError
        if data.startswith(_MAGIC.encode()):
            raise UserError(
                f"{name} is damaged or cut short ({len(data)} bytes, not whole JSON): export it"
                " again"
            ) from None
        raise UserError(f"{name} is not an hspc-gen wisdom file ({type(err).__name__})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise UserError(f"{name} is not an hspc-gen wisdom file")
    version = document.get("version")
    if version not in READ_VERSIONS:
        readable = " and ".join(map(str, READ_VERSIONS))
        raise UserError(
            f"{name} is wisdom format {version!r}; this hspc-gen reads formats {readable}"
        )
    payload = document.get("payload")
    if document.get("sha256") != _digest(payload):
        raise UserError(
            f"{name} was altered or damaged: its content does not match its sha256 (export it"
            " again)"
        )
    return int(version), payload


def _host(part: Mapping[str, Any], version: int, ignored: Reasons) -> HostWisdom | None:
    fingerprint = str(part["fingerprint"])
    if not SAFE_NAME.fullmatch(fingerprint):
        ignored[BAD_FINGERPRINT] += 1
        return None
    entries: list[Entry] = list(_entries(part["entries"], fingerprint, ignored))
    if version == migrate.WISDOM_FORMAT:
        bad, records = migrate.wisdom_records(fingerprint, dict(part["host_files"]))
        ignored[UNREADABLE_HOST_FILE] += bad
        entries += records
    return HostWisdom(fingerprint, tuple(entries))


def _entries(data: Iterable[Any], fingerprint: str, ignored: Reasons) -> Iterable[Entry]:
    for item in data:
        try:
            entry = entry_from_dict(item)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            ignored[UNREADABLE_ENTRY] += 1
            continue
        if entry.key.fingerprint != fingerprint:
            ignored[FOREIGN_ENTRY] += 1
            continue
        yield entry


def collect(cache_dir: Path) -> Wisdom:
    """Everything the cache holds for every host fingerprint (with what the previous version's
    host files hold that its store does not yet)."""
    ignored: Reasons = Counter()
    entries: dict[str, list[Entry]] = {}
    for path in sorted((cache_dir / FOLDER).glob("*.jsonl")):
        loaded = parse_lines(_text(path), path)
        ignored[UNREADABLE_LINE] += len(loaded.skipped)
        for entry in loaded.entries:
            entries.setdefault(entry.key.fingerprint, []).append(entry)
    for fingerprint in migrate.legacy_hosts(cache_dir):
        held = entries.setdefault(fingerprint, [])
        records, unreadable = migrate.pending(cache_dir, fingerprint, held)
        held += records
        ignored[UNREADABLE_HOST_FILE] += len(unreadable)
    hosts = tuple(HostWisdom(fp, tuple(held)) for fp, held in sorted(entries.items()) if held)
    return Wisdom(__version__, hosts, tuple(sorted((k, v) for k, v in ignored.items() if v)))


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def export(
    cache_dir: Path, file: Path, fingerprints: Sequence[str], this_host: str
) -> WisdomReport:
    """Write the wisdom of the hosts `fingerprints` (all in the cache when none) to `file`."""
    wisdom = collect(cache_dir)
    held = [h.fingerprint for h in wisdom.hosts]
    if not held:
        raise UserError(f"nothing to export: {cache_dir} holds no records (choose it with --cache)")
    if missing := sorted(set(fingerprints) - set(held)):
        raise UserError(
            f"{cache_dir} holds nothing for host {', '.join(missing)}; it holds {', '.join(held)}"
        )
    hosts = tuple(h for h in wisdom.hosts if not fingerprints or h.fingerprint in fingerprints)
    write_atomic(file, encode(hosts))
    parts = tuple(
        HostPart(h.fingerprint, len(h.entries) - h.host_records, h.host_records) for h in hosts
    )
    return WisdomReport(
        WisdomAction.export, str(file), this_host, __version__, parts, wisdom.ignored
    )


def import_file(
    file: Path, cache_dir: Path, this_host: str, on_wait: Callable[[str], None]
) -> WisdomReport:
    """Merge the wisdom in `file` into the cache, once the whole file is checked."""
    try:
        data = file.read_bytes()
    except OSError as err:
        raise UserError(f"cannot read {file}: {err.strerror or err}") from None
    wisdom = decode(data, str(file))
    parts = tuple(_merge(cache_dir, host, on_wait) for host in wisdom.hosts)
    return WisdomReport(
        WisdomAction.import_, str(file), this_host, wisdom.made_by, parts, wisdom.ignored
    )


_ADDED, _HOST_ADDED, _PRESENT, _CONFLICT, _KEPT = "added", "host", "present", "conflict", "kept"


def _merge(cache_dir: Path, host: HostWisdom, on_wait: Callable[[str], None]) -> HostPart:
    """One host's entries merged into its store, appended under the store's lock (a run may
    append beside it: calibration and the user's code's cost do not take the lock)."""
    path = cache_dir / FOLDER / store_file_name(host.fingerprint)
    with lock(path, math.inf, on_wait):
        own = parse_lines(_text(path), path).entries
        # What the previous version measured here is the cache's own, taken in first (as a run
        # opening the store would): an import does not displace it.
        adopted = migrate.pending(cache_dir, host.fingerprint, own)[0]
        merger = _Merger((*own, *adopted))
        said = Counter(merger.take(entry) for entry in host.entries)
        lines = [entry_line(record) for record in adopted] + merger.new
        if lines:
            append_lines(path, "".join(lines))
    return HostPart(
        host.fingerprint,
        said[_ADDED],
        said[_HOST_ADDED],
        said[_PRESENT],
        said[_CONFLICT],
        said[_KEPT],
    )


class _Merger:
    """What one store holds, and the lines an import adds to it."""

    def __init__(self, own: Iterable[Entry]) -> None:
        # The cache's own latest entry per measurement: an import's later entries for the same
        # measurement (measured again, quieter) are taken in their order, as the exporter has them.
        self.lines: set[str] = set()
        self.latest: dict[tuple[object, ...], Entry] = {}
        self.new: list[str] = []
        for entry in own:
            self.lines.add(entry_line(entry))
            self.latest[slot(entry)] = entry

    def take(self, entry: Entry) -> str:
        """Hold `entry` and say so, or say why not."""
        line = entry_line(entry)
        if line in self.lines:
            return _PRESENT
        own = self.latest.get(slot(entry))
        host_record = isinstance(entry, HOST_RECORDS)
        if own is not None and not (host_record and _quieter(entry, own)):
            return _KEPT if host_record else _CONFLICT
        self.lines.add(line)
        self.new.append(line)
        return _HOST_ADDED if host_record else _ADDED


def _quieter(entry: Entry, own: Entry) -> bool:
    """Whether an imported host record was measured on a quiet machine where the cache's was not."""
    busy = isinstance(own, HOST_RECORDS) and own.busy
    return busy and isinstance(entry, HOST_RECORDS) and not entry.busy
