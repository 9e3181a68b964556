"""app.yaml into a Target: defaults, units, paths, overrides, and one clear message per bad input.

The YAML reading itself (generator/yaml_source.py: line numbers, duplicate keys) is tested here
too, through load_target, where its messages reach the user.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel, ValidationError

from hspc_gen.errors import UserError
from hspc_gen.model import Objective, PinThreads, Primitive
from hspc_gen.target import Event, Target, Workload, default_align, load_target, main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "app.yaml"
DATA = REPO / "tests" / "data" / "targets"


def write(folder: Path, text: str, name: str = "app.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path, overrides: dict[str, str] | None = None) -> str:
    with pytest.raises(UserError) as caught:
        load_target(path, overrides)
    assert caught.value.exit_status == 2
    return str(caught.value)


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


# Every bad input: (case, YAML text, expected "file:line" suffix, fragments of the one message).
H = "name: t\nevent:\n  size: 8\n"  # a valid head, so the case's own lines start at line 4
BAD_INPUTS = [
    ("unparsable", "name: t\nevent:\n  size: [8\nbudget: 2m\n", ":4:7", ["invalid YAML", "']'"]),
    ("bad indent", H + "   align: 8\n", ":4:9", ["invalid YAML: mapping values are not allowed"]),
    ("two documents", "name: a\n---\nname: b\n", ":2:1", ["expected a single document"]),
    ("a list", "- name: t\n- event: 8\n", ":1", ["expected a mapping", "got a list"]),
    ("a scalar", "just words\n", ":1", ["expected a mapping", "got the value 'just words'"]),
    ("empty", "", "", ["the file is empty"]),
    ("only comments", "# nothing yet\n\n", "", ["the file is empty"]),
    ("only a document marker", "---\n", "", ["the file is empty"]),
    ("duplicate key", H + "name: u\n", ":4", ["name: duplicate key (first at line 1"]),
    ("duplicate nested key", H + "  size: 16\n", ":4", ["event.size: duplicate key"]),
    ("number as key", H + "1: one\n", ":4", ["key '1' is not a name"]),
    ("boolean as key", H + "yes: 1\n", ":4", ["key 'yes' is not a name"]),
    ("merge key", "b: &b {size: 8}\nname: t\nevent:\n  <<: *b\n", ":4", ["merge keys (<<)"]),
    ("unknown key", H + "objectve: latency\n", ":4", ["unknown key 'objectve'", "'objective'?"]),
    ("far-off key", H + "colour: red\n", ":4", ["'colour' (expected one of: name, event,"]),
    ("unknown event key", H + "  sise: 8\n", ":4", ["'event.sise' (did you mean 'size'?)"]),
    ("unknown workload key", H + "workload:\n  producer_nss: 3\n", ":5", ["'producer_ns'?"]),
    ("unknown constraint", H + "constraints:\n  primitivs: []\n", ":5", ["'primitives'?"]),
    ("unknown threads key", H + "threads:\n  producer: 2\n", ":5", ["'producers'?"]),
    ("unknown output key", H + "output:\n  headr: x.hpp\n", ":5", ["'output.headr'", "'header'?"]),
    ("missing name", "event: {size: 8}\n", "", ["name: required key is missing"]),
    ("missing event", "name: t\n", "", ["event: required key is missing"]),
    ("missing size", "name: t\nevent:\n  align: 8\n", ":2", ["event.size: required key"]),
    ("event not a mapping", "name: t\nevent: 8\n", ":2", ["event: expected a mapping", "got 8"]),
    ("output a list", H + "output: [a]\n", ":4", ["output: expected a mapping", "got a list"]),
    ("primitives a word", H + "constraints:\n  primitives: futex\n", ":5", ["expected a list"]),
    ("no primitives", H + "constraints:\n  primitives: []\n", ":5", ["at least one primitive"]),
    ("primitive twice", H + "constraints:\n  primitives: [futex, mutex, futex]\n", ":5",
     ["constraints.primitives[2]: 'futex' is listed twice"]),
    ("unknown primitive", H + "constraints:\n  primitives: [futex, mutex, spinlok]\n", ":5",
     ["constraints.primitives[2]: unknown primitive 'spinlok' (did you mean 'spinlock'?)"]),
    ("far-off primitive", H + "constraints:\n  primitives: [semaphore]\n", ":5",
     ["'semaphore' (expected one of: condvar, mutex, spinlock"]),
    ("unknown objective", H + "objective: thruput\n", ":4",
     ["objective: unknown objective 'thruput' (did you mean 'throughput'?)"]),
    ("numeric objective", H + "objective: 3\n", ":4", ["expected one of throughput, latency"]),
    ("unknown pin mode", H + "constraints:\n  pin_threads: sometimes\n", ":5",
     ["constraints.pin_threads: unknown pin_threads mode 'sometimes'"]),
    ("yaml boolean", H + "constraints:\n  pin_threads: no\n", ":5", ["false (YAML reads yes/no"]),
    ("numeric name", "name: 42\nevent: {size: 8}\n", ":1", ["name: expected a lower-case", "42"]),
    ("name with capitals", "name: My-App\nevent: {size: 8}\n", ":1", ["got 'My-App'"]),
    ("name a keyword", "name: class\nevent: {size: 8}\n", ":1", ["'class' is a C++ keyword"]),
    ("name underscore", "name: _x\nevent: {size: 8}\n", ":1", ["'_x' is reserved in C++"]),
    ("name dunder", "name: a__b\nevent: {size: 8}\n", ":1", ["'a__b' is reserved in C++"]),
    ("namespace std", H + "output:\n  namespace: std\n", ":5", ["output.namespace: 'std'"]),
    ("namespace dash", H + "output:\n  namespace: a-b\n", ":5", ["a C++ identifier, got 'a-b'"]),
    ("namespace keyword", H + "output:\n  namespace: int\n", ":5", ["'int' is a C++ keyword"]),
    ("zero size", "name: t\nevent:\n  size: 0\n", ":3", ["event.size: 0B is out of range"]),
    ("negative size", "name: t\nevent:\n  size: -1\n", ":3", ["event.size: -1 is negative"]),
    ("huge size", "name: t\nevent:\n  size: 1TiB\n", ":3", ["1TiB is out of range: 1B to 64KiB"]),
    ("fractional size", "name: t\nevent:\n  size: 8.5\n", ":3", ["a size such as", "got 8.5"]),
    ("unit-less junk", "name: t\nevent:\n  size: 8 bytes\n", ":3", ["unknown size unit 'bytes'"]),
    ("odd align", H + "  align: 3\n", ":4", ["event.align: 3B is not a power of two"]),
    ("huge align", H + "  align: 8KiB\n", ":4", ["8KiB is out of range: 1B to 4KiB"]),
    ("tiny memory", H + "constraints:\n  max_buffer_memory: 64B\n", ":5", ["128B to 1GiB"]),
    ("huge memory", H + "constraints:\n  max_buffer_memory: 2GiB\n", ":5", ["2GiB is out of"]),
    ("two events do not fit", "name: t\nevent: {size: 64KiB}\nconstraints:\n"
     "  max_buffer_memory: 100KiB\n", ":4", ["100KiB cannot hold two 64KiB events"]),
    ("zero budget", H + "budget: 0\n", ":4", ["budget: 0 is out of range: 1s to 24h"]),
    ("huge budget", H + "budget: 25h\n", ":4", ["budget: 25h is out of range"]),
    ("junk budget", H + "budget: soon\n", ":4", ["'soon' is not a duration"]),
    ("list budget", H + "budget: [1]\n", ":4", ["got a list"]),
    ("zero latency", H + "constraints:\n  max_latency_us: 0\n", ":5", ["0 is out of range"]),
    ("negative latency", H + "constraints:\n  max_latency_us: -5\n", ":5", ["-5 is negative"]),
    ("negative work", H + "workload:\n  producer_ns: -1\n", ":5", ["producer_ns: -1 is negative"]),
    ("huge work", H + "workload:\n  consumer_ns: 2ms\n", ":5", ["2ms is out of range: 0s to 1ms"]),
    ("huge working set", H + "workload:\n  consumer_bytes: 2GiB\n", ":5", ["0B to 1GiB"]),
    ("zero threads", H + "threads:\n  producers: 0\n", ":5", ["'auto' or a whole number", "0"]),
    ("many threads", H + "threads:\n  consumers: 5000\n", ":5", ["from 1 to 1024, got 5000"]),
    ("half a thread", H + "threads:\n  consumers: 2.5\n", ":5", ["got 2.5"]),
    ("word threads", H + "threads:\n  consumers: many\n", ":5", ["got 'many'"]),
    ("missing source", H + "workload:\n  producer_source: nope.cpp\n", ":5",
     ["workload.producer_source: 'nope.cpp' does not exist (looked for /"]),
    ("source a folder", H + "workload:\n  consumer_source: .\n", ":5", ["is a directory"]),
    ("source a number", H + "workload:\n  consumer_source: 5\n", ":5", ["a file path, got 5"]),
    ("both producer kinds", H + "workload:\n  producer_ns: 40\n  producer_source: w.cpp\n", ":6",
     ["workload.producer_source: give either producer_ns", "not both"]),
    ("both consumer kinds", H + "workload:\n  consumer_source: w.cpp\n  consumer_bytes: 1KiB\n",
     ":5", ["give either consumer_bytes (synthetic work) or consumer_source"]),
    ("header a folder", H + "output:\n  header: .\n", ":5", ["output.header: '.' is a directory"]),
    ("report a file", H + "output:\n  report: w.cpp\n", ":5", ["the report must go in a folder"]),
]  # fmt: skip


@pytest.mark.parametrize(("text", "where", "fragments"), [c[1:] for c in BAD_INPUTS],
                         ids=[c[0] for c in BAD_INPUTS])  # fmt: skip
def test_bad_input_is_one_clear_message(
    tmp_path: Path, text: str, where: str, fragments: list[str]
) -> None:
    (tmp_path / "w.cpp").write_text("// real work\n", encoding="utf-8")
    path = write(tmp_path, text)
    message = error_of(path)
    assert message.startswith(f"{path}{where}: "), message
    assert "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, message


def test_several_problems_are_one_compact_block_in_file_order(tmp_path: Path) -> None:
    path = write(tmp_path, "budget: 0\nname: Bad\nevent: {size: 0}\nobjectve: x\n")
    lines = error_of(path).splitlines()
    assert [line.split(": ")[0] for line in lines] == [f"{path}:{n}" for n in (1, 2, 3, 4)]
    assert "unknown key 'objectve'" in lines[3]


def test_a_flood_of_problems_is_cut_short(tmp_path: Path) -> None:
    bad = "".join(f"  key{n}: 1\n" for n in range(20))
    lines = error_of(write(tmp_path, H + bad)).splitlines()
    assert len(lines) == 9
    assert lines[-1] == "... and 12 more problems"


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    assert error_of(path) == f"{path}: no such file"


def test_a_folder_is_not_a_file(tmp_path: Path) -> None:
    assert error_of(tmp_path) == f"{tmp_path}: is a directory, not a YAML file"


def test_text_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "app.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    assert error_of(path) == f"{path}: not UTF-8 text (byte 9)"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"budget": "0s"}, "budget: 0s is out of range: 1s to 24h (from override 'budget=0s')"),
        (
            {"constraints.primitivs": "[futex]"},
            "unknown key 'constraints.primitivs' (did you mean 'primitives'?)"
            " (from override 'constraints.primitivs=[futex]')",
        ),
        ({"event.size.x": "1"}, "override 'event.size.x=1': 'event.size' is not a mapping"),
        (
            {"a..b": "1"},
            "override 'a..b=1': 'a..b' is not a dotted key such as budget or event.size",
        ),
        ({"budget": "[1"}, "override 'budget=[1': the value is not valid YAML"),
    ],
)
def test_bad_overrides_say_so(tmp_path: Path, overrides: dict[str, str], message: str) -> None:
    path = write(tmp_path, H)
    assert error_of(path, overrides) == f"{path}: {message}"


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
    assert "usage: python -m hspc_gen.target" in capsys.readouterr().err


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
