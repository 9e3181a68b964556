"""hspc_gen.adaptive and threads.consumers: adaptive end to end: the pool's parameters from a
run's figures (a search replayed over the simulated toolchain, no compiler), written into the
header, the summary and hspc-result.json, and `hspc-gen threads`' for its recommendation; and
through the real command line, a header whose ConsumerPool runs with them, compiled and read back
by a small program, and the report page that states them as the summary does."""

from __future__ import annotations

import dataclasses
import html
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from command import SYSFS
from headers import STRICT, WARNINGS, spec, std_flag
from hspc_gen import pipeline
from hspc_gen.adaptive import estimated_pool, with_pool
from hspc_gen.emit.header import HeaderWriter
from hspc_gen.files import json_text
from hspc_gen.host.machine import read_host
from hspc_gen.model import Figure, HostTimings, Status
from hspc_gen.model.pool import PoolTuning
from hspc_gen.model.result import TuneResult
from hspc_gen.model.threads import ThreadAdvice, ThreadFailure
from hspc_gen.pipeline import ThreadsOptions, _pool_for_threads
from hspc_gen.render import render_header
from hspc_gen.reports import result as result_report
from hspc_gen.reports import summary as summary_report
from hspc_gen.reports import threads as threads_report
from hspc_gen.search import api as search_api
from hspc_gen.search.measure import calibrate
from hspc_gen.search.records.entries import CalibrationRecord
from hspc_gen.target.app import Target, load_target
from hspc_gen.wiring import record_store
from recorded_curves import recorded_curves
from target_files import write
from thread_searches import session_advice
from tuned_runs import COMMAND, tuned

REPO = Path(__file__).resolve().parents[2]
HOST = read_host(SYSFS / "epyc-2c-vm" / "sys")
ESTIMATED = ThreadAdvice(1, 1, 1, (-1,), (-1,), pinned=False)
TIMINGS = HostTimings(
    wake_ns=Figure(24_000, 22_000, 26_000, 9), switch_ns=Figure(2_100, 2e3, 2.2e3, 9)
)
ADAPTIVE = (
    "name: t\nevent:\n  size: 64\nworkload:\n  consumer_ns: 120\nthreads:\n  consumers: adaptive\n"
)


def target(tmp_path: Path, text: str = ADAPTIVE) -> Target:
    return load_target(write(tmp_path, text))


def measured(tmp_path: Path) -> TuneResult:
    """A run's result whose search and confirmation ran over the simulated toolchain."""
    return tuned(tmp_path, "never")[1]


def header_values(header: str) -> dict[str, int]:
    """kPoolTuning's assignments, read back from the header's text."""
    after = header.split("inline constexpr PoolOptions kPoolTuning = [] {", 1)[1]
    block = after.split("}();", 1)[0]
    pairs = (line.strip().removeprefix("options.").rstrip(";") for line in block.splitlines())
    return {name: int(value) for name, _, value in (p.partition(" = ") for p in pairs if "=" in p)}


def test_without_the_switch_nothing_is_chosen_and_nothing_changes(tmp_path: Path) -> None:
    plain = target(tmp_path, ADAPTIVE.replace("adaptive", "auto"))
    result = measured(tmp_path)
    assert with_pool(result, plain, HOST, ESTIMATED, TIMINGS) is result
    assert estimated_pool(plain, HOST, 4096, ESTIMATED, TIMINGS) is None
    assert "pool" not in result_report.document(result)
    assert "Pool" not in summary_report.render(result)


def test_a_replayed_run_chooses_from_its_confirmed_pace_margin_and_wake_up(tmp_path: Path) -> None:
    result = with_pool(measured(tmp_path), target(tmp_path), HOST, ESTIMATED, TIMINGS)
    pool, search = result.pool, result.search
    assert pool is not None and search is not None and search.confirmed is not None
    assert search.confirmed.rate is not None
    margin = search.confirmed.decision.margin
    assert pool.basis == "partly measured"  # the thread advice is the estimate's here
    assert "the confirmed channel's time per event" in pool.interval_ns.why
    events = result.winner.buffer_bytes // 64
    assert "the confirmation's decision margin" in pool.grow_wait_ns.why
    assert "24000 ns, the futex wake-up measured on this host" in pool.grow_wait_ns.why
    # No thread search measured the consumer alone: the channel's pace bounds its handling.
    pace_ns = 1e9 / search.confirmed.rate.median
    expected = (24_000 + events * pace_ns) * (1 + margin)
    assert pool.grow_wait_ns.value == pytest.approx(expected, abs=1)
    assert f"{events} events of" in pool.grow_wait_ns.why


def test_the_header_summary_and_json_carry_the_same_values_and_reasons(tmp_path: Path) -> None:
    result = with_pool(measured(tmp_path), target(tmp_path), HOST, ESTIMATED, TIMINGS)
    assert result.pool is not None
    chosen = {name: choice.value for name, choice in result.pool.choices()}
    writer = HeaderWriter(tmp_path / "t_channel.hpp", target(tmp_path), HOST, COMMAND, ESTIMATED)
    writer.write_result(result)
    header = writer.path.read_text(encoding="utf-8")
    assert header_values(header) == chosen
    assert "PoolOptions options = kPoolTuning)" in header
    banner = header.split("#pragma once")[0]
    assert "//   pool (threads.consumers: adaptive; partly measured" in banner
    assert all(f"//     {name}={value}\n" in banner for name, value in chosen.items())
    document = json.loads(json.dumps(result_report.document(result)))
    assert document["pool"]["basis"] == "partly measured"
    options = document["pool"]["options"]
    assert {name: o["value"] for name, o in options.items()} == chosen
    assert options["grow_wait_ns"]["why"] == result.pool.grow_wait_ns.why
    summary = summary_report.render(result)
    assert (
        "Pool (threads.consumers: adaptive; partly measured): the header's kPoolTuning" in summary
    )
    for name, choice in result.pool.choices():
        assert f"| {name} | {choice.value} | {choice.why} |" in summary


def test_a_thread_search_on_a_recorded_curve_makes_every_value_measured(tmp_path: Path) -> None:
    """The thread search as a run takes it (its calls recorded, replayed on a curve recorded on
    a real 2-CPU host whose consumers block): the pool starts at its answer, may grow to the
    most consumers it measured as good as the best, and handles at its measured consumer cost."""
    curve = next(c for c in recorded_curves() if c.name == "2cpu-vm-report")
    advice, _ = session_advice(curve.shape(), curve, 1, 0.03, path="main")
    assert advice.evidence is not None and advice.work_ns is not None
    result = dataclasses.replace(measured(tmp_path), threads=advice)
    pool = with_pool(result, target(tmp_path), HOST, ESTIMATED, TIMINGS).pool
    assert pool is not None and pool.basis == "measured"
    assert pool.start_consumers.value == advice.consumers
    most = max(p.consumers for p in advice.evidence.equally_good)
    assert pool.max_consumers.value == max(most, advice.consumers) > 2
    assert f"{advice.work_ns[1]:.3g} ns, the consumer's CPU time per event, measured" in (
        pool.grow_wait_ns.why
    )


def test_a_failed_thread_search_leaves_the_pool_on_the_estimated_advice(tmp_path: Path) -> None:
    failure = ThreadFailure(Status.crashed, "the thread benchmark crashed")
    failed = dataclasses.replace(measured(tmp_path), threads=failure)
    pool = with_pool(failed, target(tmp_path), HOST, ESTIMATED, None).pool
    assert pool is not None
    assert pool.start_consumers.value == ESTIMATED.consumers
    assert "the estimate's 1 consumer(s)" in pool.start_consumers.why
    assert "the default spin budget's, not measured" in pool.grow_wait_ns.why


def test_the_estimate_says_every_value_rests_on_stand_ins(tmp_path: Path) -> None:
    pool = estimated_pool(target(tmp_path), HOST, 4096, ESTIMATED, None)
    assert pool is not None and pool.basis == "estimated, nothing measured"
    assert "64 events of 120 ns, app.yaml's consumer_ns, not measured" in pool.grow_wait_ns.why
    assert "the tuner's floor, nothing decided" in pool.grow_wait_ns.why
    assert "app.yaml's work per event, the slower side's, not measured" in pool.interval_ns.why


WAKE = CalibrationRecord(calibrate.key(HOST.fingerprint), (24_000.0,) * 9, (2e3,) * 9, False)
"""The host's wait costs as a store holds them: a futex wake-up of 24 us."""


def recorded_advice() -> ThreadAdvice:
    """The thread search's answer on a curve recorded on a real 2-CPU host whose consumers
    block, as a run takes it."""
    curve = next(c for c in recorded_curves() if c.name == "2cpu-vm-report")
    return session_advice(curve.shape(), curve, 1, 0.03, path="main")[0]


def shown_by_threads(
    tmp_path: Path,
    result: TuneResult,
    advice: ThreadAdvice | ThreadFailure,
    *,
    text: str = ADAPTIVE,
    from_result: bool = True,
) -> PoolTuning | None:
    """`hspc-gen threads`' pool for `advice` and `result`'s channel, --from `result` (written as
    its hspc-result.json) or not, the store holding the host's wake-up (WAKE)."""
    store = record_store(HOST, tmp_path / "cache")
    store.append(WAKE)
    saved = tmp_path / "hspc-result.json"
    saved.write_text(json_text(result_report.document(result)), encoding="utf-8")
    given = saved if from_result else None
    options = ThreadsOptions(tmp_path / "app.yaml", result=given, cache=tmp_path / "cache")
    chosen = target(tmp_path, text)
    return _pool_for_threads(chosen, HOST, result.winner, advice, options=options, store=store)


def test_threads_shows_the_pool_a_run_chooses_for_its_recommendation(tmp_path: Path) -> None:
    """`hspc-gen threads --from RESULT.json` on an adaptive target: kPoolTuning for its
    recommendation, on the result's confirmed pace and margin (read back from the file) and the
    wake-up the host's records hold, as a run with that recommendation chooses it."""
    advice = recorded_advice()
    result = dataclasses.replace(measured(tmp_path), threads=advice)
    ran = with_pool(result, target(tmp_path), HOST, ESTIMATED, calibrate.timings_of(WAKE)).pool
    shown = shown_by_threads(tmp_path, result, advice)
    assert shown is not None and ran is not None and shown.basis == ran.basis == "measured"
    for (name, choice), (_, chosen) in zip(shown.choices(), ran.choices(), strict=True):
        assert choice.value == pytest.approx(chosen.value, abs=1), name  # the file keeps 6 digits
    assert shown.start_consumers == ran.start_consumers
    assert shown.max_consumers == ran.max_consumers
    assert "24000 ns, the futex wake-up measured on this host" in shown.grow_wait_ns.why
    assert "the confirmation's decision margin" in shown.grow_wait_ns.why


def test_threads_without_a_result_says_its_margin_is_the_floor(tmp_path: Path) -> None:
    """Without --from, nothing was confirmed: the margin is the tuner's floor, said so; without
    the switch, or without a recommendation, there is no pool to show."""
    advice = recorded_advice()
    result = dataclasses.replace(measured(tmp_path), threads=advice)
    floor = shown_by_threads(tmp_path, result, advice, from_result=False)
    assert floor is not None and floor.basis == "partly measured"
    assert "the tuner's floor, nothing decided" in floor.grow_wait_ns.why
    plain = ADAPTIVE.replace("adaptive", "auto")
    assert shown_by_threads(tmp_path, result, advice, text=plain) is None
    failure = ThreadFailure(Status.crashed, "the thread benchmark crashed")
    assert shown_by_threads(tmp_path, result, failure) is None


def test_the_threads_command_prints_and_writes_the_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`hspc-gen threads` as the command line runs it, its thread search answered by the
    recorded one (nothing built or measured): the text and hspc-threads.json carry the pool."""
    advice = recorded_advice()
    monkeypatch.setattr(search_api, "recommend_threads", lambda *_: advice)
    out, app = tmp_path / "out", write(tmp_path, ADAPTIVE)
    report = pipeline.threads(ThreadsOptions(app, out=out, cache=tmp_path / "cache"))
    assert report.pool is not None and report.pool.basis == "partly measured"  # no --from
    assert report.pool.start_consumers.value == advice.consumers
    written = json.loads((out / "hspc-threads.json").read_text(encoding="utf-8"))
    assert written["pool"]["options"] == {
        name: {"value": choice.value, "why": choice.why} for name, choice in report.pool.choices()
    }
    text = threads_report.render(report)
    assert "Pool (threads.consumers: adaptive; partly measured): kPoolTuning for this" in text
    assert all(f"| {name} | {c.value} | {c.why} |" in text for name, c in report.pool.choices())


# ---- through the real command line, and a program built on the header ----

READ_BACK = r"""
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>

#include HSPC_GENERATED_HEADER

namespace ch = HSPC_GENERATED_NAMESPACE;

struct Event {
  std::uint64_t seq;
};

int main() {
  std::atomic<std::uint64_t> handled{0};
  ch::ConsumerPool<Event> pool(2, [&](const Event&) { handled.fetch_add(1); });
  const ch::PoolOptions& o = pool.options();  // the defaults it was given: kPoolTuning's
  const ch::PoolOptions& k = ch::kPoolTuning;
  bool ok = o.min_consumers == k.min_consumers && o.max_consumers == k.max_consumers &&
            o.start_consumers == k.start_consumers && o.interval_ns == k.interval_ns &&
            o.grow_wait_ns == k.grow_wait_ns && o.grow_intervals == k.grow_intervals &&
            o.adaptive && o.ordered;
  // Fields hspc-gen leaves alone keep PoolOptions' defaults.
  ok = ok && k.shrink_intervals == ch::PoolOptions{}.shrink_intervals &&
       k.cpu_busy_max == ch::PoolOptions{}.cpu_busy_max && k.seed == ch::PoolOptions{}.seed;
  ch::ConsumerPool<Event> given(1, [](const Event&) {}, ch::PoolOptions{1, 1, true});
  ok = ok && given.options().max_consumers == 1 &&
       given.options().interval_ns == ch::PoolOptions{}.interval_ns;
  given.producer(0).close();
  given.wait();
  std::thread a([&] {
    for (std::uint64_t i = 0; i < 1000; ++i) pool.producer(0).push(Event{i});
    pool.producer(0).close();
  });
  for (std::uint64_t i = 0; i < 1000; ++i) pool.producer(1).push(Event{i});
  pool.producer(1).close();
  a.join();
  pool.wait();
  ok = ok && handled.load() == 2000;
  std::printf("min_consumers=%zu\nmax_consumers=%zu\nstart_consumers=%zu\n", o.min_consumers,
              o.max_consumers, o.start_consumers);
  std::printf("interval_ns=%llu\ngrow_wait_ns=%llu\ngrow_intervals=%u\n",
              static_cast<unsigned long long>(o.interval_ns),
              static_cast<unsigned long long>(o.grow_wait_ns), o.grow_intervals);
  std::printf("%s\n", ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
"""


def hspc_gen(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "hspc_gen", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)


@pytest.fixture(scope="module")
def estimated_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`hspc-gen --effort estimate` on an adaptive app.yaml, its outputs in the folder returned."""
    folder = tmp_path_factory.mktemp("adaptive")
    app = write(folder, ADAPTIVE.replace("name: t", "name: tuned"))
    done = hspc_gen("--target", app, "--effort", "estimate", "--out", folder / "out",
                    "--cache", folder / "cache")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Pool (threads.consumers: adaptive; " in done.stdout
    return folder / "out"


def test_a_bad_switch_is_one_message_and_exit_2_from_the_command_line(tmp_path: Path) -> None:
    app = write(tmp_path, ADAPTIVE.replace("consumers: adaptive", "producers: adaptive"))
    done = hspc_gen("--target", app, "--effort", "estimate", "--out", tmp_path / "out")
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.count("hspc-gen: error: ") == 1
    assert "threads.producers: 'adaptive' is for threads.consumers only" in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("standard", ["c++17", "c++23"])
@pytest.mark.parametrize("compiler", ["g++", "clang++"])
def test_the_written_headers_pool_runs_with_kpooltuning(
    tmp_path: Path, estimated_run: Path, compiler: str, standard: str
) -> None:
    if shutil.which(compiler) is None:
        pytest.fail(f"{compiler} is not installed: ./dev setup installs it")
    header = estimated_run / "tuned_channel.hpp"
    source = tmp_path / "read_back.cpp"
    source.write_text(READ_BACK, encoding="utf-8")
    build = subprocess.run(
        [compiler, std_flag(compiler, standard), "-O1", "-pthread", *WARNINGS, *STRICT[compiler],
         f'-DHSPC_GENERATED_HEADER="{header}"', "-DHSPC_GENERATED_NAMESPACE=tuned",
         str(source), "-o", str(tmp_path / "read_back")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert build.returncode == 0 and build.stderr == "", build.stderr
    run = [str(tmp_path / "read_back")]
    done = subprocess.run(run, capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    *lines, verdict = done.stdout.splitlines()
    assert verdict == "ok"
    ran = {name: int(value) for name, _, value in (line.partition("=") for line in lines)}
    document = json.loads((estimated_run / "hspc-result.json").read_text(encoding="utf-8"))
    assert ran == {name: o["value"] for name, o in document["pool"]["options"].items()}
    assert ran == header_values(header.read_text(encoding="utf-8"))


def test_the_estimated_runs_page_states_the_pool_as_its_summary_does(estimated_run: Path) -> None:
    """The report page the command line wrote beside the header: kPoolTuning's fields, values
    and reasons, in the summary's words, the estimate's stand-ins said to be so."""
    page = (estimated_run / "hspc-report.html").read_text(encoding="utf-8")
    summary = (estimated_run / "hspc-summary.md").read_text(encoding="utf-8").splitlines()
    document = json.loads((estimated_run / "hspc-result.json").read_text(encoding="utf-8"))
    assert document["pool"]["basis"] == "estimated, nothing measured"
    heading = next(line for line in summary if line.startswith("Pool ("))
    assert heading.startswith("Pool (threads.consumers: adaptive; estimated, nothing measured)")
    assert f'<section id="pool"><p>{html.escape(heading)}</p>' in page
    for name, option in document["pool"]["options"].items():
        assert f"| {name} | {option['value']} | {option['why']} |" in summary
        cells = f"<td>{name}</td><td>{option['value']}</td><td>{html.escape(option['why'])}</td>"
        assert cells in page, name
    assert "not measured" in document["pool"]["options"]["grow_wait_ns"]["why"]


def test_an_adaptive_header_is_clang_format_clean(tmp_path: Path) -> None:
    """The golden header's spec with a pool (the command line's banner would hold tmp paths
    longer than a line)."""
    pool = estimated_pool(target(tmp_path), HOST, 4096, ESTIMATED, TIMINGS)
    header = tmp_path / "golden_channel.hpp"
    header.write_text(render_header(dataclasses.replace(spec(), pool=pool)), encoding="utf-8")
    done = subprocess.run(
        ["clang-format", f"--style=file:{REPO / '.clang-format'}", "--dry-run", "--Werror",
         str(header)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[:3000]
