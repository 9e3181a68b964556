"""app.yaml into a Target: defaults, units, paths, overrides, and one clear message per bad input.

The YAML reading itself (generator/target/yaml_source.py: line numbers, duplicate keys) is tested
here too, through load_target, where its messages reach the user.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel, ValidationError

from hspc_gen.model import Objective, PinThreads, Primitive
from hspc_gen.target.app import Event, Target, Workload, default_align, load_target, main
from target_files import H, error_of, write

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "app.yaml"
DATA = REPO / "tests" / "data" / "targets"


def test_minimal_target_takes_every_default(tmp_path: Path) -> None:
    target = load_target(write(tmp_path, "name: demo\nevent:\n  size: 8\n"))
    assert (target.name, target.event.size, target.event.align) == ("demo", 8, 8)
    assert target.workload.producer_ns == target.workload.consumer_ns == 0.0
    assert target.workload.consumer_bytes == 0
    assert target.workload.producer_source is target.workload.consumer_source is None
    assert target.objective is Objective.throughput
    assert target.constraints.primitives == tuple(Primitive)
    assert target.constraints.max_buffer_memory == 4 << 20
    assert target.constraints.max_latency_us is None
    assert target.constraints.pin_threads is PinThreads.auto
    assert target.threads.producers == target.threads.consumers == "auto"
    assert target.output.header == tmp_path.resolve() / "demo_channel.hpp"
    assert target.output.namespace == "demo"
    assert target.output.report == tmp_path.resolve() / "demo_report"
    assert target.budget == 120.0


@pytest.mark.parametrize(
    ("text", "adaptive", "count"),
    [
        ("consumers: adaptive", True, "auto"),
        ("consumers: auto", False, "auto"),
        ("consumers: 3", False, 3),
        ("{producers: 2, consumers: adaptive}", True, "auto"),
    ],
)
def test_adaptive_consumers_are_searched_as_auto_and_then_adapt(
    tmp_path: Path, text: str, adaptive: bool, count: object
) -> None:
    """threads.consumers: adaptive asks the thread search for the count as auto does (where the
    pool starts), and the header for a pool whose controller hspc-gen tunes (kPoolTuning)."""
    body = f"threads: {text}\n" if text.startswith("{") else f"threads:\n  {text}\n"
    threads = load_target(write(tmp_path, H + body)).threads
    assert (threads.adaptive, threads.consumer_count) == (adaptive, count)


def test_the_example_is_the_acceptance_target() -> None:
    target = load_target(EXAMPLE)
    assert (target.name, target.event.size) == ("example", 8)
    assert (target.workload.producer_ns, target.workload.consumer_ns) == (40.0, 15.0)
    assert target.objective is Objective.throughput
    assert target.budget == 120.0
    assert target.output.header == EXAMPLE.parent / "example_channel.hpp"


def _keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    keys = set()
    for name, info in model.model_fields.items():
        keys.add(prefix + name)
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            keys |= _keys(info.annotation, f"{prefix}{name}.")
    return keys


def _yaml_keys(data: dict[str, object], prefix: str = "") -> set[str]:
    keys = set()
    for name, value in data.items():
        keys.add(prefix + name)
        if isinstance(value, dict):
            keys |= _yaml_keys(value, f"{prefix}{name}.")
    return keys


def test_the_example_shows_every_key_with_the_schema_first() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert text.splitlines()[0] == (
        "# yaml-language-server: $schema=../generator/schema/app.schema.json"
    )
    assert _yaml_keys(yaml.safe_load(text)) == _keys(Target)


@pytest.mark.parametrize(
    ("size", "align"), [(1, 1), (3, 1), (8, 8), (12, 4), (24, 8), (96, 32), (256, 64), (65536, 64)]
)
def test_default_align_is_the_largest_dividing_power_of_two_up_to_64(size: int, align: int) -> None:
    assert default_align(size) == align
    assert Event(size=size).align == align


def test_stride_rounds_size_up_to_align() -> None:
    assert Event(size=12, align=8).stride == 16
    assert Event(size=8).stride == 8
    assert Event(size=1, align=64).stride == 64


def test_human_units_everywhere(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
name: units
event: {size: 4KiB, align: 64B}
workload: {producer_ns: 1.5us, consumer_ns: "3\u00b5s", consumer_bytes: 1MB}
constraints: {max_buffer_memory: 64MiB, max_latency_us: 2ms}
budget: 1h30m
""",
    )
    target = load_target(path)
    assert (target.event.size, target.event.align) == (4096, 64)
    assert (target.workload.producer_ns, target.workload.consumer_ns) == (1500.0, 3000.0)
    assert target.workload.consumer_bytes == 1_000_000
    assert target.constraints.max_buffer_memory == 64 << 20
    assert target.constraints.max_latency_us == pytest.approx(2000.0)
    assert target.budget == 5400.0


def test_primitives_come_in_declaration_order(tmp_path: Path) -> None:
    path = write(tmp_path, "name: p\nevent: {size: 8}\nconstraints: {primitives: [hybrid, mutex]}")
    assert load_target(path).constraints.primitives == (Primitive.mutex, Primitive.hybrid)


def test_paths_are_relative_to_the_yaml_not_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = tmp_path / "app"
    (app / "src").mkdir(parents=True)
    (app / "src" / "work.cpp").write_text("// work\n", encoding="utf-8")
    write(
        app,
        """
name: paths
event: {size: 16}
workload: {producer_source: src/work.cpp, consumer_source: src/work.cpp}
output: {header: include/paths.hpp, namespace: Paths}
""",
    )
    monkeypatch.chdir(tmp_path)
    target = load_target(Path("app/app.yaml"))
    assert target.workload.producer_source == app.resolve() / "src" / "work.cpp"
    assert target.workload.consumer_source == target.workload.producer_source
    assert target.output.header == app.resolve() / "include" / "paths.hpp"
    assert target.output.namespace == "Paths"
    assert target.output.report == app.resolve() / "include" / "paths_report"


@pytest.mark.parametrize(
    "section",
    [
        {},
        {"producer_ns": "40ns", "consumer_ns": "1.5us", "consumer_bytes": "4KiB"},
        {"producer_source": "work.cpp", "consumer_source": "work.cpp"},
    ],
)
def test_the_frozen_workload_is_the_section_as_record_keys_hash_it(
    tmp_path: Path, section: dict[str, str]
) -> None:
    # Record keys hash the workload's JSON: the frozen value the stages take must dump exactly as
    # the pydantic section did, or every stored record would be measured again.
    (tmp_path / "work.cpp").write_text("// work\n", encoding="utf-8")
    checked = Workload.model_validate(section, context={"base_dir": tmp_path})
    value = checked.value()
    assert value.to_json() == checked.model_dump(mode="json")
    assert (value.producer_source, value.consumer_bytes) == (
        checked.producer_source,
        checked.consumer_bytes,
    )


def test_empty_sections_mean_all_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, "name: e\nevent: {size: 8}\nworkload:\nconstraints:\noutput:\n")
    target = load_target(path)
    assert target.constraints.primitives == tuple(Primitive)
    assert target.output.namespace == "e"


def test_overrides_set_dotted_keys_before_validation(tmp_path: Path) -> None:
    path = write(tmp_path, "name: o\nevent: {size: 8}\nbudget: 10m\n")
    target = load_target(
        path, {"budget": "2m", "constraints.primitives": "[futex]", "threads.producers": "2"}
    )
    assert target.budget == 120.0
    assert target.constraints.primitives == (Primitive.futex,)
    assert target.threads.producers == 2


def test_targets_are_frozen(tmp_path: Path) -> None:
    target = load_target(write(tmp_path, "name: f\nevent: {size: 8}\n"))
    with pytest.raises(ValidationError, match="frozen"):
        target.budget = 1.0


def test_recorded_targets_load() -> None:
    full = load_target(DATA / "full" / "app.yaml")
    assert full.workload.producer_source == (DATA / "full" / "produce.cpp").resolve()
    assert full.workload.consumer_ns == 250.0
    assert full.threads.producers == 1
    assert full.constraints.pin_threads is PinThreads.never
    assert full.objective is Objective.latency


@pytest.mark.slow
@pytest.mark.parametrize("compiler", ["g++", "clang++"])
def test_example_work_compiles_with_the_documented_signatures(
    compiler: str, tmp_path: Path
) -> None:
    """examples/work.cpp defines exactly what the Workload docstring promises, warning-free."""
    source = REPO / "examples" / "work.cpp"
    probe = write(
        tmp_path,
        '#include <cstddef>\n#include <cstdint>\n#include "work.cpp"\n'
        "void (*produce)(std::uint64_t, void*, std::size_t) = hspc_produce;\n"
        "void (*consume)(const void*, std::size_t) = hspc_consume;\n"
        "int main() {\n  unsigned char event[12];\n  produce(7, event, sizeof event);\n"
        "  consume(event, sizeof event);\n  return event[0] == 7 && event[8] == 7 ? 0 : 1;\n}\n",
        "probe.cpp",
    )
    binary = tmp_path / "probe"
    flags = ["-std=c++17", "-Wall", "-Wextra", "-Wpedantic", "-Werror", f"-I{source.parent}"]
    compiler_path = shutil.which(compiler)
    assert compiler_path is not None
    subprocess.run([compiler_path, *flags, str(probe), "-o", str(binary)], check=True)
    assert subprocess.run([str(binary)], check=False).returncode == 0
    for text in (Workload.__doc__ or "", source.read_text(encoding="utf-8")):
        flat = " ".join(text.split())
        assert "void hspc_produce(std::uint64_t seq, void* event, std::size_t size)" in flat
        assert "void hspc_consume(const void* event, std::size_t size)" in flat


def test_module_main_prints_the_resolved_target(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(EXAMPLE)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["event"] == {"size": 8, "align": 8}
    assert printed["output"]["header"] == str(EXAMPLE.parent / "example_channel.hpp")


def test_module_main_reports_bad_input_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, H + "objectve: latency\n")
    assert main([str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"{path}:4: unknown key 'objectve' (did you mean 'objective'?)\n"
    assert main([]) == 2
    assert "usage: python -m hspc_gen.target.app" in capsys.readouterr().err


def test_a_dumped_target_validates_to_itself() -> None:
    target = load_target(DATA / "full" / "app.yaml")
    assert Target.model_validate(target.model_dump()) == target
    assert Target.model_validate_json(target.model_dump_json()) == target


def test_zero_synthetic_work_beside_a_source_is_no_conflict(tmp_path: Path) -> None:
    (tmp_path / "w.cpp").write_text("// real work\n", encoding="utf-8")
    path = write(tmp_path, H + "workload:\n  producer_ns: 0\n  producer_source: w.cpp\n")
    assert load_target(path).workload.producer_source == tmp_path.resolve() / "w.cpp"


def test_every_bundled_example_loads() -> None:
    for example in sorted((REPO / "examples").glob("*.yaml")):
        target = load_target(example)
        assert target.name == example.stem.replace("app", "example")


def test_fewer_consumers_than_producers_is_refused_at_its_key(tmp_path: Path) -> None:
    path = write(tmp_path, "name: x\nevent:\n  size: 8\nthreads:\n  producers: 4\n  consumers: 2\n")
    message = error_of(path)
    assert "threads.consumers" in message and "every producer needs its own" in message
