"""hspc_gen.search.measure.build: the one builder and its flags, with the real compiler, Meson
and Ninja: a unit that does not compile leaves out its candidates, the rest is linked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hspc_gen.model import Status
from hspc_gen.search.measure import process
from hspc_gen.search.measure.build import (
    CONTEST_CXXFLAGS,
    MESON_OPTIONS,
    PROGRAM_FLAGS,
    Project,
    build,
    compile_program,
    contest_flags,
)

MAIN = '#include <cstdio>\nint value();\nint main() { std::printf("%d\\n", value()); }\n'


def test_the_flags_are_the_ones_every_stored_record_was_keyed_by() -> None:
    # Part of each record's key and each build's folder: a change here makes every stored
    # measurement stale, so it is deliberate or it is a bug.
    assert MESON_OPTIONS == ("--buildtype=release", "-Db_ndebug=true", "-Dwarning_level=2")
    assert PROGRAM_FLAGS == ("-std=c++17", "-O2", "-pthread")  # calibration, probe, preflight
    assert CONTEST_CXXFLAGS == "-O2 -DNDEBUG"
    assert contest_flags("-O2 -DNDEBUG").meson_options() == (
        "--buildtype=plain",
        "-Dwarning_level=2",
        "-Dcpp_args=-O2 -DNDEBUG",
    )


def test_a_program_compiles_and_runs_with_its_includes_and_defines(tmp_path: Path) -> None:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "value.hpp").write_text("inline int value() { return VALUE * 2; }\n")
    source = tmp_path / "main.cpp"
    source.write_text(
        '#include <cstdio>\n#include "value.hpp"\nint main() { std::printf("%d", value()); }\n'
    )
    program = tmp_path / "program"
    compiled = compile_program(
        ["c++"], [str(source)], program, includes=[str(tmp_path / "inc")], defines=["VALUE=21"],
        timeout=120,
    )  # fmt: skip
    assert compiled.status is Status.ok, compiled.log
    assert process.run([str(program)], 30).stdout == "42"


def test_a_compile_error_or_a_missing_compiler_is_a_status_not_an_exception(
    tmp_path: Path,
) -> None:
    source = tmp_path / "broken.cpp"
    source.write_text("int main() { return undeclared; }\n")
    broken = compile_program(["c++"], [str(source)], tmp_path / "p", timeout=120)
    assert broken.status is Status.compile_error and "undeclared" in broken.log
    missing = compile_program(["/nonexistent/c++"], [str(source)], tmp_path / "p", timeout=120)
    assert missing.status is Status.compile_error and missing.start_error


def _project(units: dict[str, str], ids: Sequence[str]) -> Project:
    """main.cpp, and one unit per candidate in `ids`, the executable built from them all."""
    chosen = {cid: units[cid] for cid in ids}
    names = "".join(f"'{cid}.cpp', " for cid in chosen)
    meson = (
        "project('t', 'cpp', default_options: ['cpp_std=c++17'])\n"
        f"executable('hspc_harness', files('main.cpp', {names}))\n"
    )
    files = {"meson.build": meson, "main.cpp": MAIN}
    files |= {f"{cid}.cpp": text for cid, text in chosen.items()}
    return Project(files, {cid: f"{cid}.cpp" for cid in chosen})


def test_a_unit_that_does_not_compile_is_left_out_and_the_rest_linked(tmp_path: Path) -> None:
    units = {
        "v_good": "int value() { return 7; }\n",
        "tuned_asserts": 'static_assert(false, "refused");\n',  # any unit's name, not only v_
    }
    built = build(lambda ids: _project(units, ids), list(units), tmp_path)
    assert built.status is Status.ok and built.executable is not None, built.log
    assert set(built.failed) == {"tuned_asserts"} and "refused" in built.failed["tuned_asserts"]
    assert process.run([str(built.executable)], 30).stdout == "7\n"


def test_a_failure_no_candidate_owns_fails_the_build(tmp_path: Path) -> None:
    units = {"v_good": "int value() { return 7; }\n"}

    def render(ids: Sequence[str]) -> Project:
        project = _project(units, ids)
        return Project({**project.files, "main.cpp": "int main() { broken }\n"}, project.variants)

    built = build(render, list(units), tmp_path)
    assert built.status is Status.compile_error and built.executable is None
    assert built.failed == {} and "broken" in built.log
