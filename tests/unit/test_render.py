"""Rendering: deterministic bytes, a reviewed golden header, and every primitive's header compiled
warning-free by g++ and clang++ under C++17, C++20 and C++23, with the strict warnings users build
with (STRICT), and run once end to end; its consumer pool likewise; a header with a latency bound
likewise, its bound acting; the batch's harness project carrying the bound."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from headers import (
    COMPILERS,
    GOLDEN,
    STANDARDS,
    STRICT,
    WARNINGS,
    spec,
    std_flag,
)
from hspc_gen.model import ChannelParams, Primitive
from hspc_gen.model.threads import ThreadAdvice
from hspc_gen.render import (
    HarnessVariant,
    compiled_id,
    render_harness_files,
    render_header,
    unit_sources,
)


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


@pytest.mark.parametrize("standard", STANDARDS)
@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("primitive", list(Primitive))
def test_every_primitive_compiles_warning_free_and_delivers(
    tmp_path: Path, compiler: str, primitive: Primitive, standard: str
) -> None:
    """Every primitive, both compilers, every standard a user may build the header under, the
    strict warnings on; use_header.cpp calls every part of the API."""
    if shutil.which(compiler) is None:
        pytest.fail(f"{compiler} is not installed: ./dev setup installs it")
    header = tmp_path / "golden_channel.hpp"
    header.write_text(render_header(spec(primitive, namespace="tuned")), encoding="utf-8")
    exe = tmp_path / "use_header"
    out = _build_and_run(compiler, standard, header, GOLDEN / "use_header.cpp", exe)
    assert out.startswith("ok: 100000 events")


@pytest.mark.parametrize("standard", STANDARDS)
@pytest.mark.parametrize("compiler", COMPILERS)
def test_the_consumer_pool_compiles_warning_free_and_handles_every_event(
    tmp_path: Path, compiler: str, standard: str
) -> None:
    """ConsumerPool from a generated header: every call of its API under both compilers and every
    standard, and a run in which three producers' events are each handled once and in order."""
    if shutil.which(compiler) is None:
        pytest.fail(f"{compiler} is not installed: ./dev setup installs it")
    header = tmp_path / "golden_channel.hpp"
    header.write_text(render_header(spec(namespace="tuned")), encoding="utf-8")
    exe = tmp_path / "use_pool"
    out = _build_and_run(compiler, standard, header, GOLDEN / "use_pool.cpp", exe)
    assert out.startswith("ok: 50000 events from each of 3 producers")


# A lone event: the producer pushes it, never flushes, and goes on with other work that pushes
# now and then (the bound acts inside pushes). Its buffer holds more events than the producer
# will ever push, so without the bound it would show only at close(), after >= 250 ms: 125x the
# 2 ms bound. The consumer must get it within 100x the bound (a noisy machine: no tighter).
LONE_EVENT = r"""
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

#include HSPC_GENERATED_HEADER

namespace ch = HSPC_GENERATED_NAMESPACE;

struct Event {
  std::uint64_t seq;
  std::int64_t pushed_ns;
};

static std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int main() {
  constexpr std::int64_t kBound = static_cast<std::int64_t>(ch::kTuning.max_latency_ns);
  static_assert(kBound > 0, "the header carries a bound");
  static_assert(ch::Channel<Event>::kMaxLatencyNs == ch::kTuning.max_latency_ns, "Channel");
  static_assert(ch::FanOut<Event>::kMaxLatencyNs == ch::kTuning.max_latency_ns, "FanOut");
  constexpr std::uint64_t kMostPushes = 1000;
  static_assert(ch::Channel<Event>::kEventsPerBuffer > kMostPushes, "no buffer fills");
  ch::Channel<Event> channel;
  std::atomic<bool> received{false};
  std::int64_t waited_ns = -1;
  bool ok = true;
  std::thread consumer([&] {
    Event e{};
    if (channel.pop(e)) {
      waited_ns = now_ns() - e.pushed_ns;
      ok = e.seq == 0;
    }
    received.store(true);
    for (std::uint64_t next = 1; channel.pop(e); ++next) ok = ok && e.seq == next;
  });
  channel.push(Event{0, now_ns()});
  for (std::uint64_t seq = 1; !received.load() && seq < kMostPushes; ++seq) {
    std::this_thread::sleep_for(std::chrono::microseconds(250));
    channel.push(Event{seq, now_ns()});
  }
  const bool arrived_before_close = received.load();
  channel.close();
  consumer.join();
  // Arrived while the producer was still pushing, with no buffer full and no flush: the bound
  // handed it over (without one it would come only at close). How long it waited is printed, not
  // asserted: the tuner's paced latency arms measure that.
  ok = ok && waited_ns >= 0 && arrived_before_close;
  std::printf("%s: the lone event waited %lld ns (bound %lld ns)\n", ok ? "ok" : "WRONG",
              static_cast<long long>(waited_ns), static_cast<long long>(kBound));
  return ok ? 0 : 1;
}
"""


def _build_and_run(compiler: str, standard: str, header: Path, source: Path, exe: Path) -> str:
    build = subprocess.run(
        [
            compiler,
            std_flag(compiler, standard),
            "-O2",
            "-pthread",
            *WARNINGS,
            *STRICT[compiler],
            f'-DHSPC_GENERATED_HEADER="{header}"',
            "-DHSPC_GENERATED_NAMESPACE=tuned",
            str(source),
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
    return done.stdout


@pytest.mark.parametrize("standard", STANDARDS)
@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_header_with_a_latency_bound_compiles_and_hands_a_lone_event_over(
    tmp_path: Path, compiler: str, standard: str
) -> None:
    """max_latency_ns reaches kTuning, Channel<T> and FanOut<T>; the bound acts without flush."""
    if shutil.which(compiler) is None:
        pytest.fail(f"{compiler} is not installed: ./dev setup installs it")
    bounded = dataclasses.replace(spec(namespace="tuned"), max_latency_ns=2_000_000)
    text = render_header(bounded)
    assert "/*max_latency_ns=*/2000000," in text and "//     max_latency_ns=2000000" in text
    header = tmp_path / "golden_channel.hpp"
    header.write_text(text, encoding="utf-8")
    source = tmp_path / "lone_event.cpp"
    source.write_text(LONE_EVENT, encoding="utf-8")
    out = _build_and_run(compiler, standard, header, source, tmp_path / "lone_event")
    assert out.startswith("ok: the lone event waited")
    if standard == STANDARDS[0]:
        # Every call of the API, once per compiler, with the code shape's other branches too: the
        # bound, a prefetch, huge pages and pinned threads.
        shaped = bounded.params.replace(
            prefetch_bytes=4096, huge_pages=True, producer_cpu=1, consumer_cpu=0
        )
        header.write_text(render_header(dataclasses.replace(bounded, params=shaped)))
        out = _build_and_run(compiler, standard, header, GOLDEN / "use_header.cpp", tmp_path / "u")
        assert out.startswith("ok: 100000 events")


def test_an_unbounded_header_has_a_zero_bound_and_no_banner_line() -> None:
    text = render_header(spec())
    assert "/*max_latency_ns=*/0," in text
    assert "//     max_latency_ns=" not in text  # the banner names a bound only when there is one
    # Channel, FanOut and ConsumerPool all take every tuned parameter, the bound among them.
    assert text.count("kTuning.spin_ns, kTuning.max_latency_ns,") == 3
    assert text.count("kTuning.prefetch_bytes, kTuning.huge_pages>;") == 2


def test_a_bench_project_carries_the_latency_bound_and_the_paced_kind() -> None:
    variants = (HarnessVariant("ca", ChannelParams(64, 0, 4, 4096, Primitive.futex)),)
    for bound in (0, 1500):
        files = render_harness_files(variants, event_bytes=8, max_latency_ns=bound)
        (unit,) = (text for name, text in files.items() if name.startswith("v_"))
        assert re.search(rf"4, 4096, 64, 2000,\s+{bound}, 0, false>>;", unit), unit
        assert "case hspc_harness::Kind::paced:" in unit
        assert "run_paced<Channel, Launch>" in unit
    assert render_harness_files(variants, 8) == render_harness_files(variants, 8, max_latency_ns=0)
    with pytest.raises(ValueError, match="max_latency_ns"):
        render_harness_files(variants, 8, max_latency_ns=-1)


def test_a_bench_project_has_one_unit_per_compile_time_point() -> None:
    base = ChannelParams(64, 0, 4, 4096, Primitive.futex)
    variants = (
        HarnessVariant("ca", base),
        HarnessVariant("cb", base.replace(producer_cpu=1, consumer_cpu=0)),  # same code, pinned
        HarnessVariant("cc", base.replace(primitive=Primitive.condvar)),
    )
    files = render_harness_files(variants, event_bytes=8)
    assert files == render_harness_files(tuple(reversed(variants)), event_bytes=8)
    units = sorted(name for name in files if name.startswith("v_"))
    assert len(units) == 2
    assert all(f"'{unit}'" in files["meson.build"] for unit in units)
    assert {'{"ca", &run_', '{"cb", &run_', '{"cc", &run_'} <= {
        line.strip()[: len('{"ca", &run_')] for line in files["main.cpp"].splitlines()
    }
    assert "include/hspc/channel.hpp" in files and "include/harness/harness.hpp" in files


def test_points_share_units_and_each_runs_only_the_kinds_asked() -> None:
    base = ChannelParams(64, 0, 4, 4096, Primitive.futex)
    variants = tuple(
        HarnessVariant(f"c{n}", base.replace(buffers=n)) for n in (2, 3, 4, 8, 16, 32, 64)
    )
    files = render_harness_files(variants, 8, points_per_unit=3, kinds=("throughput",))
    units = {name: text for name, text in files.items() if name.startswith("v_")}
    assert len(units) == 3  # 3 + 3 + 1 points
    assert sorted(unit_sources(variants, 3).values()).count("v_" + compiled_id(variants[0])) <= 1
    for variant in variants:  # every point is defined in exactly one unit, and only there
        defined = f"hspc_harness::Sample run_{compiled_id(variant)}(hspc_harness::Kind kind"
        assert sum(defined in text for text in units.values()) == 1
    for text in units.values():
        assert "case hspc_harness::Kind::throughput:" in text
        assert "Kind::fanout" not in text and "Kind::paced" not in text
    assert all(f"'{name}'" in files["meson.build"] for name in units)
    assert files == render_harness_files(
        tuple(reversed(variants)), 8, points_per_unit=3, kinds=("throughput",)
    )
    with pytest.raises(ValueError, match="points_per_unit"):
        unit_sources(variants, 0)


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
