"""Text from outside hspc-gen as it stands in the generated header's `//` comments (and in the
benchmark projects' meson.build strings: `meson_string`).

The command line, the paths in it and the host's and compiler's names are not trusted: a newline
in any of them would end a comment and make the rest of the line C++ (`--out "$(printf
'o\\n#error injected')"`), a comment ending in a backslash would swallow the next line (and warn
under -Wcomment), and a bidirectional control character fails -Werror under GCC's -Wbidi-chars.
So every such text goes through one of two escapes here: `comment_text` (C's escapes) for names,
`shell_line` (a shell's quoting, which gives the words back exactly) for the command line. Text
that must be a C++ identifier (the name, the namespace) is refused in app.yaml instead
(target.fields). kTunedOn's strings have their own escape (provenance).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

# Written as C writes them; every other character that is not printable, as \xHH per byte.
_NAMED = {"\\": "\\x5c", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_SHELL_NAMED = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_MESON_NAMED = {"\\": "\\\\", "'": "\\'"}
_SURROGATES = range(0xDC80, 0xDD00)  # bytes that were not UTF-8, as os.fsdecode keeps them


def _bytes_of(char: str) -> bytes:
    """The bytes a character stands for: a lone byte kept by surrogateescape, else UTF-8."""
    if ord(char) in _SURROGATES:
        return bytes([ord(char) - 0xDC00])
    return char.encode("utf-8", "surrogatepass")


def _hex_escapes(char: str) -> str:
    return "".join(f"\\x{byte:02x}" for byte in _bytes_of(char))


def comment_text(text: str) -> str:
    """`text` as it may stand in a `//` comment: printable characters as they are, and as
    escapes a backslash (\\x5c, so that no line can end in one), newline, carriage return and
    tab (\\n, \\r, \\t), a `?` after a `?` (\\x3f: no trigraph, under -trigraphs) and
    every other character that is not printable, bidirectional and invisible format characters
    among them (\\xHH for each byte)."""
    out: list[str] = []
    for at, char in enumerate(text):
        if char == "?" and at > 0 and text[at - 1] == "?":
            out.append("\\x3f")
        else:
            out.append(_NAMED.get(char) or (char if char.isprintable() else _hex_escapes(char)))
    return "".join(out)


def shell_word(word: str) -> str:
    """One word of a command line as a POSIX shell would be given it: as shlex quotes it when
    every character is printable, else ANSI-C quoted ($'...', bash, zsh, ksh and POSIX.1-2024
    sh), its other characters as \\xHH bytes, so the word comes back byte for byte."""
    if all(char.isprintable() for char in word):
        return shlex.quote(word)
    body = "".join(
        _SHELL_NAMED.get(char) or (char if char.isprintable() else _hex_escapes(char))
        for char in word
    )
    return f"$'{body}'"


def shell_line(words: Sequence[str]) -> str:
    """The words as one line of shell, each quoted by `shell_word`: printable, and never ending
    in a backslash (a word holding one is quoted)."""
    return " ".join(shell_word(word) for word in words)


def meson_string(text: str) -> str:
    """`text` as the body of a Meson '...' string (a path of the user's, such as the folder of
    their sources): a backslash and a quote escaped, and every character that is not printable
    by its code point, \\uXXXX or \\UXXXXXXXX (Meson reads them as Python does; a byte that
    was not UTF-8 stays the surrogate that Python's os functions turn back into it)."""
    return "".join(
        _MESON_NAMED.get(char)
        or (
            char
            if char.isprintable()
            else f"\\U{ord(char):08x}"
            if ord(char) > 0xFFFF
            else f"\\u{ord(char):04x}"
        )
        for char in text
    )
