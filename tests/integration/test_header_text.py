"""Text from outside in the header (issue 24, item 12): a newline in `--out` does not end the
banner's comment (the real command line, in a child process), and a seeded fuzz over every text
field (command words, host summary, CPU model, compiler, kernel) renders headers that compile
under strict warnings with both compilers, whose comments and strings give back exactly the text
that went in: the command line through bash, the names through the escape's own rules, kTunedOn
through `hspc-gen check`'s reader."""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from hspc_gen import __version__
from hspc_gen.emit.header_text import comment_text, meson_string, shell_line, shell_word
from hspc_gen.emit.provenance import TunedOn, parse_tuned_on
from hspc_gen.model import ChannelParams, Primitive
from hspc_gen.model.threads import ThreadAdvice
from hspc_gen.render import (
    AppWork,
    HarnessVariant,
    HeaderSpec,
    Provenance,
    render_harness_files,
    render_header,
)
from hspc_gen.search.measure.build import tool

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "app.yaml"
STRICT = {
    "g++": ("-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Wsign-conversion",
            "-Wuseless-cast", "-Wshadow", "-Werror"),
    "clang++": ("-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Wsign-conversion",
                "-Wshadow-all", "-Werror"),
}  # fmt: skip
BANNER_LINE = re.compile(r"//   (?P<field>command|host|compiler): +(?P<text>.*)")


def test_names_are_escaped_so_a_comment_stays_one_line_and_never_ends_in_a_backslash() -> None:
    assert comment_text("AMD EPYC 7B13") == "AMD EPYC 7B13"
    assert comment_text("é 日本") == "é 日本"  # printable: as it is
    assert comment_text("a\nb\rc\td") == "a\\nb\\rc\\td"
    assert comment_text("ends in \\") == "ends in \\x5c"
    assert comment_text("\u202e") == "\\xe2\\x80\\xae"  # a bidi override (-Wbidi-chars)
    assert comment_text("??/") == "?\\x3f/"  # no trigraph, even under -trigraphs
    assert comment_text("\udcff") == "\\xff"  # a byte that was not UTF-8


def test_command_words_are_quoted_as_a_shell_gives_them_back() -> None:
    assert shell_word("--out") == "--out"
    assert shell_word("my dir") == "'my dir'"
    assert shell_word("a\\") == "'a\\'"  # quoted: the line cannot end in a backslash
    assert shell_word("o\n#error injected") == "$'o\\n#error injected'"
    assert shell_word("it's\n") == "$'it\\'s\\n'"
    assert shell_word("\udcff\u202e") == "$'\\xff\\xe2\\x80\\xae'"
    assert shell_line(["hspc-gen", "--out", ""]) == "hspc-gen --out ''"


def test_a_folder_of_the_users_sources_is_a_meson_string_whatever_its_name(tmp_path: Path) -> None:
    """The batch's project names the folders of the user's sources (for their local includes):
    a quote or a backslash in one broke the project's meson.build (d227347 pasted them as they
    were); `meson setup` finds each folder now. (A newline Meson escapes too, but Ninja cannot
    take it in a compiler argument: Meson stops at it.)"""
    assert meson_string("it's \\ a\nfolder é") == "it\\'s \\\\ a\\u000afolder é"
    folders = [tmp_path / "it's \\ here", tmp_path / "ends in \\", tmp_path / "\u202e'é"]
    for folder in folders:
        folder.mkdir()
    variants = (HarnessVariant("ca", ChannelParams(64, 0, 4, 4096, Primitive.futex)),)
    app = AppWork(include_dirs=tuple(str(folder) for folder in folders))
    project = tmp_path / "project"
    for name, text in render_harness_files(variants, 8, app).items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    done = subprocess.run(
        [tool("meson"), "setup", str(project / "build"), str(project)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_a_newline_in_out_does_not_end_the_banners_comment(tmp_path: Path) -> None:
    """d227347: `--out "$(printf 'o\\n#error injected')"` wrote a header whose fifth line was a
    live `#error injected`."""
    out = "o\n#error injected"
    done = subprocess.run(
        [sys.executable, "-m", "hspc_gen", "--target", EXAMPLE, "--effort", "estimate",
         "--out", out, "--quiet"],
        capture_output=True, text=True, cwd=tmp_path, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    header = tmp_path / out / "example_channel.hpp"
    text = header.read_text(encoding="utf-8")
    assert not any(line.startswith("#error") for line in text.splitlines())
    assert all(line.startswith("//") for line in _banner(text))
    words = ["hspc-gen", "--target", str(EXAMPLE), "--out", out, "--effort", "estimate"]
    assert _command_words(text) == [os.fsencode(word) for word in words]
    _compile([header], "g++")


# The hazards a text field may hold: line ends of every kind, a backslash (a line splice at the
# end of a line), quotes, comment marks, a trigraph, bidirectional and invisible characters,
# control characters, text that is not ASCII, shell syntax, and a byte that is not UTF-8 (argv
# and paths keep it as a surrogate).
HAZARDS = ("\n", "\r", "\r\n", "\\", "\\\n", "'", '"', "*/", "/*", "??/", "#error x", "\u202e",
           "\u2066", "\u2028", "\x0b", "\x0c", "\t", "\x7f", "\x1b[1m", "é", "日本", "\U0001f600",
           "\u200b", "$(id)", "`", " ", "a", "-", "=", "\\x5c", "%s", "\xa0")  # fmt: skip
NOT_UTF8 = "\udcff"


def _text(rng: random.Random, *, raw_bytes: bool) -> str:
    pieces = [*HAZARDS, *((NOT_UTF8,) if raw_bytes else ())]
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))


def _fuzzed(rng: random.Random, index: int) -> tuple[HeaderSpec, tuple[str, ...]]:
    """A header of random text fields, and the command words it was given."""
    words = ("hspc-gen", *(_text(rng, raw_bytes=True) for _ in range(rng.randint(1, 5))))
    tuned_on = TunedOn(
        hspc_gen_version=__version__,
        fingerprint="0123456789abcdef",
        compiler=_text(rng, raw_bytes=False),
        kernel=_text(rng, raw_bytes=False),
        model_name=_text(rng, raw_bytes=False),
        logical_cpus=2,
    )
    provenance = Provenance(words, _text(rng, raw_bytes=False), (_text(rng, raw_bytes=False),),
                            tuned_on)  # fmt: skip
    params = ChannelParams(128, 4096, 4, 16384, list(Primitive)[index % len(Primitive)], -1, -1)
    threads = ThreadAdvice(1, 1, 1, (-1,), (-1,), pinned=False)
    return HeaderSpec("fuzz", f"fuzz{index}", params, provenance, threads), words


FUZZ_CASES = 16


@pytest.mark.parametrize("compiler", list(STRICT))
def test_fuzzed_text_fields_compile_and_read_back_exactly(tmp_path: Path, compiler: str) -> None:
    rng = random.Random(24)  # seeded: the same cases every run
    headers = []
    for index in range(FUZZ_CASES):
        spec, words = _fuzzed(rng, index)
        text = render_header(spec)
        header = tmp_path / f"fuzz{index}.hpp"
        header.write_bytes(text.encode("utf-8"))  # strict: nothing unencodable reached it
        headers.append(header)
        banner = _banner(text)
        assert all(line.startswith("//") for line in banner), banner
        assert _command_words(text) == [os.fsencode(word) for word in words]
        fields = {m["field"]: m["text"] for line in banner if (m := BANNER_LINE.fullmatch(line))}
        assert _unescaped(fields["host"]) == spec.provenance.host_summary
        assert _unescaped(fields["compiler"]) == spec.provenance.tuned_on.compiler
        measured = banner[banner.index("//   measured:") + 1]
        assert _unescaped(measured.removeprefix("//     ")) == spec.provenance.measured[0]
        assert parse_tuned_on(text) == spec.provenance.tuned_on  # what `hspc-gen check` reads
    _compile(headers, compiler)


def _banner(text: str) -> list[str]:
    return text.split("#pragma once", 1)[0].splitlines()


def _command_words(text: str) -> list[bytes]:
    """The banner's command line, as bash splits and unquotes it."""
    (line,) = (m["text"] for line in _banner(text) if (m := BANNER_LINE.fullmatch(line))
               and m["field"] == "command")  # fmt: skip
    done = subprocess.run(["bash", "-c", f"printf '%s\\0' {line}"], capture_output=True,
                          check=True)  # fmt: skip
    return done.stdout.split(b"\0")[:-1]


def _unescaped(text: str) -> str:
    """comment_text's escapes read back (\\n, \\r, \\t, \\xHH per byte), written apart from it."""
    named = {"n": b"\n", "r": b"\r", "t": b"\t"}
    out, at = bytearray(), 0
    while at < len(text):
        if text[at] != "\\":
            out += text[at].encode("utf-8")
            at += 1
        elif text[at + 1] == "x":
            out.append(int(text[at + 2 : at + 4], 16))
            at += 4
        else:
            out += named[text[at + 1]]
            at += 2
    return out.decode("utf-8", "surrogateescape")


def _compile(headers: Sequence[Path], compiler: str) -> None:
    """One translation unit including every header (each its own namespace), warning-free."""
    if shutil.which(compiler) is None:
        pytest.fail(f"{compiler} is not installed: ./dev setup installs it")
    source = headers[0].parent / "all_headers.cpp"
    includes = "".join(f'#include "{header.name}"\n' for header in headers)
    source.write_text(f"{includes}int main() {{ return 0; }}\n", encoding="utf-8")
    done = subprocess.run(
        [compiler, "-std=c++17", "-fsyntax-only", *STRICT[compiler], str(source)],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr[:4000]
