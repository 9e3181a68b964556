"""hspc_gen.search.measure.process: the search's one place that starts a program; a timeout and
a program that cannot start are values."""

from __future__ import annotations

import sys

from hspc_gen.search.measure import process


def test_the_exit_status_and_output_come_back() -> None:
    done = process.run([sys.executable, "-c", "import sys; print('out'); sys.exit(3)"], 30)
    assert (done.code, done.stdout, done.ok) == (3, "out\n", False)
    assert process.run([sys.executable, "-c", "pass"], 30).ok


def test_a_program_past_its_timeout_is_killed_and_says_so() -> None:
    done = process.run([sys.executable, "-c", "import time; time.sleep(60)"], 0.5)
    assert done.timed_out and not done.ok


def test_a_program_that_cannot_start_is_a_value() -> None:
    done = process.run(["/nonexistent/program"], 30)
    assert done.start_error and not done.ok and not done.timed_out


def test_output_that_is_not_utf8_is_decoded_with_replacements() -> None:
    # A compiler quoting a Latin-1 source line in its diagnostic: no UnicodeDecodeError.
    script = "import sys; sys.stderr.buffer.write(b'// caf\\xe9\\n'); sys.exit(1)"
    done = process.run([sys.executable, "-c", script], 30)
    assert done.stderr == "// caf\ufffd\n" and done.code == 1


def test_a_process_that_did_not_end_on_its_own_has_no_exit_status() -> None:
    # Never a placeholder a caller could read as a signal (-1 would be SIGHUP).
    assert process.run(["/nonexistent/program"], 30).code is None
    assert process.run([sys.executable, "-c", "import time; time.sleep(60)"], 0.5).code is None
