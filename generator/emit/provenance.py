"""The tuning host a generated header records (its `kTunedOn`), written and read back.

The banner is for people; `kTunedOn` is for machines, and one record serves both checks: the
header's own `tuned_host_matches()` compares its model name and CPU count with the running host,
and `hspc-gen check` (check.py) parses every field back from the header's text. Written in one
form (a field a line, `/*name=*/value,`, clang-format clean), read leniently enough to survive a
re-formatting: any whitespace, and strings split into adjacent literals.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, cast

from hspc_gen import __version__
from hspc_gen.host.machine import Host

# The header's column limit (.clang-format) and kTunedOn's indent: a string that would pass it
# goes on lines of its own, in pieces, as clang-format would break it.
COLUMNS = 100
INDENT = "    "
FINGERPRINT = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class TunedOn:
    """What a header was tuned with and on; field names and order are the C++ `TunedHost`'s
    (runtime/hspc/host_check.hpp)."""

    hspc_gen_version: str
    fingerprint: str
    compiler: str
    kernel: str
    model_name: str
    logical_cpus: int  # online logical CPUs

    @property
    def description(self) -> str:
        return f"{self.model_name}; {self.logical_cpus} CPU(s)"

    def to_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)


class DamagedError(ValueError):
    """kTunedOn is there but cannot be read back: what is wrong, in words."""


def tuned_on(host: Host) -> TunedOn:
    """The record of `host`, made by this hspc-gen."""
    return TunedOn(
        hspc_gen_version=__version__,
        fingerprint=host.fingerprint,
        compiler=host.compiler,
        kernel=host.kernel,
        model_name=host.model_name,
        logical_cpus=len(host.logical_cpus),
    )


def initializer_lines(record: TunedOn) -> tuple[str, ...]:
    """kTunedOn's initializer lines, one field each (a long string on lines of its own)."""
    lines: list[str] = []
    for field in dataclasses.fields(record):
        value = getattr(record, field.name)
        designator = f"{INDENT}/*{field.name}=*/"
        if isinstance(value, int):
            lines.append(f"{designator}{value},")
            continue
        units = _escaped_units(value)
        if len(designator) + len("".join(units)) + len('"",') <= COLUMNS:
            lines.append(f'{designator}"{"".join(units)}",')
            continue
        lines.append(designator)
        pieces = _pieces(units, COLUMNS - len(INDENT) - len('"",'))
        lines += [f'{INDENT}"{piece}"' for piece in pieces]
        lines[-1] += ","
    return tuple(lines)


_SIMPLE_ESCAPES = {'"': '\\"', "\\": "\\\\", "?": "\\?"}  # "?": no "??x" can be a trigraph


def _escaped_units(text: str) -> list[str]:
    """`text` as C++ string-literal pieces, one per UTF-8 byte: printable ASCII as is, every
    other byte as a three-digit octal escape (which, unlike \\x, never swallows what follows)."""
    units = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char in _SIMPLE_ESCAPES:
            units.append(_SIMPLE_ESCAPES[char])
        elif 0x20 <= byte < 0x7F:
            units.append(char)
        else:
            units.append(f"\\{byte:03o}")
    return units


def _pieces(units: list[str], width: int) -> list[str]:
    """The units packed into pieces of at most `width` characters, never splitting an escape."""
    pieces = [""]
    for unit in units:
        if len(pieces[-1]) + len(unit) > width:
            pieces.append("")
        pieces[-1] += unit
    return pieces


_BLOCK = re.compile(r"\bconstexpr\s+TunedHost\s+kTunedOn\s*=?\s*\{")
_TOKEN = re.compile(
    r"""(?P<space>\s+)
      | (?P<field>/\*\s*(?P<name>\w+)\s*=\s*\*/)
      | (?P<string>"(?:[^"\\\n]|\\.)*")
      | (?P<int>-?[0-9]+)
      | (?P<comma>,)
      | (?P<close>\})""",
    re.VERBOSE,
)


def has_record(text: str) -> bool:
    return _BLOCK.search(text) is not None


def parse_tuned_on(text: str) -> TunedOn:
    """kTunedOn read back from a header's text; DamagedError says what is wrong with it."""
    found = _BLOCK.search(text)
    if found is None:
        raise DamagedError("it has no kTunedOn")
    values = _values(text, found.end())
    fields = dataclasses.fields(TunedOn)
    names = [field.name for field in fields]
    if list(values) != names:
        raise DamagedError(f"kTunedOn has the fields {list(values)}, not {names}")
    for field in fields:  # annotations are strings here (postponed evaluation)
        want = int if field.type == "int" else str
        if not isinstance(values[field.name], want):
            raise DamagedError(f"kTunedOn's {field.name} is not a {want.__name__}")
    record = TunedOn(**cast(dict[str, Any], values))
    if not FINGERPRINT.fullmatch(record.fingerprint):
        raise DamagedError(f"kTunedOn's fingerprint {record.fingerprint!r} is not 16 hex digits")
    if record.logical_cpus < 1 or not record.hspc_gen_version:
        raise DamagedError("kTunedOn's logical_cpus or hspc_gen_version is out of range")
    return record


def _values(text: str, at: int) -> dict[str, str | int]:
    """The `/*name=*/value` pairs of the initializer starting at `at`, up to its `}`. A string's
    adjacent literals are joined as bytes: a piece may end inside a UTF-8 character."""
    values: dict[str, str | int] = {}
    name: str | None = None
    value: bytes | int | None = None
    while (token := _TOKEN.match(text, at)) is not None:
        at = token.end()
        kind = token.lastgroup
        if kind in ("comma", "close") and name is not None and value is not None:
            values[name] = value if isinstance(value, int) else _decoded(value)
            name, value = None, None
        elif kind == "comma" or (kind == "close" and name is not None):
            raise DamagedError(f"kTunedOn has a {token.group()!r} out of place")
        if kind == "close":
            return values
        if kind == "field" and name is None and token.group("name") not in values:
            name = token.group("name")
        elif kind == "string" and name is not None and not isinstance(value, int):
            value = (value or b"") + _unescaped(token.group()[1:-1])
        elif kind == "int" and name is not None and value is None:
            value = int(token.group())
        elif kind not in ("space", "comma"):
            raise DamagedError(f"kTunedOn has {token.group()!r} out of place")
    if "}" not in text[at:]:
        raise DamagedError("kTunedOn is cut short")
    raise DamagedError(f"kTunedOn holds something unexpected: {text[at : at + 20]!r}")


_ESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9a-fA-F]+)|(.))", re.DOTALL)
_NAMED_ESCAPES = {
    "\\": b"\\", '"': b'"', "'": b"'", "?": b"?", "a": b"\a", "b": b"\b",
    "f": b"\f", "n": b"\n", "r": b"\r", "t": b"\t", "v": b"\v",
}  # fmt: skip


def _unescaped(body: str) -> bytes:
    """A string literal's body (no quotes) as the bytes it stands for."""
    out = bytearray()
    at = 0
    for escape in _ESCAPE.finditer(body):
        out += body[at : escape.start()].encode("utf-8")
        octal, hexadecimal, named = escape.groups()
        if octal is not None or hexadecimal is not None:
            code = int(octal, 8) if octal is not None else int(hexadecimal, 16)
            if code > 0xFF:
                raise DamagedError(f"kTunedOn has an escape out of range: {escape.group()!r}")
            out.append(code)
        elif named in _NAMED_ESCAPES:
            out += _NAMED_ESCAPES[named]
        else:
            raise DamagedError(f"kTunedOn has an unknown escape {escape.group()!r}")
        at = escape.end()
    out += body[at:].encode("utf-8")
    return bytes(out)


def _decoded(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise DamagedError("kTunedOn has a string that is not UTF-8") from None
