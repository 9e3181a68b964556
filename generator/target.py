"""The target: what app.yaml asks the tuner for, as frozen pydantic models.

`load_target(path, overrides)` is the one entry point. Every bad input becomes one UserError that
names the file, the dotted key and the line. The CLI's `--budget TEXT` is passed as the override
`{"budget": TEXT}`, so it is checked and reported exactly as the YAML key would be (rather than a
`model_copy`, which would skip validation).

Relative paths in app.yaml are relative to app.yaml's folder. Model code that validates without
load_target passes that folder as `context={"base_dir": folder}` (default: the current folder).

generator/schema/app.schema.json is generated from these models:
`python -m hspc_gen.target --write-schema` rewrites it after a change.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePath
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationInfo,
    field_validator,
    model_validator,
)

from hspc_gen.errors import UserError
from hspc_gen.model import MAX_THREADS, Objective, PinThreads, Primitive
from hspc_gen.units import describe_input, duration_field, format_size, parse_size, size_field
from hspc_gen.yaml_source import LocatedError, did_you_mean, load_yaml_mapping, validate

SCHEMA_PATH = Path(__file__).parent / "schema" / "app.schema.json"

MAX_EVENT_BYTES = 65536
MAX_ALIGN_BYTES = 4096  # a page: beyond it alignment buys nothing for a buffer of events
DEFAULT_ALIGN_CAP = 64  # a cache line: the widest alignment an event type plausibly asks for
MIN_BUFFER_MEMORY = 128
MAX_BUFFER_MEMORY = 1 << 30
MAX_WORK_NS = 1e6  # 1 ms of synthetic work per event is already far beyond a channel's concern
MAX_LATENCY_US = 1e6
MIN_BUDGET_S, MAX_BUDGET_S = 1.0, 86400.0

_NAME_RE = re.compile(r"[a-z_][a-z0-9_]*")
_CPP_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# C++17 keywords and alternative tokens, plus C++20's, so a header stays valid when compiled later.
_KEYWORD_TEXT = """
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
    char32_t class compl concept const consteval constexpr constinit const_cast continue
    co_await co_return co_yield decltype default delete do double dynamic_cast else enum
    explicit export extern false float for friend goto if inline int long mutable namespace new
    noexcept not not_eq nullptr operator or or_eq private protected public register
    reinterpret_cast requires return short signed sizeof static static_assert static_cast struct
    switch template this thread_local throw true try typedef typeid typename union unsigned
    using virtual void volatile wchar_t while xor xor_eq
"""
_CPP_KEYWORDS = frozenset(_KEYWORD_TEXT.split())
_RESERVED_NAMESPACES = frozenset({"std", "posix"})

_E = TypeVar("_E", Primitive, Objective, PinThreads)


def _check_cpp_name(value: str, what: str) -> str:
    if value in _CPP_KEYWORDS:
        raise ValueError(f"'{value}' is a C++ keyword and cannot be a {what}")
    if value.startswith("_") or "__" in value:
        # Reserved to the implementation ([lex.name]): a leading underscore at global scope,
        # a double underscore anywhere; derived names (header guards) would inherit it.
        raise ValueError(f"'{value}' is reserved in C++: no leading '_' and no '__'")
    if value in _RESERVED_NAMESPACES:
        raise ValueError(f"'{value}' is reserved in C++ for the standard library")
    return value


def _name(value: object) -> str:
    if not isinstance(value, str) or _NAME_RE.fullmatch(value) is None:
        raise ValueError(
            f"expected a lower-case identifier such as my_app (a-z, 0-9 and _),"
            f" got {describe_input(value)}"
        )
    return _check_cpp_name(value, "name")


def _namespace(value: object) -> str:
    if not isinstance(value, str) or _CPP_IDENTIFIER_RE.fullmatch(value) is None:
        raise ValueError(f"expected a C++ identifier, got {describe_input(value)}")
    return _check_cpp_name(value, "namespace")


def _choice(kind: type[_E], what: str) -> Callable[[object], _E]:
    names = [member.value for member in kind]

    def check(value: object) -> _E:
        if isinstance(value, kind):
            return value
        if isinstance(value, str) and value in names:
            return kind(value)
        if isinstance(value, str):
            raise ValueError(f"unknown {what} '{value}' ({did_you_mean(value, names)})")
        raise ValueError(f"expected one of {', '.join(names)}; got {describe_input(value)}")

    return check


def _thread_count(value: object) -> int | str:
    if value == "auto":
        return "auto"
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_THREADS:
        wanted = f"'auto' or a whole number from 1 to {MAX_THREADS}"
        raise ValueError(f"expected {wanted}, got {describe_input(value)}")
    return value


def _resolve(value: object, info: ValidationInfo) -> Path:
    if isinstance(value, PurePath):  # a dumped Target validated again
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a file path, got {describe_input(value)}")
    base = Path((info.context or {}).get("base_dir", Path.cwd()))
    return (base / value).resolve()


def _source_file(value: object, info: ValidationInfo) -> Path | None:
    if value is None:
        return None
    path = _resolve(value, info)
    if not path.is_file():
        problem = "is a directory, not a file" if path.is_dir() else "does not exist"
        raise ValueError(f"'{value}' {problem} (looked for {path})")
    return path


def _header_file(value: object, info: ValidationInfo) -> Path:
    path = _resolve(value, info)
    if path.is_dir():
        raise ValueError(f"'{value}' is a directory; the header must be a file ({path})")
    return path


def _report_folder(value: object, info: ValidationInfo) -> Path:
    path = _resolve(value, info)
    if path.exists() and not path.is_dir():
        raise ValueError(f"'{value}' is a file; the report must go in a folder ({path})")
    return path


def default_align(size: int) -> int:
    """The largest power of two dividing `size`, at most DEFAULT_ALIGN_CAP: what a C++ struct of
    that size could need at most, so a natural event type never ends up misaligned."""
    return min(size & -size, DEFAULT_ALIGN_CAP) if size > 0 else 1


def _config(*derived: str) -> ConfigDict:
    """The models' config. `derived` keys default to values computed from other keys (a
    before-validator fills them in); their placeholders are never used, so the schema omits them."""

    def edit(schema: dict[str, Any]) -> None:
        for key in derived:
            schema["properties"][key].pop("default", None)

    return ConfigDict(
        frozen=True, extra="forbid", use_attribute_docstrings=True, json_schema_extra=edit
    )


# The schema's patterns also keep out a leading "_" and "__"; keywords are left to validation.
_NAME_PATTERN = Annotated[str, Field(pattern="^[a-z](_?[a-z0-9])*_?$")]
_NAMESPACE_PATTERN = Annotated[str, Field(pattern="^[A-Za-z](_?[A-Za-z0-9])*_?$")]
Name = Annotated[str, BeforeValidator(_name, json_schema_input_type=_NAME_PATTERN)]
Namespace = Annotated[str, BeforeValidator(_namespace, json_schema_input_type=_NAMESPACE_PATTERN)]
PrimitiveName = Annotated[Primitive, BeforeValidator(_choice(Primitive, "primitive"))]
ObjectiveName = Annotated[Objective, BeforeValidator(_choice(Objective, "objective"))]
PinThreadsName = Annotated[PinThreads, BeforeValidator(_choice(PinThreads, "pin_threads mode"))]
ThreadCount = Annotated[
    int | Literal["auto"],
    BeforeValidator(
        _thread_count,
        json_schema_input_type=Annotated[int, Field(ge=1, le=MAX_THREADS)] | Literal["auto"],
    ),
]
SourceFile = Annotated[Path | None, PlainValidator(_source_file, json_schema_input_type=str | None)]
HeaderFile = Annotated[Path, PlainValidator(_header_file, json_schema_input_type=str)]
ReportFolder = Annotated[Path, PlainValidator(_report_folder, json_schema_input_type=str)]


class Event(BaseModel):
    """One event handed from the producer to the consumer: a block of `size` bytes."""

    model_config = _config("align")

    size: Annotated[int, size_field(1, MAX_EVENT_BYTES)]
    """Bytes per event, 1 to 64KiB: 8, "512B", "4KiB". Required."""
    align: Annotated[int, size_field(1, MAX_ALIGN_BYTES, power_of_two=True)] = 0  # see _config
    """Alignment of each event in a buffer: a power of two, 1 to 4096. Default: the largest power
    of two dividing size, at most 64 (8 for 8-byte events, 4 for 12-byte ones, 64 for 256)."""

    @model_validator(mode="before")
    @classmethod
    def _default_align(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("align") is None:
            try:
                size = parse_size(data.get("size"))  # type: ignore[arg-type]
            except ValueError:
                size = 1  # the bad size is reported at `size`; don't echo it at `align`
            return {**data, "align": default_align(size)}
        return data

    @property
    def stride(self) -> int:
        """Bytes from one event to the next in a buffer: size rounded up to align."""
        return -(-self.size // self.align) * self.align


class Workload(BaseModel):
    """What the producer and the consumer do per event: Stage Two runs it in every sample (Stage
    One runs `Workload()`, the idealised producer and consumer that only move events).

    Per side, either synthetic work (`producer_ns`; `consumer_ns` and `consumer_bytes`),
    calibrated on the host, or real work in a C++ source file, never both (0 counts as none).
    A producer source defines `void hspc_produce(std::uint64_t seq, void* event, std::size_t size)`,
    which fills one event (seq counts from 0); a consumer source defines
    `void hspc_consume(const void* event, std::size_t size)`, which processes one event. Both are
    compiled with the benchmark (C++17) and called once per event on their own thread.
    """

    model_config = _config()

    producer_ns: Annotated[float, duration_field("ns", 0, MAX_WORK_NS)] = 0.0
    """Synthetic producer work per event, in ns (or "40ns", "1.5us"); 0 to 1ms. Default 0."""
    consumer_ns: Annotated[float, duration_field("ns", 0, MAX_WORK_NS)] = 0.0
    """Synthetic consumer work per event, in ns (or "15ns"); 0 to 1ms. Default 0."""
    consumer_bytes: Annotated[int, size_field(0, MAX_BUFFER_MEMORY)] = 0
    """Working set the synthetic consumer touches, a size (0 to 1GiB). Default 0: none."""
    producer_source: SourceFile = None
    """C++ file defining hspc_produce, relative to app.yaml's folder. Default: none."""
    consumer_source: SourceFile = None
    """C++ file defining hspc_consume, relative to app.yaml's folder. Default: none."""

    @property
    def expected_ns_per_event(self) -> float:
        """A guess before measuring, to size probes and timeouts: the slower side's synthetic
        work, at least 2 ns, and at least 1 µs when the app's own (unmeasured) code runs."""
        guess = max(self.producer_ns, self.consumer_ns, 2.0)
        if self.producer_source or self.consumer_source:
            guess = max(guess, 1000.0)
        return guess

    @model_validator(mode="after")
    def _one_kind_of_work_per_side(self) -> Workload:
        pairs = (
            ("producer_ns", "producer_source"),
            ("consumer_ns", "consumer_source"),
            ("consumer_bytes", "consumer_source"),
        )
        for synthetic, source in pairs:
            # By value, not by key: a dumped Target (producer_ns=0.0 beside a source) re-validates.
            if getattr(self, synthetic) and getattr(self, source) is not None:
                raise LocatedError(
                    (source,),
                    f"give either {synthetic} (synthetic work) or {source} (real work), not both",
                )
        return self


class Constraints(BaseModel):
    """Limits on what the tuner may choose."""

    model_config = _config()

    primitives: Annotated[
        tuple[PrimitiveName, ...], Field(json_schema_extra={"minItems": 1, "uniqueItems": True})
    ] = tuple(Primitive)
    """Synchronization primitives to consider, a non-empty list of condvar, mutex, spinlock,
    backoff_spin, pause_spin, futex, hybrid. Default: all of them."""
    max_buffer_memory: Annotated[int, size_field(MIN_BUFFER_MEMORY, MAX_BUFFER_MEMORY)] = 4 << 20
    """Most memory all buffers together may take, a size: 128B to 1GiB. Default 4MiB."""
    max_latency_us: Annotated[
        float | None, duration_field("us", 1e-3, MAX_LATENCY_US, optional=True)
    ] = None
    """Most time an event may wait in the channel, in µs (or "50us", "2ms"). Default: no limit."""
    pin_threads: PinThreadsName = PinThreads.auto
    """Pin producer and consumer to CPUs: auto (only when measured better), never, always."""

    @field_validator("primitives")
    @classmethod
    def _distinct(cls, primitives: tuple[Primitive, ...]) -> tuple[Primitive, ...]:
        if not primitives:
            raise ValueError("name at least one primitive")
        for index, primitive in enumerate(primitives):
            if primitive in primitives[:index]:
                raise LocatedError((index,), f"'{primitive}' is listed twice")
        return tuple(p for p in Primitive if p in primitives)  # declaration order: stable hashes


class Threads(BaseModel):
    """How many producer and consumer threads; "auto" lets the tuner choose."""

    model_config = _config()

    producers: ThreadCount = "auto"
    """Producer threads: 1 to 1024 or auto. Default auto."""
    consumers: ThreadCount = "auto"
    """Consumer threads: 1 to 1024 or auto. Default auto."""

    @model_validator(mode="after")
    def _every_producer_has_a_consumer(self) -> Threads:
        p, c = self.producers, self.consumers
        if isinstance(p, int) and isinstance(c, int) and c < p:
            raise LocatedError(
                ("consumers",), f"{c} consumers for {p} producers: every producer needs its own"
            )
        return self


class Output(BaseModel):
    """Where the results go. Relative paths are relative to app.yaml's folder."""

    model_config = _config("header", "namespace", "report")

    header: HeaderFile = Path()  # placeholders, see _config
    """The generated header. Default: <name>_channel.hpp next to app.yaml."""
    namespace: Namespace = ""
    """C++ namespace of the generated code: an identifier, not a keyword. Default: the name."""
    report: ReportFolder = Path()
    """Folder for the tuning report. Default: <name>_report next to the header."""


class Target(BaseModel):
    """An app.yaml: the channel to tune, the work around it, the limits and the outputs."""

    model_config = _config("output")

    name: Name
    """The channel's name, [a-z_][a-z0-9_]* (no leading '_', no '__', not a C++ keyword); the
    header is <name>_channel.hpp. Required."""
    event: Event
    """The events the channel carries. Required (event.size)."""
    workload: Workload = Field(default_factory=Workload)
    """Per-event producer and consumer work. Default: none (the bare channel)."""
    objective: ObjectiveName = Objective.throughput
    """What the tuner optimises: throughput (time per event), latency (push to pop) or
    efficiency (CPU time per event, both threads). Default throughput."""
    constraints: Constraints = Field(default_factory=Constraints)
    """Limits on the tuner's choices."""
    threads: Threads = Field(default_factory=Threads)
    """Thread counts."""
    output: Output = Field(default_factory=Output)  # a placeholder, see _config
    """Output paths and names. Defaults derive from name."""
    budget: Annotated[float, duration_field("s", MIN_BUDGET_S, MAX_BUDGET_S)] = 120.0
    """Tuning time budget in seconds (or "90s", "2m", "1h"): 1s to 24h. Default 120s."""

    @model_validator(mode="before")
    @classmethod
    def _derive_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        # A section whose keys are all commented out reads as null: that means "all defaults".
        data = {k: {} if v is None and k in _SECTIONS else v for k, v in data.items()}
        output = data.setdefault("output", {})
        if isinstance(output, dict):
            data["output"] = _output_defaults(data.get("name"), output)
        return data

    @model_validator(mode="after")
    def _two_events_fit(self) -> Target:
        if self.constraints.max_buffer_memory < 2 * self.event.stride:
            raise LocatedError(
                ("constraints", "max_buffer_memory"),
                f"{format_size(self.constraints.max_buffer_memory)} cannot hold two"
                f" {format_size(self.event.stride)} events (the least a channel double-buffers)",
            )
        return self


_SECTIONS = frozenset({"event", "workload", "constraints", "threads", "output"})


def _output_defaults(name: object, output: dict[str, Any]) -> dict[str, Any]:
    try:
        stem = _name(name)
    except ValueError:
        stem = "channel"  # the bad name is reported once, at `name`, not again in each default
    output = {key: value for key, value in output.items() if value is not None}
    output.setdefault("header", f"{stem}_channel.hpp")
    output.setdefault("namespace", stem)
    header = output["header"]
    folder = PurePath(header).parent if isinstance(header, str) else PurePath()
    output.setdefault("report", str(folder / f"{stem}_report"))
    return output


def load_target(path: Path, overrides: Mapping[str, str] | None = None) -> Target:
    """The Target in the app.yaml at `path`, with `overrides` ({"budget": "2m"}) applied first.

    Raises UserError with one message (the file, the dotted key, the line) on any bad input.
    """
    source = load_yaml_mapping(path)
    if overrides:
        source = source.with_overrides(overrides)
    return validate(source, Target, context={"base_dir": path.absolute().parent})


def schema_text() -> str:
    """The JSON Schema of app.yaml, byte for byte as committed in SCHEMA_PATH."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **Target.model_json_schema(mode="validation"),
    }
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: Sequence[str]) -> int:
    """`--write-schema` regenerates SCHEMA_PATH; `FILE` prints the resolved target as JSON."""
    if list(argv) == ["--write-schema"]:
        SCHEMA_PATH.write_text(schema_text(), encoding="utf-8")
        return 0
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: python -m hspc_gen.target (--write-schema | APP_YAML)", file=sys.stderr)
        return 2
    try:
        print(load_target(Path(argv[0])).model_dump_json(indent=2))
    except UserError as error:
        print(error, file=sys.stderr)
        return error.exit_status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
