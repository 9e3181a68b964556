"""Rendering: deterministic bytes, a reviewed golden header, and every primitive's header compiled
warning-free by g++ and clang++ under C++17, C++20 and C++23 and run once end to end."""

from __future__ import annotations

import dataclasses
import functools
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hspc_gen.model import ChannelParams, Primitive
from hspc_gen.model.threads import ThreadAdvice
from hspc_gen.render import BenchVariant, HeaderSpec, Provenance, render_bench_files, render_header

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
PROVENANCE = Provenance(
    command="hspc-gen --target examples/app.yaml --effort estimate",
    fingerprint="0123456789abcdef",
    host_summary="Golden CPU; 1 package(s), 2 core(s), 2 CPU(s), CMP",
    measured=("throughput: 5e+08 events/s (95% CI 4.9e+08 to 5.1e+08, 20 rounds)",),
)
COMPILERS = ("g++", "clang++")
STANDARDS = ("c++17", "c++20", "c++23")
WARNINGS = ("-Wall", "-Wextra", "-Wpedantic", "-Werror")


def spec(primitive: Primitive = Primitive.futex, namespace: str = "golden") -> HeaderSpec:
    params = ChannelParams(128, 4096, 4, 16384, primitive, -1, -1)
    threads = ThreadAdvice(1, 2, 2, (1,), (0, 1), pinned=False)
    return HeaderSpec("golden", namespace, params, 2000, PROVENANCE, threads)


def test_rendering_is_deterministic() -> None:
    assert render_header(spec()) == render_header(spec())


def test_the_golden_header_is_unchanged(request: pytest.FixtureRequest) -> None:
    """A template or runtime change shows up here as a diff to review; regenerate with
    `pytest tests/unit/test_render.py --regen-golden` and commit the reviewed file."""
    text = render_header(spec())
    golden = GOLDEN / "golden_channel.hpp"
    if request.config.getoption("--regen-golden"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def test_the_header_is_self_contained_and_states_its_provenance() -> None:
    text = render_header(spec())
    assert not re.search(r'^#include "', text, re.MULTILINE)
    assert "namespace hspc" not in text and "hspc::" not in text
    assert text.count("#pragma once") == 1
    for line in ("command:     hspc-gen", "fingerprint: 0123456789abcdef", "throughput: 5e+08"):
        assert line in text
    assert "/*primitive=*/Primitive::futex," in text


@functools.cache
def std_flag(compiler: str, standard: str) -> str:
    """`-std=` for `standard`, or its draft name where the compiler predates the final one
    (clang 14 knows C++23 only as c++2b)."""
    flag = f"-std={standard}"
    probe = [compiler, flag, "-x", "c++", "-fsyntax-only", "/dev/null"]
    if subprocess.run(probe, capture_output=True, check=False).returncode == 0:
        return flag
    return flag.replace("c++23", "c++2b").replace("c++20", "c++2a")


@pytest.mark.parametrize("standard", STANDARDS)
@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("primitive", list(Primitive))
def test_every_primitive_compiles_warning_free_and_delivers(
    tmp_path: Path, compiler: str, primitive: Primitive, standard: str
) -> None:
    """Every primitive, both compilers, every standard a user may build the header under."""
    if shutil.which(compiler) is None:
        pytest.fail(f"{compiler} is not installed: ./dev setup installs it")
    header = tmp_path / "golden_channel.hpp"
    header.write_text(render_header(spec(primitive, namespace="tuned")), encoding="utf-8")
    exe = tmp_path / "use_header"
    build = subprocess.run(
        [
            compiler,
            std_flag(compiler, standard),
            "-O2",
            "-pthread",
            *WARNINGS,
            f'-DHSPC_GENERATED_HEADER="{header}"',
            "-DHSPC_GENERATED_NAMESPACE=tuned",
            str(GOLDEN / "use_header.cpp"),
            "-o",
            str(exe),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, build.stderr
    assert build.stderr == ""  # warning-free, not only error-free
    done = subprocess.run([str(exe)], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("ok: 100000 events")


def test_a_bench_project_has_one_unit_per_compile_time_point() -> None:
    base = ChannelParams(64, 0, 4, 4096, Primitive.futex)
    variants = (
        BenchVariant("ca", base),
        BenchVariant("cb", base.replace(producer_cpu=1, consumer_cpu=0)),  # same code, pinned
        BenchVariant("cc", base.replace(primitive=Primitive.condvar)),
    )
    files = render_bench_files(variants, event_bytes=8, spin_ns=2000)
    assert files == render_bench_files(tuple(reversed(variants)), event_bytes=8, spin_ns=2000)
    units = sorted(name for name in files if name.startswith("v_"))
    assert len(units) == 2
    assert all(f"'{unit}'" in files["meson.build"] for unit in units)
    assert {'{"ca", &run_', '{"cb", &run_', '{"cc", &run_'} <= {
        line.strip()[: len('{"ca", &run_')] for line in files["main.cpp"].splitlines()
    }
    assert "include/hspc/channel.hpp" in files and "include/bench/harness.hpp" in files


def test_the_header_is_clang_format_clean(tmp_path: Path) -> None:
    header = tmp_path / "golden_channel.hpp"
    header.write_text(render_header(spec()), encoding="utf-8")
    style = Path(__file__).resolve().parents[2] / ".clang-format"
    done = subprocess.run(
        ["clang-format", f"--style=file:{style}", "--dry-run", "--Werror", str(header)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[:3000]


def test_the_header_states_the_consumer_count_advised_not_a_rounded_up_one() -> None:
    """Two producers and three consumers: one producer gets two, the other one (kConsumers is
    the count to start, as hspc-result.json's recommendation says; 0.1 printed 4)."""
    advice = ThreadAdvice(2, 3, 2, (1, 2), (1, 2, 3), pinned=False)
    header = render_header(dataclasses.replace(spec(), threads=advice))
    assert "inline constexpr int kConsumers = 3;" in header
    assert "inline constexpr int kConsumersPerProducer = 2;" in header
