"""Fleet wisdom, after FFTW's: what one host measured, carried to others of the same fingerprint,
which then replay it (the same command writes the same header bytes) instead of measuring.

A wisdom file holds, per host fingerprint, every entry of its record store (`search.store`: the
samples, the budget's cuts, the measured CPU-pair matrix), its calibration (`measure.calibrate`)
and its user's code's costs (`measure.preflight`): all that a run reads instead of measuring.
It is one JSON document: the format's name and version, and the payload with the sha256 of its
canonical JSON, so that a file damaged, cut short or edited is refused whole. (A content hash,
not a signature: it tells damage and stray edits, not who made the file.)

An import checks the whole file before it writes anything, then merges part by part, keeping
every host's part as FFTW keeps all wisdom. An entry the cache holds already is not written again
(importing twice changes nothing). An entry for a measurement the cache holds its own of (the
same plan's arm, or a cut of the same plan and run) is left out: appended, it would override the
cache's own (a replay takes a round's latest samples), which measured this very host. What this
version cannot read is left out too; all are counted. A store file is rewritten whole (a
temporary file renamed) under the store's own lock, so that no run appends to it meanwhile.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hspc_gen import __version__
from hspc_gen.errors import UserError
from hspc_gen.files import write_atomic
from hspc_gen.model.wisdom import HostPart, WisdomAction, WisdomReport
from hspc_gen.search.measure import calibrate, preflight
from hspc_gen.search.records import Entry, MatrixRecord, Record, entry_from_dict
from hspc_gen.search.store import (
    FOLDER,
    SAFE_NAME,
    entry_line,
    lock,
    parse_lines,
    store_file_name,
)

FORMAT = "hspc-gen wisdom"
FORMAT_VERSION = 1
_MAGIC = f'{{"format":"{FORMAT}"'  # how every wisdom file begins (canonical: keys sorted)
_HOST_FILES: tuple[tuple[re.Pattern[str], Callable[[Mapping[str, Any]], dict[str, Any]]], ...] = (
    (
        re.compile(rf"{calibrate.RECORD_PREFIX}(?P<fingerprint>{SAFE_NAME.pattern})\.json"),
        calibrate.timings_document,
    ),
    (
        re.compile(
            rf"{preflight.RECORD_PREFIX}(?P<fingerprint>{SAFE_NAME.pattern})-[0-9a-f]{{16}}\.json"
        ),
        lambda data: preflight.UserCode.from_dict(data).to_dict(),
    ),
)
UNREADABLE_LINE = "lines of the record store that cannot be read (another version's, or damaged)"
UNREADABLE_ENTRY = "record-store entries this hspc-gen cannot read (another record format)"
FOREIGN_ENTRY = "entries keyed to another host than the part of the file they are in"
UNREADABLE_HOST_FILE = "host records (calibration, user's code's cost) unreadable or not its host's"
BAD_FINGERPRINT = "parts for a host fingerprint that cannot name a file"

Reasons = Counter[str]


@dataclass(frozen=True)
class HostWisdom:
    """One host's wisdom: its store's entries (in the store's order: the latest samples of a
    round are the ones a replay takes) and its host records, by file name."""

    fingerprint: str
    entries: tuple[Entry, ...]
    host_files: tuple[tuple[str, dict[str, Any]], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "entries": [e.to_dict() for e in self.entries],
            "host_files": dict(self.host_files),
        }


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
    payload = _checked_payload(data, name)
    try:
        made_by = str(payload["hspc_gen"])
        ignored: Reasons = Counter()
        hosts = tuple(_host(part, ignored) for part in payload["hosts"])
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise UserError(f"{name}: wisdom this hspc-gen cannot read ({err!r})") from None
    kept = tuple(h for h in hosts if h is not None)
    return Wisdom(made_by, kept, tuple(sorted(ignored.items())))


def _checked_payload(data: bytes, name: str) -> Any:
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
    if document.get("version") != FORMAT_VERSION:
        raise UserError(
            f"{name} is wisdom format {document.get('version')!r}; this hspc-gen reads format"
            f" {FORMAT_VERSION}"
        )
    payload = document.get("payload")
    if document.get("sha256") != _digest(payload):
        raise UserError(
            f"{name} was altered or damaged: its content does not match its sha256 (export it"
            " again)"
        )
    return payload


def _host(part: Mapping[str, Any], ignored: Reasons) -> HostWisdom | None:
    fingerprint = str(part["fingerprint"])
    if not SAFE_NAME.fullmatch(fingerprint):
        ignored[BAD_FINGERPRINT] += 1
        return None
    entries = tuple(_entries(part["entries"], fingerprint, ignored))
    files = []
    for file_name, document in dict(part["host_files"]).items():
        checked = _host_file(str(file_name), document)
        if checked is None or checked[0] != fingerprint:
            ignored[UNREADABLE_HOST_FILE] += 1
        else:
            files.append((str(file_name), checked[1]))
    return HostWisdom(fingerprint, entries, tuple(sorted(files)))


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


def _host_file(name: str, document: Any) -> tuple[str, dict[str, Any]] | None:
    """The fingerprint a host record's file name belongs to, and its document checked; None
    when it is no host record this version knows."""
    for pattern, check in _HOST_FILES:
        if (found := pattern.fullmatch(name)) is not None:
            try:
                return found["fingerprint"], check(document)
            except (KeyError, TypeError, ValueError):
                return None
    return None


def collect(cache_dir: Path) -> Wisdom:
    """Everything the cache holds for every host fingerprint."""
    ignored: Reasons = Counter()
    entries: dict[str, list[Entry]] = {}
    for path in sorted((cache_dir / FOLDER).glob("*.jsonl")):
        loaded = parse_lines(_text(path), path)
        ignored[UNREADABLE_LINE] += len(loaded.skipped)
        every: tuple[Entry, ...] = (*loaded.records, *loaded.cuts, *loaded.matrices)
        for entry in every:
            entries.setdefault(entry.key.fingerprint, []).append(entry)
    files: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for path in sorted((cache_dir / calibrate.FOLDER).glob("*.json")):
        checked = _host_file(path.name, _json(path))
        if checked is None:
            ignored[UNREADABLE_HOST_FILE] += 1
        else:
            files.setdefault(checked[0], []).append((path.name, checked[1]))
    hosts = tuple(
        HostWisdom(fp, tuple(entries.get(fp, ())), tuple(files.get(fp, ())))
        for fp in sorted({*entries, *files})
    )
    return Wisdom(__version__, hosts, tuple(sorted((k, v) for k, v in ignored.items() if v)))


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


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
    parts = tuple(HostPart(h.fingerprint, len(h.entries), len(h.host_files)) for h in hosts)
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


def _merge(cache_dir: Path, host: HostWisdom, on_wait: Callable[[str], None]) -> HostPart:
    added, present, conflicts = _merge_entries(cache_dir, host, on_wait)
    files = [_merge_host_file(cache_dir / calibrate.FOLDER / n, d) for n, d in host.host_files]
    return HostPart(
        host.fingerprint,
        added,
        files.count(_ADDED),
        present + files.count(_PRESENT),
        conflicts,
        files.count(_KEPT),
    )


def _slot(entry: Entry) -> tuple[object, ...]:
    """What an entry measured or cut: two entries of one slot answer the same question."""
    if isinstance(entry, Record):
        key = (entry.key, entry.arm, entry.seed, entry.first_round, entry.events_per_sample)
        return ("samples", *key)
    if isinstance(entry, MatrixRecord):
        return ("matrix", entry.key)
    return ("cut", entry.key, entry.run, entry.plan)


def _merge_entries(
    cache_dir: Path, host: HostWisdom, on_wait: Callable[[str], None]
) -> tuple[int, int, int]:
    """Added, already present and conflicting entries of one host's store."""
    path = cache_dir / FOLDER / store_file_name(host.fingerprint)
    with lock(path, math.inf, on_wait):
        text = _text(path)
        loaded = parse_lines(text, path)
        own: tuple[Entry, ...] = (*loaded.records, *loaded.cuts, *loaded.matrices)
        lines, slots = {entry_line(e) for e in own}, {_slot(e) for e in own}
        new: list[str] = []
        present = conflicts = 0
        for entry in host.entries:
            line = entry_line(entry)
            if line in lines:
                present += 1
            elif _slot(entry) in slots:
                conflicts += 1
            else:
                new.append(line)
                lines.add(line)
        if new:
            # A partial last line (a writer killed mid-line) ends first, as RecordStore.append
            # ends it: only that fragment is lost.
            ended = text if not text or text.endswith("\n") else text + "\n"
            write_atomic(path, ended + "".join(new))
    return len(new), present, conflicts


_ADDED, _PRESENT, _KEPT = "added", "present", "kept"


def _merge_host_file(path: Path, document: dict[str, Any]) -> str:
    """A host record: written when the cache has none (or an unreadable one, or one measured
    beside other load where the import's was not); else the cache's own is kept."""
    checked = _host_file(path.name, _json(path))
    own = None if checked is None else checked[1]
    if own == document:
        return _PRESENT
    if own is None or (own["busy"] and not document["busy"]):
        write_atomic(path, json.dumps(document, sort_keys=True) + "\n")
        return _ADDED
    return _KEPT
