"""app.yaml's bad inputs: each one clear message naming the file, the line, the dotted key and
what would be right; exit status 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from hspc_gen.errors import UserError
from hspc_gen.target.app import load_target
from target_files import H, error_of, write

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "app.yaml"

# Every bad input: (case, YAML text, expected "file:line" suffix, fragments of the one message).
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
     "  max_buffer_memory: 100KiB\n", ":4",
     ["100KiB admits no channel for 64KiB events", "each take 128KiB; allow at least"]),
    ("no channel for small events", H + "constraints:\n  max_buffer_memory: 127B\n", ":5",
     ["127B is out of range: 128B to 1GiB"]),
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
    ("adaptive spelled otherwise", H + "threads:\n  consumers: Adaptive\n", ":5",
     ["threads.consumers: expected 'auto', 'adaptive' or a whole number", "got 'Adaptive'"]),
    ("adaptive as a flag", H + "threads:\n  consumers: {adaptive: true}\n", ":5",
     ["threads.consumers: expected 'auto', 'adaptive'", "got a mapping"]),
    ("adaptive producers", H + "threads:\n  producers: adaptive\n", ":5",
     ["threads.producers: 'adaptive' is for threads.consumers only", "the producers are"]),
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


def test_text_with_a_control_character(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "name: t\nevent:\n  size: 8\x00\n"))
    assert message.endswith(":3: not a YAML text: character 0x00 is not allowed")


def test_text_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "app.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    assert error_of(path) == f"{path}: not UTF-8 text (byte 9)"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        # A value checked by the model is blamed on the override itself, not on the file.
        ({"budget": "0s"}, "budget: 0s is out of range: 1s to 24h (from override 'budget=0s')"),
        (
            {"constraints.primitivs": "[futex]"},
            "unknown key 'constraints.primitivs' (did you mean 'primitives'?)"
            " (from override 'constraints.primitivs=[futex]')",
        ),
        ({"event.size.x": "1"}, "{path}: override 'event.size.x=1': 'event.size' is not a mapping"),
        (
            {"a..b": "1"},
            "{path}: override 'a..b=1': 'a..b' is not a dotted key such as budget or event.size",
        ),
        ({"budget": "[1"}, "{path}: override 'budget=[1': the value is not valid YAML"),
    ],
)
def test_bad_overrides_say_so(tmp_path: Path, overrides: dict[str, str], message: str) -> None:
    path = write(tmp_path, H)
    assert error_of(path, overrides) == message.format(path=path)


def test_an_override_is_blamed_on_its_label() -> None:
    with pytest.raises(UserError) as caught:
        load_target(EXAMPLE, {"budget": "30h"}, {"budget": "--budget 30h"})
    assert str(caught.value) == "budget: 30h is out of range: 1s to 24h (from --budget 30h)"


def test_a_source_in_a_folder_with_a_line_break_is_refused(tmp_path: Path) -> None:
    """Meson hands the source's folder to Ninja, which cannot take a line break: refused here,
    not a Meson crash under every candidate."""
    folder = tmp_path / "two\nlines"
    folder.mkdir()
    (folder / "work.cpp").write_text("\n")
    text = H + 'workload:\n  consumer_source: "two\\nlines/work.cpp"\n'
    message = error_of(write(tmp_path, text))
    assert "workload.consumer_source" in message and "has a line break" in message
