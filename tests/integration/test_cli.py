"""The command line as a user meets it: the real console entry point in a child process."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from command import (
    EXAMPLE,
    SYSFS,
    assert_one_clear_error,
    hspc_gen,
    listing,
    user_target,
)
from hspc_gen.model import Primitive
from hspc_gen.reports import figure_data

BAD_TARGETS = {
    "unparsable": ("name: x\nevent: [size: 8\n", ["app.yaml:3", "invalid YAML"]),
    "not a mapping": ("- name\n- event\n", ["mapping"]),
    "empty": ("", ["empty"]),
    "unknown key": (
        "name: x\nevent:\n  size: 8\nobjectve: latency\n",
        ["did you mean 'objective'"],
    ),
    "wrong type": ("name: x\nevent:\n  size: eight\n", ["event.size"]),
    "zero size": ("name: x\nevent:\n  size: 0\n", ["event.size"]),
    "huge size": ("name: x\nevent:\n  size: 1GiB\n", ["event.size"]),
    "negative budget": ("name: x\nevent:\n  size: 8\nbudget: -5s\n", ["budget"]),
    "unknown primitive": (
        "name: x\nevent:\n  size: 8\nconstraints:\n  primitives: [futex, spinlok]\n",
        ["constraints.primitives", "spinlock"],
    ),
    "unknown objective": ("name: x\nevent:\n  size: 8\nobjective: speed\n", ["objective"]),
    "bad name": ("name: 9lives\nevent:\n  size: 8\n", ["name"]),
    "bad namespace": (
        "name: x\nevent:\n  size: 8\noutput:\n  namespace: my-ns\n",
        ["output.namespace"],
    ),
    "missing source": (
        "name: x\nevent:\n  size: 8\nworkload:\n  consumer_source: nowhere.cpp\n",
        ["nowhere.cpp"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_TARGETS))
def test_a_bad_target_gets_one_message_exit_2_and_no_file(tmp_path: Path, case: str) -> None:
    text, expected = BAD_TARGETS[case]
    (tmp_path / "app.yaml").write_text(text, encoding="utf-8")
    before = listing(tmp_path)
    done = hspc_gen("--target", tmp_path / "app.yaml", "--effort", "estimate", cwd=tmp_path)
    assert_one_clear_error(done, *expected)
    assert listing(tmp_path) == before


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--target", "missing.yaml"], ["missing.yaml"]),
        (["--target", "."], ["is a directory"]),
        ([], ["--target"]),
        (["--target", EXAMPLE, "--effort", "hard"], ["--effort"]),
        (["--target", EXAMPLE, "--budget", "soon"], ["--budget"]),
        (["--target", EXAMPLE, "--set", "bufers=4"], ["did you mean 'buffers'"]),
        (["--target", EXAMPLE, "--set", "buffers=1"], ["buffers=1"]),
        (["--target", EXAMPLE, "--set", "producer_cpu=4096"], ["producer_cpu=4096"]),
        (["--target", EXAMPLE, "--frobnicate"], ["--frobnicate"]),
        (["host", "--sysfs-root", "/nonexistent"], ["/nonexistent"]),
    ],
)
def test_bad_command_lines_get_one_message_exit_2_and_no_file(
    tmp_path: Path, args: list[str | Path], expected: list[str]
) -> None:
    out = tmp_path / "out"
    done = hspc_gen(*args, "--out", out, cwd=tmp_path) if args[:1] != ["host"] else hspc_gen(*args)
    assert_one_clear_error(done, *expected)
    assert not out.exists()


def test_estimate_writes_the_header_result_and_summary_in_out(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "out"
    done = hspc_gen("--target", EXAMPLE, "--effort", "estimate", "--out", out, "--quiet")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    written = ["example_channel.hpp", "hspc-result.json", "hspc-summary.md"]
    assert listing(out) == sorted([*written, figure_data.REPORT_FILE, *figure_data.FIGURES])
    result = json.loads((out / "hspc-result.json").read_text())
    assert result["effort"] == "estimate"
    assert result["winner"]["params"]["primitive"] in {p.value for p in Primitive}
    assert result["winner"]["events_per_second"] is None  # estimate measures nothing
    assert "namespace example {" in (out / "example_channel.hpp").read_text()


def test_set_fixes_a_parameter_and_json_prints_the_result(tmp_path: Path) -> None:
    done = hspc_gen(
        "--target", EXAMPLE, "--effort", "estimate", "--out", tmp_path,
        "--set", "primitive=condvar", "--set", "buffer_bytes=8KiB", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    params = json.loads(done.stdout)["winner"]["params"]
    assert (params["primitive"], params["buffer_bytes"]) == ("condvar", 8192)
    header = (tmp_path / "example_channel.hpp").read_text()
    assert "/*primitive=*/Primitive::condvar," in header


def test_the_same_inputs_give_the_same_header_bytes(tmp_path: Path) -> None:
    """However the run is typed and whatever it prints (--quiet, --json: display only; d227347
    recorded them in the banner's command line), the header's bytes are the same."""
    runs = {
        "a": ("--target", EXAMPLE, "--effort", "estimate", "--out", "o"),
        "b": ("--target", EXAMPLE, "--effort", "estimate", "--out", "o"),
        "quiet": ("--quiet", "--target", EXAMPLE, "--effort", "estimate", "--out", "o"),
        "json": ("--out=o", "--json", "--effort=estimate", f"--target={EXAMPLE}", "--qui"),
    }
    for run, args in runs.items():
        done = hspc_gen(*args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        (tmp_path / "o" / "example_channel.hpp").rename(tmp_path / f"{run}.hpp")
    first = (tmp_path / "a.hpp").read_bytes()
    assert all((tmp_path / f"{run}.hpp").read_bytes() == first for run in runs)
    command = f"//   command:     hspc-gen --target {EXAMPLE} --out o --effort estimate\n"
    assert command.encode() in first


def test_equal_values_spelled_otherwise_give_the_same_header_bytes(tmp_path: Path) -> None:
    """30 and 30s, 2us and 2000, 64KiB and 65536, --sets in any order: one run, one header (a
    new user's hour on b50c1fb found the banner kept each as typed)."""
    common = ("--target", EXAMPLE, "--effort", "estimate", "--out", "o")
    runs = {
        "units": ("--budget", "30s", "--set", "spin_ns=2us", "--set", "buffer_bytes=64KiB"),
        "bare": ("--budget", "30", "--set", "buffer_bytes=65536", "--set", "spin_ns=2000"),
        "other": ("--budget=0.5m", "--set", "spin_ns=2000ns", "--set", "buffer_bytes=64 KiB"),
    }
    for run, args in runs.items():
        done = hspc_gen(*common, *args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        (tmp_path / "o" / "example_channel.hpp").rename(tmp_path / f"{run}.hpp")
    first = (tmp_path / "units.hpp").read_bytes()
    assert all((tmp_path / f"{run}.hpp").read_bytes() == first for run in runs)
    words = "--budget 30s --effort estimate --set buffer_bytes=64KiB --set spin_ns=2us"
    assert f" --out o {words}\n".encode() in first


def test_host_json_on_a_recorded_tree() -> None:
    done = hspc_gen("host", "--json", "--sysfs-root", SYSFS / "2s-8c-2t" / "sys")
    assert done.returncode == 0, done.stderr
    host = json.loads(done.stdout)
    assert (host["packages"], host["cores"], len(host["logical_cpus"])) == (2, 16, 32)
    assert host["kind"] == ["CMP", "SMP", "SMT"]


def test_host_prints_a_summary_for_a_person(tmp_path: Path) -> None:
    done = hspc_gen("host", "--cache", tmp_path)  # measures the CPU pairs: not in the user's cache
    assert done.returncode == 0, done.stderr
    for heading in ("Packages", "Cores", "Caches", "Allowed", "Measured"):
        assert heading in done.stdout


def test_compare_refuses_fewer_than_two_results_and_files_that_are_not_results(
    tmp_path: Path,
) -> None:
    one = hspc_gen("compare", "--target", EXAMPLE, EXAMPLE)
    assert_one_clear_error(one, "two or more results, not 1")
    few = hspc_gen("compare", "--target", EXAMPLE, EXAMPLE, EXAMPLE, "--rounds", "5")
    assert_one_clear_error(few, "--rounds must be between 6 and 200, not 5")
    junk = tmp_path / "junk.json"
    junk.write_text("[1, 2]")
    done = hspc_gen("compare", "--target", EXAMPLE, junk, junk, "--cache", tmp_path / "c")
    assert_one_clear_error(done, "junk.json: not an hspc-result.json")
    assert not (tmp_path / "c").exists()


def test_threads_refuses_a_bad_target_and_a_file_that_is_not_a_result(tmp_path: Path) -> None:
    assert_one_clear_error(hspc_gen("threads", "--target", tmp_path / "nope.yaml"), "nope.yaml")
    junk = tmp_path / "junk.json"
    junk.write_text("{}")
    done = hspc_gen("threads", "--target", EXAMPLE, "--from", junk, "--out", tmp_path / "o")
    assert_one_clear_error(done, "junk.json: not an hspc-result.json")
    assert not (tmp_path / "o").exists()
    late = hspc_gen("threads", "--target", EXAMPLE, "--sweep", "--budget", "soon")
    assert_one_clear_error(late, "--budget")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], "nothing to do: give --target FILE, or a command: host, compare, threads"),
        (["frobnicate"], "unknown command 'frobnicate': give --target FILE, or a command"),
        (["--target", EXAMPLE, "--budget", "30h"], "budget: 30h is out of range: 1s to 24h"),
    ],
)
def test_the_command_line_names_what_is_wrong_where_the_user_typed_it(
    tmp_path: Path, args: list[str | Path], expected: str
) -> None:
    done = hspc_gen(*args, cwd=tmp_path)
    assert_one_clear_error(done, expected)
    assert "app.yaml" not in done.stderr and "override" not in done.stderr
    assert listing(tmp_path) == []


def test_help_lists_every_command_and_every_set_name() -> None:
    for args in (["--help"], ["help"]):
        done = hspc_gen(*args)
        assert done.returncode == 0
        for word in ("host", "compare", "threads", "check", "padding_bytes", "consumer_cpu"):
            assert word in done.stdout


def test_out_keeps_the_header_name_app_yaml_gives(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(
        "name: named\nevent:\n  size: 8\noutput:\n  header: include/ring.hpp\n"
    )
    done = hspc_gen("--target", "app.yaml", "--effort", "estimate", "--out", "o", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "o" / "ring.hpp").is_file()


def test_compare_refuses_a_result_of_another_target(tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text("name: other\nevent:\n  size: 16\n")
    made = hspc_gen("--target", other, "--effort", "estimate", "--out", tmp_path / "o")
    assert made.returncode == 0, made.stderr
    result = tmp_path / "o" / "hspc-result.json"
    done = hspc_gen("compare", "--target", EXAMPLE, result, result, "--cache", tmp_path / "c")
    assert_one_clear_error(done, "tuned for 'other' with 16 B events, not for 'example'")


def test_sigterm_ends_a_run_like_sigint_says_so_and_keeps_what_was_measured(
    tmp_path: Path,
) -> None:
    run = subprocess.Popen(
        [sys.executable, "-m", "hspc_gen", "--target", EXAMPLE, "--effort", "quick",
         "--budget", "60s", "--cache", str(tmp_path / "c"), "--out", str(tmp_path / "o")],
        stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    header = tmp_path / "o" / "example_channel.hpp"
    for _ in range(600):  # the estimate header first: the run has started measuring
        if header.exists() or run.poll() is not None:
            break
        time.sleep(0.05)
    assert run.poll() is None, "the run ended before it was signalled"
    run.send_signal(signal.SIGTERM)
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == 128 + signal.SIGTERM, stderr
    assert stderr.strip().endswith("terminated; what was measured is kept for the next run")
    assert "Traceback" not in stderr


@pytest.mark.parametrize(
    ("source", "status", "expected"),
    [
        ("crash_consumer.cpp", 3, ["consumer code (hspc_consume in", "crashed with SIGSEGV"]),
        ("hang_consumer.cpp", 3, ["consumer code", "hung (stopped after 5 s)", "watchdog"]),
        ("exit_consumer.cpp", 3, ["consumer code", "called exit(3)"]),
        (
            "wrong_signature_consumer.cpp",
            2,
            ["does not define `void hspc_consume(const void* event, std::size_t size)`"],
        ),
    ],
)
def test_the_users_code_failing_alone_is_named_before_any_tuning_and_nothing_is_written(
    tmp_path: Path, source: str, status: int, expected: list[str]
) -> None:
    target = user_target(tmp_path, source)
    before = listing(tmp_path)
    done = hspc_gen("--target", target, "--effort", "quick", "--budget", "30s",
                    "--cache", tmp_path / "cache", cwd=tmp_path)  # fmt: skip
    assert done.returncode == status, done.stderr
    assert done.stderr.startswith("hspc-gen: error: workload.consumer_source")
    assert "Traceback" not in done.stderr and done.stdout == ""
    for text in expected:
        assert text in done.stderr
    assert [p for p in listing(tmp_path) if not p.startswith("cache")] == before


@pytest.mark.parametrize("effort", ["quick", "estimate"])
def test_a_compile_error_names_the_users_file_and_line(tmp_path: Path, effort: str) -> None:
    """--effort estimate measures nothing, but the user's code is compiled all the same."""
    (tmp_path / "work.cpp").write_text(
        "#include <cstddef>\nvoid hspc_consume(const void* e, std::size_t n) {\n  int x = ;\n}\n"
    )
    (tmp_path / "app.yaml").write_text(
        "name: u\nevent:\n  size: 24\nworkload:\n  consumer_source: work.cpp\n"
    )
    done = hspc_gen("--target", "app.yaml", "--effort", effort, "--cache", "c", cwd=tmp_path)
    assert_one_clear_error(
        done, f"workload.consumer_source does not compile: {tmp_path}/work.cpp:3:"
    )
    assert "int x = ;" in done.stderr  # the line the compiler points at
    assert not (tmp_path / "u_channel.hpp").exists()


def test_a_function_of_another_signature_is_named_under_the_estimate_too(tmp_path: Path) -> None:
    (tmp_path / "work.cpp").write_text("#include <cstddef>\nvoid hspc_consume(int) {}\n")
    (tmp_path / "app.yaml").write_text(
        "name: u\nevent:\n  size: 24\nworkload:\n  consumer_source: work.cpp\n"
    )
    done = hspc_gen("--target", "app.yaml", "--effort", "estimate", "--cache", "c", cwd=tmp_path)
    assert_one_clear_error(done, f"workload.consumer_source ({tmp_path}/work.cpp) does not define")


def test_user_code_that_fails_only_under_the_benchmark_is_named_and_the_run_fails(
    tmp_path: Path,
) -> None:
    target = user_target(tmp_path, "crash_late_consumer.cpp")
    # The user's code runs from Stage Two on: the budget must reach it on a loaded machine too.
    done = hspc_gen("--target", target, "--effort", "quick", "--budget", "60s", "--json",
                    "--cache", tmp_path / "cache", "--out", tmp_path / "o")  # fmt: skip
    assert done.returncode == 3, done.stderr
    crash = "fatal signal SIGSEGV in the user's consumer code (hspc_consume)"
    assert done.stderr.startswith("hspc-gen: error: nothing could be measured")
    assert crash in done.stderr
    result = json.loads(done.stdout)
    assert any(f["cause"] == crash for f in result["failures"])
    assert result["winner"]["events_per_second"] is None
    header = (tmp_path / "o" / "u_channel.hpp").read_text()
    # kTuning holds the search's best (Stage One ran without the user's code), unconfirmed.
    banner = header.split("#pragma once")[0]
    assert "NOT confirmed by measurement: " in banner and "estimate" not in banner


def test_a_latency_bound_no_channel_can_keep_is_said_with_the_closest_and_exit_1(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.yaml").write_text(
        "name: lat\nevent:\n  size: 8\nconstraints:\n  max_latency_us: 10ns\n"
    )  # a clock read alone takes longer: no channel can keep it
    done = hspc_gen("--target", "app.yaml", "--effort", "quick", "--budget", "40s", "--json",
                    "--cache", "c", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr
    # Kept by none: the closest is named; or, when the budget ended first, not verified.
    assert re.search(
        r"error: (no channel kept constraints.max_latency_us \(0.01 us\): the closest"
        r"|constraints.max_latency_us \(0.01 us\) was not verified)",
        done.stderr,
    ), done.stderr
    assert json.loads(done.stdout)["latency_bound"]["kept"] is False
    header = (tmp_path / "lat_channel.hpp").read_text()
    assert re.search(r"constraints.max_latency_us 0.01 us(: NOT measured| NOT kept)", header)
    assert "/*max_latency_ns=*/6," in header  # the channel carries 0.6 of the bound all the same
