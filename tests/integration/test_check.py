"""`hspc-gen check` on a header the estimate wrote for this host: it matches here, and names each
difference for a recorded other host, another hspc-gen, compiler or kernel; a file it cannot
read a record from gets one message and exit 2. The header's own run-time check, compiled with
g++, agrees with the tuner about this host and names what differs for another; both readers of
cpuinfo agree on the recorded texts of tests/data/cpuinfo."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from command import SYSFS, assert_one_clear_error, hspc_gen
from hspc_gen import __version__
from hspc_gen.emit.check import differences, model_name_matches
from hspc_gen.emit.provenance import TunedOn, initializer_lines, tuned_on
from hspc_gen.host.machine import read_host
from hspc_gen.host.sysfs import read_cpuinfo

CPUINFO = Path(__file__).resolve().parents[1] / "data" / "cpuinfo"
OTHER_HOST = SYSFS / "2s-8c-2t" / "sys"
RECORD = re.compile(r"(inline constexpr TunedHost kTunedOn = \{\n)(.*?)(\n\};)", re.DOTALL)


@pytest.fixture(scope="module")
def header(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A header the estimate wrote for this host (nothing measured)."""
    folder = tmp_path_factory.mktemp("estimate")
    (folder / "app.yaml").write_text("name: small\nevent:\n  size: 8\n")
    done = hspc_gen("--target", "app.yaml", "--effort", "estimate", "--out", "o", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / "o" / "small_channel.hpp"


def with_record(header: Path, record: TunedOn, to: Path) -> Path:
    """A copy of `header` whose kTunedOn is `record`, as hspc-gen would have written it."""
    lines = "\n".join(initializer_lines(record))
    text, count = RECORD.subn(lambda m: m.group(1) + lines + m.group(3), header.read_text())
    assert count == 1
    to.write_text(text)
    return to


def test_a_header_written_here_matches_here_and_an_estimates_says_so(
    header: Path, tmp_path: Path
) -> None:
    """The estimate's header matches this host, and says it holds the estimate; the same
    header with a measured banner is "tuned" here."""
    done = hspc_gen("check", header)
    assert done.returncode == 0, done.stdout + done.stderr
    live = read_host()
    here = (
        f"on this host ('{live.model_name}; {len(live.logical_cpus)} CPU(s)', "
        f"fingerprint {live.fingerprint}) with hspc-gen {__version__} and '{live.compiler}'\n"
    )
    assert done.stdout == (
        f"{header}: written {here}"
        "its parameters are the estimate's, nothing measured: run hspc-gen to tune it\n"
    )
    document = json.loads(hspc_gen("check", header, "--json").stdout)
    assert document["matches"] is True and document["differences"] == []
    assert document["measured"] is False
    tuned = tmp_path / "tuned.hpp"
    text = header.read_text()
    banner = "//   measured:\n//     throughput: 2.39e+07 events/s\n"
    tuned.write_text(re.sub(r"//   measured:\n//     nothing[^\n]*\n", banner, text, count=1))
    assert hspc_gen("check", tuned).stdout == f"{tuned}: tuned {here}"
    assert json.loads(hspc_gen("check", tuned, "--json").stdout)["measured"] is True
    assert document["tuned_on"] == document["this_host"] == tuned_on(live).to_json()


def test_another_host_is_named_with_both_fingerprints(header: Path) -> None:
    done = hspc_gen("check", header, "--sysfs-root", OTHER_HOST)
    assert done.returncode == 1, done.stderr
    live, other = read_host(), read_host(OTHER_HOST)
    host = (
        f"  host: tuned on '{live.model_name}; {len(live.logical_cpus)} CPU(s)' (fingerprint "
        f"{live.fingerprint}), this host is 'Intel(R) Xeon(R) Silver 4110 CPU @ 2.10GHz; 32 "
        f"CPU(s)' (fingerprint {other.fingerprint}): the CPU model and the number of online "
        "CPUs differ"
    )
    kernel = f"  kernel: tuned on '{live.kernel}', this host runs 'recorded'"
    assert done.stdout.splitlines()[2:] == [kernel, host]
    assert "re-run hspc-gen on this host" in done.stdout.splitlines()[0]
    document = json.loads(hspc_gen("check", header, "--json", "--sysfs-root", OTHER_HOST).stdout)
    assert document["matches"] is False
    assert [d["what"] for d in document["differences"]] == ["kernel", "host"]
    assert document["this_host"]["logical_cpus"] == 32


def test_another_hspc_gen_and_another_compiler_are_named(header: Path, tmp_path: Path) -> None:
    live = read_host()
    older = dataclasses.replace(tuned_on(live), hspc_gen_version="0.0.9")
    done = hspc_gen("check", with_record(header, older, tmp_path / "older.hpp"))
    assert done.returncode == 1
    assert done.stdout.splitlines()[2:] == [f"  hspc-gen: tuned with 0.0.9, this is {__version__}"]
    # Tuned here with another compiler: the fingerprint covers the compiler too.
    clang = dataclasses.replace(live, compiler="clang version 99.0.0")
    other = dataclasses.replace(
        tuned_on(live), compiler=clang.compiler, fingerprint=clang.fingerprint
    )
    done = hspc_gen("check", with_record(header, other, tmp_path / "clang.hpp"))
    assert done.returncode == 1
    assert done.stdout.splitlines()[2:] == [
        f"  compiler: tuned with 'clang version 99.0.0', this host has '{live.compiler}'"
    ]


def test_a_host_that_differs_in_its_kernel_only_is_not_called_another_host() -> None:
    host = read_host(OTHER_HOST)
    older = dataclasses.replace(host, kernel="5.10.0-old")
    record = tuned_on(older)
    found = differences(record, host)
    assert [d.line for d in found] == ["kernel: tuned on '5.10.0-old', this host runs 'recorded'"]
    assert record.fingerprint != host.fingerprint


def test_the_same_model_and_count_with_other_caches_says_so() -> None:
    """Not another host as the header's own check sees one (it compares the model and count),
    but another machine behind them: named as a topology of its own."""
    host = read_host(OTHER_HOST)
    other = dataclasses.replace(host, caches=host.caches[1:])
    record = tuned_on(other)
    (found,) = differences(record, host)
    assert found.line == (
        "topology: tuned on 'Intel(R) Xeon(R) Silver 4110 CPU @ 2.10GHz; 32 CPU(s)' too, with "
        f"another topology or other caches (fingerprint {other.fingerprint}, this host's "
        f"{host.fingerprint})"
    )
    # Tuned there on another kernel as well: the kernel is named, the caches still differ.
    older = tuned_on(dataclasses.replace(other, kernel="5.10.0-old"))
    assert [d.what for d in differences(older, host)] == ["kernel", "topology"]


def test_a_record_whose_model_or_count_was_edited_names_the_field_not_a_fingerprint() -> None:
    """Issue 24: the fingerprint covers the model and the CPUs, so an edited record keeps this
    host's fingerprint; it is not printed on both sides as if it told the two apart."""
    host = read_host(OTHER_HOST)
    record = dataclasses.replace(tuned_on(host), logical_cpus=4)
    (found,) = differences(record, host)
    assert found.line == (
        "host: tuned on 'Intel(R) Xeon(R) Silver 4110 CPU @ 2.10GHz; 4 CPU(s)', this host is "
        f"'Intel(R) Xeon(R) Silver 4110 CPU @ 2.10GHz; 32 CPU(s)' (the fingerprint "
        f"{host.fingerprint} on both, so the record was edited): the number of online CPUs differs"
    )
    renamed = dataclasses.replace(record, model_name="Edited", logical_cpus=32)
    assert differences(renamed, host)[0].text.endswith(": the CPU model differs")


@pytest.mark.parametrize(
    ("tuned", "this_host", "same"),
    [
        ("AMD EPYC 7B13", "AMD EPYC 7B13", True),
        ("AMD EPYC 7B13 ", "AMD EPYC 7B13", False),
        ("AMD EPYC 7B13\0 edited", "AMD EPYC 7B13", True),  # strcmp stops at the NUL
        ("x" * 255, "x" * 300, True),  # the header cuts this host's name to 255 bytes
        ("x" * 300, "x" * 300, False),  # and then never matches a longer record
        ("Ärger", "Ärger", True),
    ],
)
def test_the_model_name_is_compared_as_the_header_compares_it(
    tuned: str, this_host: str, same: bool
) -> None:
    assert model_name_matches(tuned, this_host) is same


def _cut(text: str, before: str) -> str:
    return text[: text.index(before)]


BAD: dict[str, tuple[Callable[[str], str | None], str]] = {
    "missing": (lambda text: None, "no such file"),
    "a folder": (lambda text: "folder", "is a folder, not a header"),
    "not a header": (lambda text: "name: small\n", "not a header hspc-gen wrote"),
    "binary": (lambda text: "\udcff\udcfe", "not UTF-8 text"),
    "empty": (lambda text: "", "not a header hspc-gen wrote"),
    "cut in the runtime": (lambda text: _cut(text, "class BasicChannel"), "cut short"),
    "cut in its record": (lambda text: _cut(text, "/*kernel=*/"), "cut short"),
    "cut before the namespace closes": (lambda text: _cut(text, "}  // namespace small"), "cut"),
    "a damaged record": (
        lambda text: re.sub(r'/\*fingerprint=\*/"\w+"', '/*fingerprint=*/"edited"', text),
        "damaged: kTunedOn's fingerprint 'edited' is not 16 hex digits",
    ),
    "no record (an older hspc-gen)": (
        lambda text: RECORD.sub("", text),
        "has no record of its tuning host (kTunedOn)",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_file_without_a_readable_record_gets_one_message_and_exit_2(
    header: Path, tmp_path: Path, case: str
) -> None:
    make, expected = BAD[case]
    path = tmp_path / "bad.hpp"
    content = make(header.read_text())
    if content == "folder":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content.encode("utf-8", "surrogateescape"))
    done = hspc_gen("check", path)
    assert_one_clear_error(done, str(path), expected)
    assert len(done.stderr.splitlines()) == 1


def test_check_takes_one_header() -> None:
    assert_one_clear_error(hspc_gen("check"), "the following arguments are required: HEADER")


def _cpuinfo_table() -> list[tuple[str, str]]:
    rows = (CPUINFO / "expected.tsv").read_text(encoding="utf-8").splitlines()
    return [(row.split("\t")[0], row.split("\t")[1]) for row in rows if not row.startswith("#")]


@pytest.mark.parametrize(("name", "model"), _cpuinfo_table())
def test_the_tuner_reads_the_model_name_as_the_header_does(name: str, model: str) -> None:
    """tests/cpp/host_check.cpp reads the same table with the header's reader."""
    assert read_cpuinfo(CPUINFO / name).model_name == model


USE_CHECK = r"""
#include <cstdio>

#include HSPC_GENERATED_HEADER

int main() {
  const auto match = small::tuned_host_matches();
  std::printf("%d|%s|%d|%s\n", static_cast<bool>(match) ? 1 : 0, match.model_name,
              match.logical_cpus, match.reason);
  return 0;
}
"""


def _run_check(header: Path, folder: Path) -> list[str]:
    source = folder / "use_check.cpp"
    source.write_text(USE_CHECK)
    exe = folder / "use_check"
    build = subprocess.run(
        ["g++", "-std=c++17", "-O2", "-pthread", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
         f'-DHSPC_GENERATED_HEADER="{header}"', str(source), "-o", str(exe)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert build.returncode == 0 and build.stderr == "", build.stderr
    done = subprocess.run([str(exe)], capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.rstrip("\n").split("|")


@pytest.mark.slow
def test_the_headers_own_check_matches_on_this_host_and_not_on_another(
    header: Path, tmp_path: Path
) -> None:
    live = read_host()
    assert _run_check(header, tmp_path) == ["1", live.model_name, str(len(live.logical_cpus)), ""]
    other = with_record(header, tuned_on(read_host(OTHER_HOST)), tmp_path / "other.hpp")
    matched, model, cpus, reason = _run_check(other, tmp_path)
    assert (matched, model, cpus) == ("0", live.model_name, str(len(live.logical_cpus)))
    assert reason == "the CPU model and the number of online CPUs differ from the tuning host's"


EDITS: dict[str, tuple[Callable[[TunedOn], TunedOn], list[str]]] = {
    "hspc_gen_version": (lambda r: dataclasses.replace(r, hspc_gen_version="0.0.9"), ["hspc-gen"]),
    "fingerprint": (lambda r: dataclasses.replace(r, fingerprint="0123456789abcdef"), ["topology"]),
    "compiler": (lambda r: dataclasses.replace(r, compiler="clang version 99.0.0"), ["compiler"]),
    "kernel": (lambda r: dataclasses.replace(r, kernel="9.9.9-edited"), ["kernel"]),
    "model_name": (lambda r: dataclasses.replace(r, model_name="Edited CPU @ 9.99GHz"), ["host"]),
    "model_name, a space added": (
        lambda r: dataclasses.replace(r, model_name=r.model_name + " "),
        ["host"],
    ),
    "logical_cpus": (lambda r: dataclasses.replace(r, logical_cpus=r.logical_cpus + 1), ["host"]),
    "model_name and logical_cpus": (
        lambda r: dataclasses.replace(r, model_name="Edited", logical_cpus=r.logical_cpus * 4),
        ["host"],
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("field", sorted(EDITS))
def test_check_and_the_headers_own_check_agree_on_every_edited_field(
    header: Path, tmp_path: Path, field: str
) -> None:
    """Issue 24: an edited model name or CPU count left `hspc-gen check` at exit 0 while the
    header's tuned_host_matches() said another host, and an edited kernel or compiler was called
    another host with one fingerprint on both sides. Each field of kTunedOn edited in a header
    the estimate wrote: check names that field, says "another host" exactly when the header's
    own check finds one, and never shows one fingerprint as two hosts'."""
    edit, expected = EDITS[field]
    edited = with_record(header, edit(tuned_on(read_host())), tmp_path / "edited.hpp")
    done = hspc_gen("check", edited)
    assert done.returncode == 1, done.stdout + done.stderr
    document = json.loads(hspc_gen("check", edited, "--json").stdout)
    whats = [d["what"] for d in document["differences"]]
    assert whats == expected
    matched = _run_check(edited, tmp_path)[0] == "1"
    said_elsewhere = "tuned on another host;" in done.stdout.splitlines()[0]
    assert said_elsewhere is ("host" in whats) is (not matched)
    for line in done.stdout.splitlines()[2:]:
        prints = re.findall(r"\b[0-9a-f]{16}\b", line)
        assert len(prints) == len(set(prints)), line
