"""The channel parameters' domains, and `--set NAME=VALUE` overrides checked against them."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from hspc_gen.errors import UserError
from hspc_gen.model import (
    LIMITS,
    PARAM_NAMES,
    ChannelParams,
    Primitive,
    floor_power_of_two,
    next_power_of_two,
)
from hspc_gen.target.units import format_duration, format_size, parse_duration_ns, parse_size

_SIZE_PARAMS = frozenset({"padding_bytes", "stack_offset_bytes", "buffer_bytes", "prefetch_bytes"})
_DURATION_PARAMS = frozenset({"spin_ns"})
_MEMORY = ("buffers", "buffer_bytes")
_Value = TypeVar("_Value", int, float)


def domain_error(name: str, value: object) -> str | None:
    """Why `value` is outside the domain of parameter `name`, or None when it is inside."""
    if name in LIMITS:
        limit = LIMITS[name]
        ok = isinstance(value, int) and not isinstance(value, bool) and limit.allows(value)
        if ok or name not in _DURATION_PARAMS:
            return None if ok else limit.describe()
        span = (format_duration(limit.low / 1e9), format_duration(limit.high / 1e9))
        return f"must be a duration between {span[0]} and {span[1]} (a bare number is in ns)"
    if name in ("producer_cpu", "consumer_cpu"):
        ok = isinstance(value, int) and value >= -1
        return None if ok else "must be a CPU id, or -1 for not pinned"
    if name == "primitive":
        return None if isinstance(value, Primitive) else "must be a primitive"
    raise KeyError(name)


def check(
    params: ChannelParams,
    allowed_cpus: Iterable[int],
    primitives: Iterable[Primitive] = tuple(Primitive),
) -> None:
    """Raise UserError if any parameter (as --set gave it) is outside its domain, names a CPU
    we may not use, or a primitive app.yaml's constraints.primitives leaves out."""
    allowed = set(allowed_cpus)
    for name, value in vars(params).items():
        if (why := domain_error(name, value)) is not None:
            raise UserError(f"--set {name}={value}: {why}")
    for name in ("producer_cpu", "consumer_cpu"):
        cpu = getattr(params, name)
        if cpu >= 0 and cpu not in allowed:
            raise UserError(
                f"--set {name}={cpu}: not a CPU this process may run on {sorted(allowed)}"
            )
    if params.primitive not in (kept := tuple(primitives)):
        listed = ", ".join(kept)
        raise UserError(
            f"--set primitive={params.primitive}: app.yaml's constraints.primitives allows "
            f"only {listed}"
        )


def parse_overrides(assignments: Iterable[str]) -> dict[str, int | Primitive]:
    """Parse `--set NAME=VALUE` strings into typed values (domains are checked by `check`)."""
    overrides: dict[str, int | Primitive] = {}
    typed: dict[str, str] = {}
    for assignment in assignments:
        name, sep, raw = assignment.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep or not name or not raw:
            raise UserError(f"--set {assignment!r}: expected NAME=VALUE, e.g. --set buffers=4")
        if name not in PARAM_NAMES:
            raise UserError(f"--set {name}: unknown parameter{_suggest(name, PARAM_NAMES)}")
        if name in typed:  # which one was meant is not ours to guess
            raise UserError(f"--set {name} given twice ({typed[name]}, {raw}): give it once")
        typed[name] = raw
        overrides[name] = _parse_value(name, raw)
        if (why := domain_error(name, overrides[name])) is not None:
            raise UserError(f"--set {name}={raw}: {why}")
    return overrides


def spelled(name: str, value: int | Primitive) -> str:
    """One spelling of a parsed `--set` value, so that 64KiB and 65536, or 2us and 2000, are
    recorded alike: sizes and durations in their exact largest unit, the rest as numbers."""
    if isinstance(value, Primitive):
        return value.value
    if name in _SIZE_PARAMS:
        return format_size(value)
    if name in _DURATION_PARAMS:
        short = format_duration(value / 1e9)
        return short if parse_duration_ns(short) == value else f"{value}ns"
    return str(value)


def _parse_value(name: str, raw: str) -> int | Primitive:
    if name == "primitive":
        try:
            return Primitive(raw)
        except ValueError:
            names = [p.value for p in Primitive]
            raise UserError(
                f"--set primitive={raw}: unknown primitive{_suggest(raw, names)}; "
                f"choose one of {', '.join(names)}"
            ) from None
    if name in _SIZE_PARAMS:
        return _parsed(name, raw, parse_size)
    if name in _DURATION_PARAMS:  # as app.yaml's durations: a bare number is in ns
        ns = _parsed(name, raw, parse_duration_ns)
        if ns != int(ns):
            raise UserError(f"--set {name}={raw}: not a whole number of nanoseconds")
        return int(ns)
    try:
        return int(raw)
    except ValueError:
        raise UserError(f"--set {name}={raw}: not a whole number") from None


def _parsed(name: str, raw: str, parse: Callable[[str], _Value]) -> _Value:
    try:
        return parse(raw)
    except ValueError as err:  # the units' own message: what was wrong and the units allowed
        raise UserError(f"--set {name}={raw}: {err}") from None


def _suggest(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def apply(params: ChannelParams, overrides: Mapping[str, int | Primitive]) -> ChannelParams:
    return params.replace(**overrides) if overrides else params


def fit_memory(
    point: ChannelParams,
    fixed: Mapping[str, int | Primitive],
    max_buffer_memory: int,
    event_bytes: int,
) -> ChannelParams:
    """`point` within constraints.max_buffer_memory: the parameters `--set` left free give way
    (smaller buffers, then fewer); when the fixed ones alone exceed it, that is refused."""
    if point.buffers * point.buffer_bytes <= max_buffer_memory:
        return point
    one_event = max(LIMITS["buffer_bytes"].low, next_power_of_two(event_bytes))
    if "buffer_bytes" not in fixed:
        size = floor_power_of_two(max_buffer_memory // point.buffers)
        if size >= one_event:
            return point.replace(buffer_bytes=size)
    if "buffers" not in fixed:
        count = max_buffer_memory // point.buffer_bytes
        if count >= LIMITS["buffers"].low:
            return point.replace(buffers=count)
    buffers = point.buffers if "buffers" in fixed else LIMITS["buffers"].low
    size = point.buffer_bytes if "buffer_bytes" in fixed else one_event
    told = " and ".join(
        f"{name}={_spelled(name, getattr(point, name))}" for name in fixed if name in _MEMORY
    )
    raise UserError(
        f"--set {told}: {buffers} buffer(s) of {format_size(size)} take"
        f" {format_size(buffers * size)}, above constraints.max_buffer_memory"
        f" ({format_size(max_buffer_memory)}); what fits: "
        + _what_fits(buffers, size, max_buffer_memory, one_event)
    )


def _what_fits(buffers: int, size: int, max_buffer_memory: int, one_event: int) -> str:
    """The nearest channels within the bound, as `--set`s to paste: as many buffers as asked of
    the largest size that fits them, as many of the size asked as fit, the fewest buffers of the
    largest size, or the bound that the channel asked for needs."""
    low, high = LIMITS["buffers"].low, LIMITS["buffers"].high
    most = min(high, max_buffer_memory // size)
    pairs = [
        (buffers, floor_power_of_two(max_buffer_memory // buffers)),
        (most, size),
        (low, floor_power_of_two(max_buffer_memory // low)),
    ]
    fits = [(n, b) for n, b in dict.fromkeys(pairs) if n >= low and b >= one_event]
    said = [f"{n} buffers of {_pasted(n, b)}" for n, b in fits]
    # LIMITS bound buffers * buffer_bytes by 64 * 16 MiB: a bound app.yaml accepts (1 GiB).
    said.append(f"or constraints.max_buffer_memory: {format_size(buffers * size)} in app.yaml")
    return ", ".join(said)


def _pasted(buffers: int, size: int) -> str:
    return f"{format_size(size)} (--set buffers={buffers} --set buffer_bytes={format_size(size)})"


def _spelled(name: str, value: int | Primitive) -> str:
    return format_size(value) if name in _SIZE_PARAMS and isinstance(value, int) else str(value)
