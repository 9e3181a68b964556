"""The target: what app.yaml asks the tuner for, as frozen pydantic models.

`load_target(path, overrides)` is the one entry point. Every bad input becomes one UserError that
names the file, the dotted key and the line. The CLI's `--budget TEXT` is passed as the override
`{"budget": TEXT}`, so it is checked and reported exactly as the YAML key would be (rather than a
`model_copy`, which would skip validation).

Relative paths in app.yaml are relative to app.yaml's folder. Model code that validates without
load_target passes that folder as `context={"base_dir": folder}` (default: the current folder).

generator/schema/app.schema.json is generated from these models:
`python -m hspc_gen.target.app --write-schema` rewrites it after a change.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePath
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from hspc_gen.errors import UserError
from hspc_gen.model import Objective, PinThreads, Primitive, smallest_buffer_memory
from hspc_gen.model import workload as model_workload
from hspc_gen.target.fields import (
    ADAPTIVE,
    ConsumerCount,
    HeaderFile,
    Name,
    Namespace,
    ObjectiveName,
    PinThreadsName,
    PrimitiveName,
    ReportFolder,
    SourceFile,
    ThreadCount,
    valid_name,
)
from hspc_gen.target.units import duration_field, format_size, parse_size, size_field
from hspc_gen.target.yaml_source import LocatedError, load_yaml_mapping, validate

SCHEMA_PATH = Path(__file__).parents[1] / "schema" / "app.schema.json"

MAX_EVENT_BYTES = 65536
MAX_ALIGN_BYTES = 4096  # a page: beyond it alignment buys nothing for a buffer of events
DEFAULT_ALIGN_CAP = 64  # a cache line: the widest alignment an event type plausibly asks for
MIN_BUFFER_MEMORY = 128
MAX_BUFFER_MEMORY = 1 << 30
MAX_WORK_NS = 1e6  # 1 ms of synthetic work per event is already far beyond a channel's concern
MAX_LATENCY_US = 1e6
MIN_BUDGET_S, MAX_BUDGET_S = 1.0, 86400.0


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
    compiled with the benchmark (C++17) and called once per event on their own thread; when the
    thread search (`threads: auto`) tries several producers or consumers, each thread calls them
    at the same time, so they must be safe to call concurrently (or fix the counts at 1).
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
    def sources(self) -> tuple[Path, ...]:
        """The app's own source files, as given (none for synthetic work)."""
        return tuple(p for p in (self.producer_source, self.consumer_source) if p is not None)

    def value(self) -> model_workload.Workload:
        """The frozen value the stages take: pydantic stays at this edge."""
        return model_workload.Workload(
            self.producer_ns,
            self.consumer_ns,
            self.consumer_bytes,
            self.producer_source,
            self.consumer_source,
        )

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
    consumers: ConsumerCount = "auto"
    """Consumer threads: 1 to 1024, auto or adaptive. Default auto. adaptive: chosen as auto,
    and the header's ConsumerPool starts there and grows and shrinks at run time, its controller's
    parameters (interval, grow wait, limits) chosen for this host in kPoolTuning."""

    @property
    def adaptive(self) -> bool:
        """Whether the consumers adapt at run time (threads.consumers: adaptive)."""
        return self.consumers == ADAPTIVE

    @property
    def consumer_count(self) -> int | Literal["auto"]:
        """The consumers the thread search is asked for: adaptive starts where auto ends."""
        return self.consumers if isinstance(self.consumers, int) else "auto"

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
        least = smallest_buffer_memory(self.event.stride)
        if self.constraints.max_buffer_memory < least:
            raise LocatedError(
                ("constraints", "max_buffer_memory"),
                f"{format_size(self.constraints.max_buffer_memory)} admits no channel for"
                f" {format_size(self.event.stride)} events: two buffers of one event each take"
                f" {format_size(least)}; allow at least that",
            )
        return self


_SECTIONS = frozenset({"event", "workload", "constraints", "threads", "output"})


def _output_defaults(name: object, output: dict[str, Any]) -> dict[str, Any]:
    try:
        stem = valid_name(name)
    except ValueError:
        stem = "channel"  # the bad name is reported once, at `name`, not again in each default
    output = {key: value for key, value in output.items() if value is not None}
    output.setdefault("header", f"{stem}_channel.hpp")
    output.setdefault("namespace", stem)
    header = output["header"]
    folder = PurePath(header).parent if isinstance(header, str) else PurePath()
    output.setdefault("report", str(folder / f"{stem}_report"))
    return output


def load_target(
    path: Path,
    overrides: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> Target:
    """The Target in the app.yaml at `path`, with `overrides` ({"budget": "2m"}) applied first;
    a bad override is blamed on its label ({"budget": "--budget 2m"}) when given.

    Raises UserError with one message (the file, the dotted key, the line) on any bad input.
    """
    source = load_yaml_mapping(path)
    if overrides:
        source = source.with_overrides(overrides, labels)
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
        print("usage: python -m hspc_gen.target.app (--write-schema | APP_YAML)", file=sys.stderr)
        return 2
    try:
        print(load_target(Path(argv[0])).model_dump_json(indent=2))
    except UserError as error:
        print(error, file=sys.stderr)
        return error.exit_status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
