"""The channel parameters' domains, and `--set NAME=VALUE` overrides checked against them."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

from hspc_gen.errors import UserError
from hspc_gen.model import (
    LIMITS,
    PARAM_NAMES,
    ChannelParams,
    Primitive,
    floor_power_of_two,
    next_power_of_two,
)
from hspc_gen.units import parse_size

_SIZE_PARAMS = frozenset({"padding_bytes", "stack_offset_bytes", "buffer_bytes", "prefetch_bytes"})
_MEMORY = ("buffers", "buffer_bytes")


def domain_error(name: str, value: object) -> str | None:
    """Why `value` is outside the domain of parameter `name`, or None when it is inside."""
    if name in LIMITS:
        limit = LIMITS[name]
        ok = isinstance(value, int) and not isinstance(value, bool) and limit.allows(value)
        return None if ok else limit.describe()
    if name in ("producer_cpu", "consumer_cpu"):
        ok = isinstance(value, int) and value >= -1
        return None if ok else "must be a CPU id, or -1 for not pinned"
    if name == "primitive":
        return None if isinstance(value, Primitive) else "must be a primitive"
    raise KeyError(name)


def check(params: ChannelParams, allowed_cpus: Iterable[int]) -> None:
    """Raise UserError if any parameter is outside its domain or names a CPU we may not use."""
    allowed = set(allowed_cpus)
    for name, value in vars(params).items():
        if (why := domain_error(name, value)) is not None:
            raise UserError(f"{name}={value}: {why}")
    for name in ("producer_cpu", "consumer_cpu"):
        cpu = getattr(params, name)
        if cpu >= 0 and cpu not in allowed:
            raise UserError(f"{name}={cpu}: not a CPU this process may run on {sorted(allowed)}")


def parse_overrides(assignments: Iterable[str]) -> dict[str, int | Primitive]:
    """Parse `--set NAME=VALUE` strings into typed values (domains are checked by `check`)."""
    overrides: dict[str, int | Primitive] = {}
    for assignment in assignments:
        name, sep, raw = assignment.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep or not name or not raw:
            raise UserError(f"--set {assignment!r}: expected NAME=VALUE, e.g. --set buffers=4")
        if name not in PARAM_NAMES:
            raise UserError(f"--set {name}: unknown parameter{_suggest(name, PARAM_NAMES)}")
        overrides[name] = _parse_value(name, raw)
        if (why := domain_error(name, overrides[name])) is not None:
            raise UserError(f"--set {name}={raw}: {why}")
    return overrides


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
    try:
        return parse_size(raw) if name in _SIZE_PARAMS else int(raw)
    except ValueError:
        raise UserError(f"--set {name}={raw}: not a whole number") from None


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
    told = " and ".join(f"{name}={getattr(point, name)}" for name in fixed if name in _MEMORY)
    raise UserError(
        f"--set {told}: {buffers} buffer(s) of {size} B take {buffers * size} B, above"
        f" constraints.max_buffer_memory ({max_buffer_memory} B); at most"
        f" {max_buffer_memory // size} buffer(s) of {size} B fit"
    )
