"""What `hspc-gen wisdom export` and `import` moved, per host fingerprint, and what they left out
and why: the command line prints it (`reports.wisdom`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class WisdomAction(StrEnum):
    export = "export"
    import_ = "import"


@dataclass(frozen=True)
class HostPart:
    """One host fingerprint's part of a wisdom file."""

    fingerprint: str
    entries: int  # record-store entries exported, or added to the cache, but for host records
    host_records: int  # the calibration and the user's code's costs, exported or added
    present: int = 0  # import: entries and host records the cache already held
    conflicts: int = 0  # import: entries for a measurement the cache holds its own of
    kept: int = 0  # import: host records the cache holds its own, different, of


@dataclass(frozen=True)
class WisdomReport:
    action: WisdomAction
    file: str
    this_host: str  # this host's fingerprint: the part it replays
    made_by: str  # the hspc-gen version that wrote the file
    hosts: tuple[HostPart, ...]
    ignored: tuple[tuple[str, int], ...] = ()  # what could not be used: why, and how many

    def part_of(self, fingerprint: str) -> HostPart | None:
        return next((p for p in self.hosts if p.fingerprint == fingerprint), None)
