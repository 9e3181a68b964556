"""hspc_gen.cli.common: the live progress line as a person meets it, on a real pseudo-terminal
(rich draws it there), and nothing at all when stderr is not a terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from hspc_gen.cli.common import live_line, verbatim_values
from hspc_gen.model import Figure
from hspc_gen.model.progress import Progress

PROGRESS = Progress("one", "padding", 5, 3, 12, 30, "futex 4x131072 B pad 128",
                    Figure(741e6, 702e6, 760e6, 12), 64.4)  # fmt: skip
TELL = f"""
from hspc_gen.cli.common import progress
from hspc_gen.model import Figure
from hspc_gen.model.progress import Progress
with progress(silent=False) as show:
    show("measuring")
    show({PROGRESS!r})
print("done", flush=True)
"""


def test_the_live_line_names_the_step_what_is_left_and_the_best_with_its_interval() -> None:
    assert live_line(PROGRESS) == (
        "stage one · padding · 3 of 5 racing · round 12/30 · best futex 4x131072 B pad 128:"
        " 741 M/s [702, 760] · 64 s left in the search"
    )
    unmeasured = Progress("two", "primitive", 7, 7, 0, 30, "futex 4x131072 B pad 128", None, 3)
    assert "best futex 4x131072 B pad 128 · 3 s left" in live_line(unmeasured)


def test_on_a_terminal_the_line_is_drawn_under_what_the_run_says() -> None:
    leader, follower = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-c", TELL], stdin=follower, stdout=follower, stderr=follower
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    assert child.wait(timeout=60) == 0
    os.close(leader)
    text = seen.decode()
    assert "hspc-gen: measuring" in text
    assert "3 of 5 racing · round 12/30" in text
    assert "\x1b[?25l" in text and "\x1b[?25h" in text  # the cursor hidden, then given back
    assert text.rstrip().endswith("done")


def test_off_a_terminal_nothing_is_said() -> None:
    done = subprocess.run(
        [sys.executable, "-c", TELL], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stderr == "" and done.stdout == "done\n"


def test_the_word_after_cxxflags_is_its_value_whatever_it_starts_with() -> None:
    assert verbatim_values(["--cxxflags", "-O3", "--json"]) == ["--cxxflags=-O3", "--json"]
    assert verbatim_values(["--cxxflags=-O2", "-x"]) == ["--cxxflags=-O2", "-x"]
    assert verbatim_values(["--cxxflags"]) == ["--cxxflags"]  # argparse says what is missing
    assert verbatim_values(["--", "--cxxflags", "-O3"]) == ["--", "--cxxflags", "-O3"]
