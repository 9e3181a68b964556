"""Human units for sizes and durations, as app.yaml and the CLI write them.

Sizes: a bare integer is bytes; `B`; binary `KiB MiB GiB TiB` (powers of 1024); decimal
`kB MB GB TB` (powers of 1000, `KB` is read as `kB`). Unit names are case-insensitive
("4mib" == "4MiB"), a fraction is fine when the result is a whole number of bytes ("1.5KiB").
A bare `K`/`M`/`G` is rejected: it is ambiguous between 1000 and 1024.

Durations: `ns`, `us` (or `µs`, `μs`), `ms`, `s` (`sec`), `m` (`min`), `h`, also combined
("1m30s"); a bare number is in the caller's unit (seconds for a budget, ns for per-event work).

Every parser raises ValueError with a message fit to show the user as is. size_field and
duration_field make them pydantic field types, with bounds and a JSON Schema.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, TypeVar

from pydantic import BeforeValidator, Field

_Number = TypeVar("_Number", int, float)

_SIZE_UNITS: dict[str, int] = {
    "": 1,
    "b": 1,
    "kib": 1 << 10,
    "mib": 1 << 20,
    "gib": 1 << 30,
    "tib": 1 << 40,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
}
_BINARY_NAMES = (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))
_DECIMAL_NAMES = (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3))

_NS_PER_UNIT: dict[str, float] = {
    "ns": 1.0,
    "us": 1e3,
    "\u00b5s": 1e3,  # MICRO SIGN, what most keyboards type
    "\u03bcs": 1e3,  # GREEK SMALL LETTER MU, what some fonts and converters produce
    "ms": 1e6,
    "s": 1e9,
    "sec": 1e9,
    "m": 60e9,
    "min": 60e9,
    "h": 3600e9,
}
_DURATION_NAMES = (("h", 3600e9), ("m", 60e9), ("s", 1e9), ("ms", 1e6), ("us", 1e3), ("ns", 1.0))

_NUMBER = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_SIZE_RE = re.compile(rf"\s*(?P<number>{_NUMBER})\s*(?P<unit>[A-Za-z]*)\s*")
_TERM_RE = re.compile(rf"\s*(?P<number>{_NUMBER})\s*(?P<unit>[^\W\d_]*)\s*")

SIZE_UNITS_HELP = "B, KiB, MiB, GiB, TiB (1024) or kB, MB, GB, TB (1000)"
DURATION_UNITS_HELP = "ns, us, ms, s, m, h"


def parse_size(value: str | int) -> int:
    """Bytes in `value`: an integer, or a string such as "4MiB", "64 KiB", "4kB", "512B"."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"expected a size such as 4MiB or 512B, got {describe_input(value)}")
    if isinstance(value, int):
        return _non_negative(value, str(value))
    match = _SIZE_RE.fullmatch(value)
    if match is None:
        raise ValueError(f"'{value}' is not a size: write a number and a unit ({SIZE_UNITS_HELP})")
    unit = match["unit"].lower()
    if unit not in _SIZE_UNITS:
        raise ValueError(f"'{value}': unknown size unit '{match['unit']}' (use {SIZE_UNITS_HELP})")
    if match["number"].startswith("-"):
        raise ValueError(f"'{value}' is negative")
    number, scale = match["number"].lstrip("+"), _SIZE_UNITS[unit]
    if "." not in number:
        return int(number) * scale
    # Exact decimal arithmetic: "1.5KiB" must be 1536, not whatever a float rounds to.
    whole, fraction = number.split(".")
    denominator: int = 10 ** len(fraction)
    numerator = int(whole or "0") * denominator + int(fraction or "0")
    result, remainder = divmod(numerator * scale, denominator)
    if remainder:
        raise ValueError(f"'{value}' is not a whole number of bytes")
    return result


def format_size(size: int) -> str:
    """An exact spelling in the largest unit that divides `size`: "4MiB", "3kB", "1000B" -> "1kB".

    Binary units are tried first, then decimal ones, then bytes, so that
    parse_size(format_size(n)) == n for every n >= 0.
    """
    for name, scale in (*_BINARY_NAMES, *_DECIMAL_NAMES):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{name}"
    return f"{size}B"


def parse_duration(value: str | float, unit: str = "s") -> float:
    """Seconds in `value`: "90s", "2m", "1h30m", "500ms", "40ns", "3us"; bare numbers in `unit`."""
    return parse_duration_ns(value, unit) / 1e9


def parse_duration_ns(value: str | float, unit: str = "ns") -> float:
    """Nanoseconds in `value`, as parse_duration; bare numbers in `unit` (ns by default)."""
    if unit not in _NS_PER_UNIT:
        raise ValueError(f"unknown duration unit '{unit}' (use {DURATION_UNITS_HELP})")
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"expected a duration such as 90s or 40ns, got {describe_input(value)}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ValueError(f"expected a finite duration, got {value}")
        return _non_negative(value, str(value)) * _NS_PER_UNIT[unit]
    terms = list(_TERM_RE.finditer(value))
    covered = "".join(term[0] for term in terms)
    if not terms or covered != value or (len(terms) > 1 and not all(t["unit"] for t in terms)):
        raise ValueError(
            f"'{value}' is not a duration: write a number and a unit ({DURATION_UNITS_HELP})"
        )
    if any(term["number"].startswith("-") for term in terms):
        raise ValueError(f"'{value}' is negative")
    total = 0.0
    for term in terms:
        name = term["unit"].lower() or unit
        if name not in _NS_PER_UNIT:
            raise ValueError(
                f"'{value}': unknown duration unit '{term['unit']}' (use {DURATION_UNITS_HELP})"
            )
        total += float(term["number"]) * _NS_PER_UNIT[name]
    return total


def format_duration(seconds: float) -> str:
    """A short spelling: 120 -> "2m", 90 -> "90s", 0.5 -> "500ms", 4e-8 -> "40ns", 1.25 -> "1.25s".

    The largest unit in which the value is a whole number below 1000 (any number of hours);
    otherwise the largest unit that keeps it >= 1, with up to 4 significant digits.
    """
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"cannot format {seconds} as a duration")
    ns = seconds * 1e9
    if ns == 0:
        return "0s"
    for name, scale in _DURATION_NAMES:
        count = ns / scale
        readable = 1 <= count < 1000 or (name == "h" and count >= 1)
        if readable and math.isclose(count, round(count), rel_tol=1e-9, abs_tol=1e-9):
            return f"{round(count)}{name}"
    for name, scale in _DURATION_NAMES:
        if ns >= scale:
            return f"{ns / scale:.4g}{name}"
    return f"{ns:.4g}ns"


def _non_negative(value: _Number, text: str) -> _Number:
    if value < 0:
        raise ValueError(f"{text} is negative")
    return value


def describe_input(value: object) -> str:
    """How an input value reads in an error message: 'MiB', 0, a list, nothing."""
    if value is None:
        return "nothing (an empty value)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (YAML reads yes/no/on/off as true/false: quote the word)"
    if isinstance(value, str | int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a value of type {type(value).__name__}"


def size_field(low: int, high: int, *, power_of_two: bool = False) -> BeforeValidator:
    """A pydantic field validator for a size from `low` to `high` bytes, written as 4096 or "4KiB",
    with a JSON Schema that says so: `Annotated[int, size_field(1, 65536)]`."""

    def check(value: object) -> int:
        size = parse_size(value)  # type: ignore[arg-type]  # it rejects other types itself
        if not low <= size <= high:
            raise ValueError(
                f"{format_size(size)} is out of range: {format_size(low)} to {format_size(high)}"
            )
        if power_of_two and size & (size - 1):
            raise ValueError(f"{format_size(size)} is not a power of two")
        return size

    text = Annotated[str, Field(pattern=r"^\s*[0-9.]+\s*[A-Za-z]*\s*$")]
    return BeforeValidator(
        check, json_schema_input_type=Annotated[int, Field(ge=low, le=high)] | text
    )


def duration_field(
    unit: str, low: float, high: float, *, optional: bool = False
) -> BeforeValidator:
    """A pydantic field validator for a duration in `unit` from `low` to `high`, written as a bare
    number or "40ns", "2m": `Annotated[float, duration_field("s", 1, 60)]`. `optional` lets
    None through."""
    scale_ns = parse_duration_ns(1, unit)

    def check(value: object) -> float | None:
        if value is None and optional:
            return None
        # Through ns, not seconds: "15ns" must stay 15.0, not 14.999999999999998.
        amount = parse_duration_ns(value, unit) / scale_ns  # type: ignore[arg-type]
        if not low * (1 - 1e-12) <= amount <= high * (1 + 1e-12):
            unit_s = scale_ns / 1e9
            span = f"{format_duration(low * unit_s)} to {format_duration(high * unit_s)}"
            raise ValueError(f"{value} is out of range: {span}")
        return amount

    text = Annotated[str, Field(pattern=r"^(\s*[0-9.]+\s*[A-Za-z\u00b5\u03bc]*)+\s*$")]
    number = Annotated[float, Field(ge=low, le=high)]
    return BeforeValidator(
        check, json_schema_input_type=(number | text | None) if optional else (number | text)
    )
