"""`hspc-gen vendor`, the build systems' configure step, through the real command line: it tunes
(here with --effort estimate: tests never measure) only when the header's inputs changed, and a
failed run leaves nothing that a later configure could take for current. `hspc-gen integration`
names the installed CMake module and Meson snippet."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hspc_gen.cli.vendor import STAMP_FILE

REPO = Path(__file__).resolve().parents[2]
APP = "name: ticks\nevent:\n  size: 16\nworkload:\n  producer_source: work.cpp\n"
APP_BOTH_SIDES = APP + "  consumer_source: work.cpp\n"


def hspc_gen(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hspc_gen", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def project(folder: Path, app: str = APP) -> Path:
    """An app.yaml naming a source file, as a consumer project holds it."""
    (folder / "app.yaml").write_text(app, encoding="utf-8")
    shutil.copy2(REPO / "examples" / "work.cpp", folder / "work.cpp")
    return folder / "app.yaml"


def vendor(app: Path, *extra: str) -> dict[str, list[str]]:
    """One run, its listing as keyword -> values, after checking what every run guarantees."""
    out = app.parent / "build"
    done = hspc_gen("vendor", "--target", app, "--out", out, "--effort", "estimate", *extra,
                    "--cache", app.parent / "cache")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    listing: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        keyword, _, value = line.partition(" ")
        listing.setdefault(keyword, []).append(value)
    assert listing["header"] == [str(out / "ticks_channel.hpp")]
    assert (out / STAMP_FILE).is_file()
    return listing


def written(path: Path) -> tuple[int, int]:
    """Which file this is: a rewrite (an atomic rename) changes both."""
    status = path.stat()
    return status.st_ino, status.st_mtime_ns


def test_the_first_run_tunes_and_a_second_finds_the_header_current(tmp_path: Path) -> None:
    app = project(tmp_path, APP_BOTH_SIDES)
    first = vendor(app)
    assert first["status"] == ["tuned"]
    # app.yaml, then the one file that both sides name, once: what must re-configure the build.
    assert first["input"] == [str(app), str(tmp_path / "work.cpp")]
    header = Path(first["header"][0])
    assert "namespace ticks {" in header.read_text(encoding="utf-8")
    before = written(header)
    assert vendor(app)["status"] == ["current"]
    assert written(header) == before


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def _restamp(folder: Path, key: str, value: str) -> None:
    """The stamp as another hspc-gen or another host would have left it."""
    stamp = folder / "build" / STAMP_FILE
    document = json.loads(stamp.read_text(encoding="utf-8"))
    document["inputs"][key] = value
    stamp.write_text(json.dumps(document), encoding="utf-8")


CHANGES: dict[str, tuple[Callable[[Path], None], tuple[str, ...]]] = {
    "app.yaml's bytes": (lambda d: _append(d / "app.yaml", "budget: 30s\n"), ()),
    "a file app.yaml names": (lambda d: _append(d / "work.cpp", "// edited\n"), ()),
    "another hspc-gen version": (lambda d: _restamp(d, "hspc_gen", "0.0.1"), ()),
    "another host": (lambda d: _restamp(d, "host", "0123456789abcdef"), ()),
    "the header edited by hand": (lambda d: _append(d / "build" / "ticks_channel.hpp", "\n"), ()),
    "an option": (lambda _d: None, ("--set", "buffers=4")),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_to_what_made_the_header_tunes_again(tmp_path: Path, change: str) -> None:
    app = project(tmp_path)
    assert vendor(app)["status"] == ["tuned"]
    edit, options = CHANGES[change]
    edit(tmp_path)
    assert vendor(app, *options)["status"] == ["tuned"]


def test_a_header_the_users_code_includes_is_an_input(tmp_path: Path) -> None:
    app = project(tmp_path, APP_BOTH_SIDES)
    header = tmp_path / "lib" / "work.hpp"
    header.parent.mkdir()
    header.write_text("#pragma once\n", encoding="utf-8")
    _append(tmp_path / "work.cpp", '#include "lib/work.hpp"\n')
    first = vendor(app)
    assert first["input"] == [str(app), str(tmp_path / "work.cpp"), str(header)]
    assert vendor(app)["status"] == ["current"]
    _append(header, "// edited\n")  # the build re-configures on it, and the run tunes again
    assert vendor(app)["status"] == ["tuned"]


def test_a_failed_run_leaves_no_stamp_so_the_next_one_tunes(tmp_path: Path) -> None:
    app = project(tmp_path)
    header = Path(vendor(app)["header"][0])
    header.unlink()
    header.mkdir()  # the header cannot be written: the run fails before writing anything
    done = hspc_gen("vendor", "--target", app, "--out", header.parent, "--effort", "estimate",
                    "--cache", tmp_path / "cache")  # fmt: skip
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("hspc-gen: error: cannot write ticks_channel.hpp")
    assert not (header.parent / STAMP_FILE).exists()
    header.rmdir()
    assert vendor(app)["status"] == ["tuned"]


def test_vendor_needs_the_build_folder(tmp_path: Path) -> None:
    done = hspc_gen("vendor", "--target", project(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith("hspc-gen: error: ") and "--out" in done.stderr


DEFINES = {"--cmake": "function(hspc_gen_channel)", "--meson": "hspc_channel_dep ="}


@pytest.mark.parametrize(("kind", "defines"), sorted(DEFINES.items()))
def test_integration_prints_where_the_installed_build_files_are(kind: str, defines: str) -> None:
    done = hspc_gen("integration", kind)
    assert done.returncode == 0, done.stderr
    path = Path(done.stdout.strip())
    assert path.is_absolute() and done.stdout == f"{path}\n"
    assert defines in path.read_text(encoding="utf-8")


def test_integration_needs_to_be_told_which() -> None:
    done = hspc_gen("integration")
    assert done.returncode == 2
    assert "--cmake" in done.stderr and "--meson" in done.stderr


def test_another_compiler_tunes_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = project(tmp_path)
    assert vendor(app)["status"] == ["tuned"]
    monkeypatch.setenv("CXX", "clang++")  # what the CMake module and the Meson snippet hand over
    assert vendor(app)["status"] == ["tuned"]
    header = (tmp_path / "build" / "ticks_channel.hpp").read_text(encoding="utf-8")
    assert "clang" in header  # the header records the compiler the build uses
    assert vendor(app)["status"] == ["current"]


def test_a_second_channel_in_the_same_folder_is_refused_by_name(tmp_path: Path) -> None:
    app = project(tmp_path)
    vendor(app)
    other = tmp_path / "other.yaml"
    other.write_text(APP.replace("name: ticks", "name: tocks"), encoding="utf-8")
    out = tmp_path / "build"
    done = hspc_gen("vendor", "--target", other, "--out", out, "--effort", "estimate")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "holds the channel ticks_channel.hpp" in done.stderr
    assert not (out / "tocks_channel.hpp").exists()
