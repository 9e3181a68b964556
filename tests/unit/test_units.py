"""Human sizes and durations: what parses to what, what is refused and how it is said."""

from __future__ import annotations

import pytest

from hspc_gen.target.units import (
    describe_input,
    format_duration,
    format_size,
    parse_duration,
    parse_duration_ns,
    parse_size,
)


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("512B", 512),
        ("64KiB", 65536),
        ("4MiB", 4 << 20),
        ("1GiB", 1 << 30),
        ("1TiB", 1 << 40),
        ("4kB", 4000),
        ("4KB", 4000),
        ("3MB", 3_000_000),
        ("2GB", 2_000_000_000),
        ("4mib", 4 << 20),
        ("64 KiB", 65536),
        (" 8 ", 8),
        ("1.5KiB", 1536),
        (".5KiB", 512),
        ("+3B", 3),
        ("0", 0),
        (4096, 4096),
        (0, 0),
    ],
)
def test_parse_size(text: str | int, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("4K", "unknown size unit 'K'"),
        ("4M", "unknown size unit 'M'"),
        ("4 bytes", "unknown size unit 'bytes'"),
        ("junk", "'junk' is not a size"),
        ("", "'' is not a size"),
        ("4MiB4", "'4MiB4' is not a size"),
        ("1.5B", "'1.5B' is not a whole number of bytes"),
        ("0.1KiB", "'0.1KiB' is not a whole number of bytes"),
        ("-4MiB", "'-4MiB' is negative"),
        (-1, "-1 is negative"),
        (True, "true (YAML reads yes/no/on/off as true/false"),
        (4.0, "expected a size such as 4MiB or 512B, got 4.0"),
        (None, "got nothing (an empty value)"),
        ([4], "got a list"),
    ],
)
def test_parse_size_refuses(value: object, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_size(value)  # type: ignore[arg-type]
    assert message in str(caught.value)


def test_parse_size_names_the_units_it_takes() -> None:
    with pytest.raises(ValueError, match="use B, KiB, MiB, GiB, TiB \\(1024\\) or kB, MB, GB, TB"):
        parse_size("4K")


@pytest.mark.parametrize(
    "size", [0, 1, 8, 1000, 1024, 1536, 4000, 65536, 4 << 20, 12345, 1 << 30, 3 * 10**9]
)
def test_format_size_round_trips(size: int) -> None:
    assert parse_size(format_size(size)) == size


@pytest.mark.parametrize(
    ("size", "text"),
    [(0, "0B"), (8, "8B"), (1024, "1KiB"), (1536, "1536B"), (4000, "4kB"), (4 << 20, "4MiB")],
)
def test_format_size_prefers_binary_units(size: int, text: str) -> None:
    assert format_size(size) == text


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90.0),
        ("2m", 120.0),
        ("2min", 120.0),
        ("1h", 3600.0),
        ("500ms", 0.5),
        ("1m30s", 90.0),
        ("1h 30m", 5400.0),
        ("2M", 120.0),
        ("10sec", 10.0),
        (120, 120.0),
        (0.5, 0.5),
        ("45", 45.0),
    ],
)
def test_parse_duration(text: str | float, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds, rel=1e-12)


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("40ns", 40.0),
        ("3us", 3000.0),
        ("3\u00b5s", 3000.0),  # MICRO SIGN
        ("3\u03bcs", 3000.0),  # GREEK SMALL LETTER MU
        ("1.5us", 1500.0),
        ("2ms", 2e6),
        ("1s", 1e9),
        (15, 15.0),
        ("15", 15.0),
    ],
)
def test_parse_duration_ns(text: str | float, ns: float) -> None:
    assert parse_duration_ns(text) == pytest.approx(ns, rel=1e-12)


def test_bare_numbers_are_in_the_callers_unit() -> None:
    assert parse_duration(50, unit="us") == pytest.approx(50e-6)
    assert parse_duration("50", unit="ms") == pytest.approx(0.05)
    assert parse_duration_ns(2, unit="us") == pytest.approx(2000.0)
    assert parse_duration("3s", unit="us") == pytest.approx(3.0)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("3 weeks", "unknown duration unit 'weeks' (use ns, us, ms, s, m, h)"),
        ("1e3s", "unknown duration unit 'e'"),
        ("1m30", "'1m30' is not a duration"),
        ("soon", "'soon' is not a duration"),
        ("", "'' is not a duration"),
        ("-3s", "'-3s' is negative"),
        (-1, "-1 is negative"),
        (float("inf"), "expected a finite duration, got inf"),
        (float("nan"), "expected a finite duration, got nan"),
        (False, "false (YAML reads yes/no/on/off"),
        (None, "expected a duration such as 90s or 40ns, got nothing"),
    ],
)
def test_parse_duration_refuses(value: object, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_duration(value)  # type: ignore[arg-type]
    assert message in str(caught.value)


def test_parse_duration_refuses_an_unknown_default_unit() -> None:
    with pytest.raises(ValueError, match="unknown duration unit 'weeks'"):
        parse_duration(3, unit="weeks")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (120, "2m"),
        (90, "90s"),
        (3600, "1h"),
        (86400, "24h"),
        (0.5, "500ms"),
        (1.25, "1.25s"),
        (0.0015, "1.5ms"),
        (3e-6, "3us"),
        (40e-9, "40ns"),
        (1e-10, "0.1ns"),
        (1536, "25.6m"),
    ],
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize("seconds", [0, 40e-9, 3e-6, 0.5, 1.25, 90, 120, 5400, 86400])
def test_format_duration_round_trips(seconds: float) -> None:
    assert parse_duration(format_duration(seconds)) == pytest.approx(seconds, rel=1e-3)


@pytest.mark.parametrize("seconds", [-1.0, float("inf"), float("nan")])
def test_format_duration_refuses(seconds: float) -> None:
    with pytest.raises(ValueError, match="cannot format"):
        format_duration(seconds)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "nothing (an empty value)"),
        (True, "true (YAML reads yes/no/on/off as true/false: quote the word)"),
        ("x", "'x'"),
        (3, "3"),
        (2.5, "2.5"),
        ([1], "a list"),
        ({"a": 1}, "a mapping"),
        (object(), "a value of type object"),
    ],
)
def test_describe_input(value: object, text: str) -> None:
    assert describe_input(value) == text
