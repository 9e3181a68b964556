"""What the command-line tests share: the example and the recorded sysfs trees, `hspc-gen` run as a
user runs it (`python -m hspc_gen`, the console entry point's code, in a child process), and what a
bad input must look like."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "app.yaml"
SYSFS = REPO / "tests" / "data" / "sysfs"
APP_WORK = REPO / "tests" / "data" / "app_work"


def hspc_gen(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hspc_gen", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
        timeout=120,
    )


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def assert_one_clear_error(done: subprocess.CompletedProcess[str], *expected: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith("hspc-gen: error: ")
    assert done.stderr.count("hspc-gen: error: ") == 1
    for text in expected:
        assert text in done.stderr


def user_target(folder: Path, source: str, side: str = "consumer") -> Path:
    shutil.copy2(APP_WORK / source, folder / source)
    target = folder / "app.yaml"
    target.write_text(f"name: u\nevent:\n  size: 24\nworkload:\n  {side}_source: {source}\n")
    return target
