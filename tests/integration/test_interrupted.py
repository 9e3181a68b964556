"""A run interrupted where an earlier run's outputs are: the real console entry point in a child
process, stopped by SIGINT once it measures. The folder stays as consistent as it was: the
header is not replaced by the estimate's start header while hspc-result.json, the summary and the
page still describe the earlier run. Where no header was, the start header is there at once."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from command import EXAMPLE, hspc_gen, listing


def interrupted(out: Path, cache: Path) -> None:
    """A measuring run into `out`, stopped by SIGINT once it holds the record store's lock: past
    where its start header is written, if it writes one."""
    run = subprocess.Popen(
        [sys.executable, "-m", "hspc_gen", "--target", str(EXAMPLE), "--effort", "quick",
         "--budget", "60s", "--cache", str(cache), "--out", str(out)],
        stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        # A shell's background job (CI's too) starts with SIGINT ignored, and Python keeps it so:
        # the run must meet SIGINT as a user's Ctrl-C delivers it (one call, no lock taken).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )  # fmt: skip
    for _ in range(2400):  # the lock file names the run that holds it
        locks = (cache / "records").glob("*.lock")
        if any(f"{run.pid}\n" == lock.read_text() for lock in locks) or run.poll() is not None:
            break
        time.sleep(0.05)
    assert run.poll() is None, "the run ended before it was interrupted"
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == 128 + signal.SIGINT, stderr
    assert "Traceback" not in stderr


def test_an_interrupted_run_leaves_the_earlier_header_and_reports_as_they_were(
    tmp_path: Path,
) -> None:
    out, cache = tmp_path / "o", tmp_path / "c"
    done = hspc_gen("--target", EXAMPLE, "--effort", "estimate", "--out", out, "--cache", cache)
    assert done.returncode == 0, done.stderr
    before = {name: (out / name).read_bytes() for name in listing(out)}
    interrupted(out, cache)
    assert {name: (out / name).read_bytes() for name in listing(out)} == before
    # No header there: the anytime header, the estimate's, is written before the search.
    (out / "example_channel.hpp").unlink()
    interrupted(out, cache)
    header = (out / "example_channel.hpp").read_text(encoding="utf-8")
    assert "//     nothing yet: the estimate's parameters" in header
