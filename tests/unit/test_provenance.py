"""kTunedOn, the header's record of its tuning host: written clang-format clean whatever the
strings hold, read back exactly, read back after a re-formatting, and refused, saying why, when
damaged; its fields in the C++ struct's order."""

from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path

import pytest

from headers import spec
from hspc_gen.emit.provenance import (
    COLUMNS,
    DamagedError,
    TunedOn,
    initializer_lines,
    parse_tuned_on,
    tuned_on,
)
from hspc_gen.host.machine import read_host
from hspc_gen.render import HeaderSpec, render_header

REPO = Path(__file__).resolve().parents[2]
SYSFS = REPO / "tests" / "data" / "sysfs"
RECORD = TunedOn(
    hspc_gen_version="0.1.0",
    fingerprint="0123456789abcdef",
    compiler="g++ (Debian 12.2.0-14) 12.2.0",
    kernel="6.1.0-18-amd64",
    model_name="AMD EPYC 7B13 64-Core Processor",
    logical_cpus=2,
)
AWKWARD = {
    "quotes and backslashes": 'a "quoted" C:\\path\\',
    "trigraph-like": "what??=",
    "not ASCII": "Zhaoxin® KaiXian™ KX-6000 — 3,0 GHz",
    "a control character": "tab\there",
    "an octal-looking tail after a byte": "é0123",
    "long": "clang version 18.1.8 (https://github.com/llvm/llvm-project.git "
    "3b5b5c1ec4a3095ab096dd780e84d7ab81f3d7ff) " + "x" * 150,
    "long with escapes at every piece's edge": "\\" * 130 + "é" * 40,
    "empty": "",
}


def block(record: TunedOn) -> str:
    return (
        "inline constexpr TunedHost kTunedOn = {\n"
        + "\n".join(initializer_lines(record))
        + "\n};\n"
    )


def test_the_live_hosts_record_reads_back_as_written() -> None:
    record = tuned_on(read_host())
    assert parse_tuned_on(block(record)) == record
    assert record.logical_cpus == len(read_host().logical_cpus)


@pytest.mark.parametrize("case", sorted(AWKWARD))
def test_any_string_reads_back_and_the_record_stays_clang_format_clean(
    tmp_path: Path, case: str
) -> None:
    """The record's own lines (the banner above, which people read, is not this test's)."""
    record = dataclasses.replace(RECORD, compiler=AWKWARD[case], model_name=AWKWARD[case])
    lines = initializer_lines(record)
    assert all(len(line) <= COLUMNS for line in lines)
    assert parse_tuned_on(block(record)) == record
    header = tmp_path / "tuned_channel.hpp"
    text = render_header(_spec(record))
    header.write_text(text, encoding="utf-8")
    first = text[: text.index("inline constexpr TunedHost kTunedOn")].count("\n") + 1
    done = subprocess.run(
        ["clang-format", f"--style=file:{REPO / '.clang-format'}", "--dry-run", "--Werror",
         f"--lines={first}:{first + len(lines) + 1}", str(header)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[:2000]
    assert parse_tuned_on(header.read_text(encoding="utf-8")) == record


def _spec(record: TunedOn) -> HeaderSpec:
    """The golden header's spec, with this record."""
    provenance = dataclasses.replace(spec().provenance, tuned_on=record)
    return dataclasses.replace(spec(), provenance=provenance)


def test_a_reformatted_record_reads_back_the_same() -> None:
    one_line = (
        'inline constexpr TunedHost kTunedOn{ /* hspc_gen_version = */ "0.1.0", '
        '/*fingerprint=*/"0123" "456789abcdef",/*compiler=*/"g++ (Debian " '
        '"12.2.0-14) 12.2.0", /*kernel=*/\n\t"6.1.0-18-amd64", /*model_name=*/"AMD EPYC 7B13 '
        '64-Core Processor", /*logical_cpus=*/ 2 };'
    )
    assert parse_tuned_on(one_line) == RECORD


DAMAGED = {
    "no record": ("// nothing here\n", "it has no kTunedOn"),
    "cut short": (block(RECORD)[:120], "kTunedOn is cut short"),
    "a field missing": (block(RECORD).replace('    /*kernel=*/"6.1.0-18-amd64",\n', ""), "fields"),
    "a field renamed": (block(RECORD).replace("/*kernel=*/", "/*kernal=*/"), "fields"),
    "a field twice": (
        block(RECORD).replace("/*kernel=*/", '/*fingerprint=*/"0123456789abcdef", /*kernel=*/'),
        "'/*fingerprint=*/' out of place",
    ),
    "a number for a string": (
        block(RECORD).replace('"6.1.0-18-amd64"', "6"),
        "kernel is not a str",
    ),
    "a string for a number": (block(RECORD).replace("=*/2,", '=*/"2",'), "logical_cpus is not"),
    "no CPUs": (block(RECORD).replace("=*/2,", "=*/0,"), "out of range"),
    "a fingerprint edited": (block(RECORD).replace("0123456789abcdef", "xyz"), "16 hex digits"),
    "an expression": (block(RECORD).replace("=*/2,", "=*/1 + 1,"), "unexpected: '+ 1,"),
    "a value without a name": (block(RECORD).replace("/*kernel=*/", ""), "out of place"),
    "an unknown escape": (block(RECORD).replace("6.1.0", "6\\q1"), "unknown escape '\\\\q'"),
    "bytes that are not UTF-8": (block(RECORD).replace("6.1.0", "\\377\\376"), "not UTF-8"),
    "an escape out of range": (block(RECORD).replace("6.1.0", "\\x1ff"), "out of range"),
    "something else inside": (block(RECORD).replace("=*/2,", "=*/2, kOther,"), "unexpected"),
    "two commas": (block(RECORD).replace("=*/2,", "=*/2,,"), "',' out of place"),
}


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_damaged_record_is_refused_saying_why(case: str) -> None:
    text, expected = DAMAGED[case]
    with pytest.raises(DamagedError) as raised:
        parse_tuned_on(text)
    assert expected in str(raised.value)


def test_the_record_has_the_fields_of_the_cpp_struct_in_its_order() -> None:
    source = (REPO / "runtime" / "hspc" / "host_check.hpp").read_text(encoding="utf-8")
    struct = re.search(r"struct TunedHost \{(.*?)\n\};", source, re.DOTALL)
    assert struct is not None
    members = re.findall(r"^\s*(?:const char\*|int) (\w+);", struct.group(1), re.MULTILINE)
    assert members == [field.name for field in dataclasses.fields(TunedOn)]


def test_a_recorded_trees_record_names_its_model_and_cpus() -> None:
    host = read_host(SYSFS / "2s-8c-2t" / "sys")
    record = tuned_on(host)
    assert record.description == "Intel(R) Xeon(R) Silver 4110 CPU @ 2.10GHz; 32 CPU(s)"
    assert (record.fingerprint, record.kernel) == (host.fingerprint, "recorded")
