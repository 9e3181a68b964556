from __future__ import annotations

import os
from pathlib import Path

import pytest

from hspc_gen.files import writable_problem, write_atomic


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


def test_a_folder_is_writable_when_a_folder_can_be_made_there_and_the_probe_leaves_nothing(
    tmp_path: Path,
) -> None:
    assert writable_problem(tmp_path / "cache" / "deeper", folder=True) is None
    assert writable_problem(tmp_path / "out.hpp") is None
    assert list(tmp_path.iterdir()) == []
    problem = writable_problem(Path("/proc/hspc-cache"), folder=True)
    assert problem is not None and problem.startswith("/proc is not writable (making a folder")


def test_a_folder_permissions_refuse_is_named_without_probing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a user who is not root meets on a folder of mode 555 (and root on a read-only
    mount): os.access says no, and that is the answer."""
    monkeypatch.setattr(os, "access", lambda *_args, **_kwargs: False)
    assert writable_problem(tmp_path / "out.hpp") == f"{tmp_path} is not writable"
    assert list(tmp_path.iterdir()) == []


def test_a_link_to_nothing_and_a_name_too_long_are_named(tmp_path: Path) -> None:
    (tmp_path / "dangling").symlink_to(tmp_path / "missing" / "folder")
    assert writable_problem(tmp_path / "dangling", folder=True) == (
        f"{tmp_path / 'dangling'} is a link to nothing ({tmp_path / 'missing' / 'folder'})"
    )
    assert writable_problem(tmp_path / "dangling" / "out.hpp") is not None
    long = tmp_path / ("x" * 300) / "out.hpp"
    problem = writable_problem(long)
    assert problem is not None and problem.endswith("File name too long")
