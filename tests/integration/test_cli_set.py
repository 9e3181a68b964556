"""--set and pin_threads as a user meets them: the real console entry point in a child process
(the memory bound, the units app.yaml takes, and the thread advice pinning as kTuning does)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from command import EXAMPLE, assert_one_clear_error, hspc_gen, listing


def test_the_memory_bound_holds_for_the_estimate_and_set_cannot_break_it(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(
        "name: small\nevent:\n  size: 8\nconstraints:\n  max_buffer_memory: 512B\n"
    )
    done = hspc_gen("--target", "app.yaml", "--effort", "estimate", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    chosen = json.loads(done.stdout)["winner"]["params"]
    assert chosen["buffers"] * chosen["buffer_bytes"] <= 512
    header = (tmp_path / "small_channel.hpp").read_text()
    assert f"/*buffer_bytes=*/{chosen['buffer_bytes']}," in header.replace(" ", "")
    before = listing(tmp_path)
    refused = hspc_gen("--target", "app.yaml", "--set", "buffers=64", cwd=tmp_path)
    assert_one_clear_error(refused, "--set buffers=64", "max_buffer_memory (512B)", "8 buffers of")
    assert listing(tmp_path) == before


CPUS = sorted(os.sched_getaffinity(0))
PIN_SETS = {
    "none": (),
    "producer": (f"producer_cpu={CPUS[-1]}",),
    "consumer": (f"consumer_cpu={CPUS[0]}",),
    "unpinned": ("producer_cpu=-1",),
    "pair": (f"producer_cpu={CPUS[0]}", f"consumer_cpu={CPUS[-1]}"),
    "half": (f"producer_cpu={CPUS[-1]}", "consumer_cpu=-1"),
}
HEADER_PINNING = re.compile(
    r"/\*producer_cpu=\*/(-?\d+),\s*/\*consumer_cpu=\*/(-?\d+),.*"
    r"kPinThreads = (true|false);\s*inline constexpr int kProducerCpus\[\] = \{([\d, ]*)\};"
    r"\s*inline constexpr int kConsumerCpus\[\] = \{([\d, ]*)\};",
    re.DOTALL,
)


@pytest.mark.parametrize("sets", sorted(PIN_SETS))
@pytest.mark.parametrize("pin", ["auto", "never", "always"])
def test_the_headers_thread_advice_pins_as_ktuning_does_or_the_set_is_refused(
    tmp_path: Path, pin: str, sets: str
) -> None:
    """pin_threads with every kind of --set of the CPUs: a conflict is one message, exit 2;
    otherwise kPinThreads is true exactly when kTuning pins, its first pair kTuning's."""
    text = f"name: pin\nevent:\n  size: 64\nconstraints:\n  pin_threads: {pin}\n"
    (tmp_path / "app.yaml").write_text(text, encoding="utf-8")
    args = [word for s in PIN_SETS[sets] for word in ("--set", s)]
    done = hspc_gen("--target", "app.yaml", "--effort", "estimate", "--quiet", *args, cwd=tmp_path)
    pinned_by_set = any(not s.endswith("=-1") for s in PIN_SETS[sets])
    unpinned_by_set = any(s.endswith("=-1") for s in PIN_SETS[sets])
    against = (pin, True) in (("never", pinned_by_set), ("always", unpinned_by_set))
    if against or sets == "half":
        why = f"pin_threads is {pin}" if against else "pinned whole or not at all"
        assert_one_clear_error(done, "--set", why)
        assert listing(tmp_path) == ["app.yaml"]
        return
    assert done.returncode == 0, done.stderr
    found = HEADER_PINNING.search((tmp_path / "pin_channel.hpp").read_text())
    assert found is not None
    producer, consumer, pins = int(found[1]), int(found[2]), found[3] == "true"
    producers, consumers = (tuple(int(c) for c in found[i].split(",")) for i in (4, 5))
    assert pins == (producer >= 0) == (consumer >= 0)
    assert pins == (pin == "always" or pinned_by_set)
    if pins:
        assert (producers[0], consumers[0]) == (producer, consumer)
        assert len(producers) == len(consumers) == 1  # the estimate's one pair
    for s in PIN_SETS[sets]:  # what --set asked is what kTuning holds
        name, _, cpu = s.partition("=")
        assert int(found[1 if name == "producer_cpu" else 2]) == int(cpu)


def test_set_takes_the_units_app_yaml_takes(tmp_path: Path) -> None:
    sets = ("--set", "spin_ns=2us", "--set", "buffer_bytes=64KiB", "--set", "padding_bytes=256B")
    done = hspc_gen("--target", EXAMPLE, "--effort", "estimate", "--out", tmp_path, *sets, "--json")
    assert done.returncode == 0, done.stderr
    chosen = json.loads(done.stdout)["winner"]["params"]
    assert (chosen["spin_ns"], chosen["buffer_bytes"], chosen["padding_bytes"]) == (
        2000,
        65536,
        256,
    )
    assert "/*spin_ns=*/2000," in (tmp_path / "example_channel.hpp").read_text()
    out = tmp_path / "refused"
    for spin, why in (
        ("2ms", "must be a duration between 0s and 1ms"),
        ("2 ms", "must be a duration between 0s and 1ms"),
        ("1.5ns", "not a whole number of nanoseconds"),
        ("soon", "'soon' is not a duration"),
    ):
        refused = hspc_gen("--target", EXAMPLE, "--out", out, "--set", f"spin_ns={spin}")
        assert_one_clear_error(refused, f"--set spin_ns={spin}: {why}")
    assert not out.exists()


def test_a_set_that_no_memory_bound_fits_names_the_channels_that_would(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text("name: m\nevent:\n  size: 64\n", encoding="utf-8")
    sets = ("--set", "buffers=64", "--set", "buffer_bytes=16MiB")
    refused = hspc_gen("--target", "app.yaml", "--effort", "estimate", *sets, cwd=tmp_path)
    assert_one_clear_error(
        refused,
        "64 buffer(s) of 16MiB take 1GiB, above constraints.max_buffer_memory (4MiB)",
        "64 buffers of 64KiB (--set buffers=64 --set buffer_bytes=64KiB)",
        "2 buffers of 2MiB (--set buffers=2 --set buffer_bytes=2MiB)",
    )
    assert "at most 0" not in refused.stderr
    assert listing(tmp_path) == ["app.yaml"]


def test_a_set_given_twice_is_refused(tmp_path: Path) -> None:
    sets = ("--set", "buffers=4", "--set", "buffers=8")
    refused = hspc_gen("--target", EXAMPLE, "--effort", "estimate", "--out", tmp_path / "o", *sets)
    assert_one_clear_error(refused, "--set buffers given twice (4, 8): give it once")
    assert not (tmp_path / "o").exists()
