"""The user's own C++ files: the sources app.yaml names and the local headers they include.

Every build of the user's code puts each source's folder on the include path (the check alone and
the benchmark project alike), so a source may include a header beside it, or one reached from
there (`#include "../src/aggregate.hpp"`). What such a header holds is part of the user's work as
much as the source is: the cost kept per code, the records kept per measured work and the vendor
stamp's inputs all cover it, so an edited header is measured again, never replayed.

The headers are found as the compiler finds them, without running it: a quoted include in the
including file's folder first, then (quoted or not) in the sources' folders; what is found in
neither (the standard library, the harness's own headers) is not the user's. Includes are read
whether or not a preprocessor condition would skip them: a header taken in needlessly only makes a
record stricter.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

_INCLUDE = re.compile(
    r'^[ \t]*#[ \t]*include[ \t]*(?:"(?P<quoted>[^"\n]+)"|<(?P<angled>[^>\n]+)>)', re.M
)


def included_headers(sources: Iterable[Path]) -> tuple[Path, ...]:
    """The local headers the sources include, directly or through each other, each once, in the
    order they are first reached (the sources themselves left out)."""
    roots = tuple(dict.fromkeys(path.absolute() for path in sources))
    folders = tuple(dict.fromkeys(path.parent for path in roots))
    seen: dict[Path, None] = dict.fromkeys(roots)
    pending = list(roots)
    headers: list[Path] = []
    while pending:
        for header in _includes_of(pending.pop(0), folders):
            if header not in seen:
                seen[header] = None
                headers.append(header)
                pending.append(header)
    return tuple(headers)


def _includes_of(path: Path, folders: tuple[Path, ...]) -> list[Path]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []  # unreadable here: the compiler will say so where it matters
    found: list[Path] = []
    for match in _INCLUDE.finditer(text):
        quoted = match["quoted"]
        name = quoted if quoted is not None else match["angled"]
        places = ((path.parent,) if quoted is not None else ()) + folders
        header = next((p for p in (f / name for f in places) if p.is_file()), None)
        if header is not None:
            found.append(Path(os.path.normpath(header)))  # a/b/../c.hpp as a/c.hpp
    return found


def headers_digest(sources: Iterable[Path]) -> str:
    """What the sources' local headers hold, by content only (where they are is not the work, so
    a host that imported wisdom finds the same digest); empty when they include none."""
    contents = sorted(
        hashlib.sha256(path.read_bytes()).hexdigest() for path in included_headers(sources)
    )
    if not contents:
        return ""
    return hashlib.sha256("\0".join(contents).encode()).hexdigest()[:16]
