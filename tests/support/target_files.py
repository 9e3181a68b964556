"""Writing app.yaml files for the target's tests, and the one message a bad one gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from hspc_gen.errors import UserError
from hspc_gen.target.app import load_target

H = "name: t\nevent:\n  size: 8\n"  # a valid head, so a case's own lines start at line 4


def write(folder: Path, text: str, name: str = "app.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path, overrides: dict[str, str] | None = None) -> str:
    with pytest.raises(UserError) as caught:
        load_target(path, overrides)
    assert caught.value.exit_status == 2
    return str(caught.value)
