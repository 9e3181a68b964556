"""Files written whole: a temporary file beside the target, fsync, then rename; JSON as canonical
text.

A reader never sees a half-written header, result, record or cache, and a run killed mid-write
leaves the previous file intact. The bottom layer: every stage that writes a file (emit, search's
caches and wisdom, the reports) writes through here.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def json_text(document: Any) -> str:
    """Canonical JSON: sorted keys, two-space indent, trailing newline (byte-stable)."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


class WriteRefusedError(OSError):
    """A write of an output the machine refused (a full disk, a quota, a read-only mount), named
    by the file asked for, not its temporary."""


def write_atomic(path: Path, content: str | bytes) -> None:
    """Write `content` (text as UTF-8 with \n line ends) to a temporary file beside `path`, then
    rename it over `path`: a reader sees the old file or the new one, never a part."""
    data = content.encode() if isinstance(content, str) else content
    tmp = ""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        Path(tmp).chmod(0o644)
        Path(tmp).replace(path)
    except BaseException as error:
        if tmp:
            with contextlib.suppress(FileNotFoundError):
                Path(tmp).unlink()
        if isinstance(error, OSError) and error.errno is not None:  # the file asked for, not
            raise WriteRefusedError(error.errno, error.strerror, str(path)) from error  # its tmp
        raise


def writable_problem(path: Path, folder: bool = False) -> str | None:
    """Why `path` (a file, or a folder when `folder`) could not be written, or None: checked
    before anything is written, so a run never dies halfway through its outputs."""
    try:
        return _writable_problem(path, folder)
    except OSError as error:  # a name too long, a loop of links: the path itself is the problem
        return f"{path}: {error.strerror or error}"


def _writable_problem(path: Path, folder: bool) -> str | None:
    if path.exists() and path.is_dir() != folder:
        return (
            f"{path} is a {'file' if folder else 'folder'}, not a {'folder' if folder else 'file'}"
        )
    existing = path if folder else path.parent
    while not existing.exists():
        if existing.is_symlink():
            return f"{existing} is a link to nothing ({existing.readlink()})"
        existing = existing.parent
    if problem := _folder_problem(existing, path):
        return problem
    if path.exists() and not os.access(path, os.W_OK):
        return f"{path} is not writable"
    return None


def _folder_problem(existing: Path, path: Path) -> str | None:
    """Why nothing can be made in `existing`, the nearest folder of `path` that exists."""
    if not existing.is_dir():
        return f"{existing} is a file, so {path} cannot be made"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{existing} is not writable"
    if problem := _cannot_make_in(existing):
        return f"{existing} is not writable ({problem})"
    return None


def _cannot_make_in(folder: Path) -> str:
    """Why nothing can be made in `folder`, found by making (and removing) an empty folder
    there: permissions alone say yes to root on /proc, /sys or a read-only mount."""
    try:
        Path(tempfile.mkdtemp(prefix=".hspc-probe-", dir=folder)).rmdir()
    except OSError as error:
        return f"making a folder there: {error.strerror or type(error).__name__}"
    return ""
