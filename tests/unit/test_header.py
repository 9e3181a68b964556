from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from hspc_gen.emit.header import HeaderWriter
from hspc_gen.files import json_text
from hspc_gen.host.machine import read_host
from hspc_gen.model import ChannelParams, Primitive
from hspc_gen.model.result import TuneResult
from hspc_gen.target.app import load_target
from target_files import write
from tuned_runs import ADVICE, COMMAND, tuned


def test_json_text_is_canonical() -> None:
    assert json_text({"b": 1, "a": [1, 2]}) == json_text({"a": [1, 2], "b": 1})
    assert json_text({"a": 1}).endswith("}\n")


# ---- the banner says what kTuning holds (issue 24, item 1) ----
# The search runs for real over a simulated toolchain (tuned_runs, over fake_runner's); the budget
# is cut where a real run's would be: before the first step, or after the search and before the
# confirmation.

SYSFS = Path(__file__).resolve().parents[1] / "data" / "sysfs"


def written(tmp_path: Path, result: TuneResult, constraints: str = "") -> str:
    target = load_target(write(tmp_path, "name: t\nevent:\n  size: 64\n" + constraints))
    host = read_host(SYSFS / "epyc-2c-vm" / "sys")
    writer = HeaderWriter(tmp_path / "t_channel.hpp", target, host, COMMAND, ADVICE)
    writer.write_result(result)
    return writer.path.read_text(encoding="utf-8")


def k_tuning(header: str) -> ChannelParams:
    """kTuning's initializer read back from the header's text."""
    block = header.split("inline constexpr Tuning kTuning = {", 1)[1].split("};", 1)[0]
    fields = dict(re.findall(r"/\*(\w+)=\*/([^,\n]+),", block))
    values: dict[str, object] = {}
    for field in dataclasses.fields(ChannelParams):
        text = fields[field.name]
        if text.startswith("Primitive::"):
            values[field.name] = Primitive(text.removeprefix("Primitive::"))
        elif text in ("true", "false"):
            values[field.name] = text == "true"
        else:
            values[field.name] = int(text)
    return ChannelParams(**values)  # type: ignore[arg-type]


def measured_lines(header: str) -> list[str]:
    """The banner's `measured:` lines, their comment marks taken off."""
    after = header.split("//   measured:\n", 1)[1].split("//\n", 1)[0]
    return [line.removeprefix("//     ") for line in after.splitlines()]


def test_a_confirmed_winner_has_its_figures_in_the_banner(tmp_path: Path) -> None:
    start, result = tuned(tmp_path, "never")
    assert result.search is not None and result.search.confirmed is not None
    header = written(tmp_path, result)
    assert k_tuning(header) == result.winner != start
    lines = measured_lines(header)
    assert lines[0].startswith("throughput: ") and lines[-1].startswith("decision margin: ")
    assert not any("estimate" in line or "NOT confirmed" in line for line in lines)


def test_a_budget_ended_before_the_confirmation_says_the_searchs_best_so_far(
    tmp_path: Path,
) -> None:
    """kTuning holds the search's winner, not the estimate (d227347's banner said "the
    estimate's parameters" over Stage One's winner)."""
    start, result = tuned(tmp_path, "before_confirmation")
    search_result = result.search
    assert search_result is not None and search_result.budget_exhausted
    assert search_result.confirmed is None or search_result.confirmed.rate is None
    header = written(tmp_path, result)
    assert k_tuning(header) == result.winner != start
    decided = sum(step.winner is not None for step in search_result.trail)
    assert measured_lines(header) == [
        f"the search's best so far ({decided} step(s) decided), NOT confirmed by measurement: "
        "the budget ended before the confirmation (see hspc-result.json)"
    ]
    assert "estimate" not in header.split("//   measured:")[1].split("#pragma once")[0]


def test_nothing_measured_says_the_estimates_parameters_and_holds_them(tmp_path: Path) -> None:
    start, result = tuned(tmp_path, "before_search")
    assert result.search is not None and not result.search.trail
    header = written(tmp_path, result)
    assert k_tuning(header) == start == result.winner
    assert measured_lines(header) == [
        "nothing: the budget ended before a step was decided (see hspc-result.json): the "
        "estimate's parameters, from host heuristics"
    ]


def test_an_estimate_run_and_the_anytime_headers_say_what_they_hold(tmp_path: Path) -> None:
    """--effort estimate (no search), the header written before a search, and the one written
    as the search improves: each says what kTuning holds, and none claims a measurement."""
    start, result = tuned(tmp_path, "never")
    estimate = written(tmp_path, dataclasses.replace(result, winner=start, search=None))
    assert k_tuning(estimate) == start
    assert measured_lines(estimate) == [
        "nothing (--effort estimate): the estimate's parameters, from host heuristics"
    ]
    target = load_target(write(tmp_path, "name: t\nevent:\n  size: 64\n"))
    host = read_host(SYSFS / "epyc-2c-vm" / "sys")
    writer = HeaderWriter(tmp_path / "t_channel.hpp", target, host, COMMAND, ADVICE)
    writer.write_start(start, measuring=True)
    header = writer.path.read_text(encoding="utf-8")
    assert k_tuning(header) == start
    assert measured_lines(header)[0].startswith("nothing yet: the estimate's parameters")
    writer.write_best_so_far(result.winner)
    header = writer.path.read_text(encoding="utf-8")
    assert k_tuning(header) == result.winner
    assert measured_lines(header)[0].startswith("the search's best so far, NOT confirmed")


def test_without_anytime_only_the_final_header_is_written(tmp_path: Path) -> None:
    """A header already there when a run begins (an earlier run's, beside its result and
    reports) is not replaced by the start or best-so-far headers: an interrupted run leaves it
    byte for byte; the finished run's header replaces it."""
    start, result = tuned(tmp_path, "never")
    target = load_target(write(tmp_path, "name: t\nevent:\n  size: 64\n"))
    host = read_host(SYSFS / "epyc-2c-vm" / "sys")
    path = tmp_path / "t_channel.hpp"
    path.write_bytes(b"// the earlier run's header\n")
    writer = HeaderWriter(path, target, host, COMMAND, ADVICE, anytime=False)
    writer.write_start(start, measuring=True)
    writer.write_best_so_far(result.winner)
    assert path.read_bytes() == b"// the earlier run's header\n"
    writer.write_result(result)
    assert k_tuning(path.read_text(encoding="utf-8")) == result.winner


def test_the_first_line_names_the_file_as_output_header_named_it(tmp_path: Path) -> None:
    start, _ = tuned(tmp_path, "never")
    target = load_target(write(tmp_path, "name: t\nevent:\n  size: 64\n"))
    host = read_host(SYSFS / "epyc-2c-vm" / "sys")
    writer = HeaderWriter(tmp_path / "my_queue.hpp", target, host, COMMAND, ADVICE)
    writer.write_start(start, measuring=False)
    first = writer.path.read_text(encoding="utf-8").splitlines()[0]
    assert first == "// my_queue.hpp: a high-speed producer/consumer channel tuned for one host."


@pytest.mark.parametrize("cut", ["before_search", "before_confirmation"])
def test_a_latency_bound_nothing_confirmed_is_said_not_measured(tmp_path: Path, cut: str) -> None:
    """Whatever ended the run before a confirmation (a busy host's budget, in the CLI test of a
    bound no channel keeps), the header says the bound it was asked for was not measured."""
    _, result = tuned(tmp_path, cut)
    header = written(tmp_path, result, "constraints:\n  max_latency_us: 10ns\n")
    assert measured_lines(header)[-1] == "constraints.max_latency_us 0.01 us: NOT measured"
    no_bound = written(tmp_path, result)
    assert not any("max_latency_us" in line for line in measured_lines(no_bound))
