from __future__ import annotations

import os
from pathlib import Path

import pytest

from hspc_gen.files import write_atomic


def test_write_atomic_creates_parents_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "out.hpp"
    write_atomic(path, "first\n")
    write_atomic(path, "second\n")
    assert path.read_text() == "second\n"
    assert [p.name for p in path.parent.iterdir()] == ["out.hpp"]


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "out.json"
    write_atomic(path, "old\n")

    def broken_fsync(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(path, "new\n")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
