"""Starting a program and waiting for it: the one place the search calls `subprocess`.

Both the builder (Meson, Ninja, the compiler) and the executor (the harness, the small measuring
programs) start their processes here, so a timeout, a program that cannot start and what it
printed come back the same way everywhere: as a value, never as an exception.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Finished:
    """A process's end: its exit status (negative: the signal that ended it; None when it did
    not end on its own), what it printed, and then why (`timed_out`, or `start_error`)."""

    code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    start_error: str = ""  # the OS's reason when it could not be started

    @property
    def ok(self) -> bool:
        return self.code == 0 and not self.timed_out and not self.start_error

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run(
    argv: Sequence[str],
    timeout: float,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    errors: str = "replace",
) -> Finished:
    """Run `argv` (no shell), its output captured; killed past `timeout` seconds. Output that
    is not UTF-8 (a compiler quoting a Latin-1 source line) is decoded with replacements."""
    try:
        done = subprocess.run(
            list(argv),
            cwd=cwd,
            env=None if env is None else dict(env),
            capture_output=True,
            text=True,
            errors=errors,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        return Finished(None, _text(err.stdout), _text(err.stderr), timed_out=True)
    except OSError as err:
        return Finished(None, start_error=str(err))
    return Finished(done.returncode, done.stdout, done.stderr)


def _text(partial: bytes | str | None) -> str:
    """What a killed process had printed (bytes, on some platforms, even in text mode)."""
    if isinstance(partial, bytes):
        return partial.decode(errors="replace")
    return partial or ""
