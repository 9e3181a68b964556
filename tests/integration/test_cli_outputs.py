"""Where a run writes, as a user meets it: outputs and a cache that cannot be written, outputs
that would land on the run's own inputs or on one another, and a write the machine refuses
mid-run; each refused before anything is written, in one line."""

from __future__ import annotations

import errno
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from command import EXAMPLE, assert_one_clear_error, hspc_gen, listing
from hspc_gen.cli import main as cli_main


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--out", "afile"], "afile is a file, so afile/example_channel.hpp cannot be made"),
        (["--out", "afile/under"], "afile is a file, so afile/under/example_channel.hpp"),
        (["--cache", "afile"], "cannot use the cache folder: afile is a file, not a folder"),
        (["--cache", "afile/under"], "afile is a file, so afile/under cannot be made"),
        # Permissions say yes to root here: only making a folder finds that nothing can be made.
        (["--cache", "/proc/hspc-cache"], "cannot use the cache folder: /proc is not writable"),
        (["--out", "/proc/hspc-out"], "cannot write example_channel.hpp: /proc is not writable"),
    ],
)
def test_outputs_and_a_cache_that_cannot_be_written_are_refused_before_writing(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    (tmp_path / "afile").write_text("not a folder\n")
    before = listing(tmp_path)
    done = hspc_gen("--target", EXAMPLE, "--effort", "estimate", *args, cwd=tmp_path)
    assert_one_clear_error(done, expected)
    assert listing(tmp_path) == before


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("  header: app.yaml\n", "it is the run's own input app.yaml"),
        ("  header: src/parse.cpp\n", "it is the run's own input"),
        ("  header: clash/x.hpp\n  report: clash/x.hpp\n", "is to be written inside it"),
    ],
)
def test_outputs_that_land_on_the_runs_inputs_or_on_one_another_are_refused(
    tmp_path: Path, output: str, expected: str
) -> None:
    """A header named like app.yaml or the app's own source replaced it, with exit 0."""
    (tmp_path / "src").mkdir()
    source = "#include <cstddef>\n#include <cstdint>\n"
    source += "void hspc_produce(std::uint64_t, void*, std::size_t) {}\n"
    (tmp_path / "src" / "parse.cpp").write_text(source)
    work = "workload:\n  producer_source: src/parse.cpp\n"
    (tmp_path / "app.yaml").write_text(f"name: x\nevent:\n  size: 8\n{work}output:\n{output}")
    before = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    done = hspc_gen("--target", "app.yaml", "--effort", "estimate", cwd=tmp_path)
    assert_one_clear_error(done, expected)
    assert {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()} == before
    assert not (tmp_path / "clash").exists()


def test_a_file_size_limit_met_mid_run_is_one_line_and_leaves_no_part_written(
    tmp_path: Path,
) -> None:
    """The user's own limit (ulimit -f): the first output write fails with EFBIG (CPython
    ignores SIGXFSZ), after every check said yes."""
    limit = 8 * 1024
    command = ["--target", str(EXAMPLE), "--effort", "estimate", "--out", "o"]
    done = subprocess.run(
        [sys.executable, "-m", "hspc_gen", *command],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        timeout=120,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
    )
    header = Path("o") / "example_channel.hpp"
    assert done.returncode == 1
    assert done.stderr == f"hspc-gen: error: cannot write {header}: File too large\n"
    assert [path for path in tmp_path.rglob("*") if not path.is_dir()] == []


def test_a_file_the_machine_will_not_let_the_run_read_is_not_called_a_write(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A read the machine refuses (EACCES from a record store another user owns; root reads
    everything here, so the refusal is raised where the command would meet it) is one line
    that says "cannot use", not "cannot write", and exit 1."""

    def refuse(_args: list[str]) -> int:
        raise PermissionError(errno.EACCES, "Permission denied", "/c/records.jsonl")

    monkeypatch.setattr(cli_main, "_dispatch", refuse)
    assert cli_main.main(["host"]) == 1
    assert capsys.readouterr().err == (
        "hspc-gen: error: cannot use /c/records.jsonl: Permission denied\n"
    )
