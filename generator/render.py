"""Render C++ from the Jinja2 templates and the runtime headers.

The generated header is the runtime (runtime/hspc/*.hpp) with the tuned constants filled in and
re-wrapped into the user's namespace, so it stays self-contained. Rendering is deterministic: the
same inputs give the same bytes (sorted includes, no timestamps, no absolute paths).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

import jinja2

from hspc_gen import __version__, pinning
from hspc_gen.emit.header_text import comment_text, meson_string, shell_line
from hspc_gen.emit.provenance import TunedOn, initializer_lines
from hspc_gen.model import ChannelParams
from hspc_gen.model.pool import PoolTuning
from hspc_gen.model.threads import ThreadAdvice
from hspc_gen.model.workload import Workload

# The runtime headers that make up a generated header; their local includes decide the order.
RUNTIME_ROOTS = (
    "hspc/affinity.hpp",
    "hspc/channel.hpp",
    "hspc/fanout.hpp",
    "hspc/host_check.hpp",
    "hspc/pool.hpp",
)

_SYSTEM_INCLUDE = re.compile(r"^#include <([^>]+)>\s*$")
_LOCAL_INCLUDE = re.compile(r'^#include "(hspc/[^"]+)"\s*$')
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAMESPACE_OPEN = "namespace hspc {"
_NAMESPACE_CLOSE = "}  // namespace hspc"


@dataclass(frozen=True)
class RuntimeSource:
    """The runtime as one namespace-free body plus the system headers it needs."""

    system_includes: tuple[str, ...]
    body: str


@dataclass(frozen=True)
class Provenance:
    """What the header's banner says about how it was made (FFTW-style wisdom stamp)."""

    command: tuple[str, ...]  # the words of the command line (header_text quotes them)
    host_summary: str
    measured: tuple[str, ...]  # the measured figures, or what kTuning holds instead (banner)
    tuned_on: TunedOn  # the header's kTunedOn: what `hspc-gen check` and the header compare


@dataclass(frozen=True)
class HeaderSpec:
    name: str
    namespace: str
    params: ChannelParams
    provenance: Provenance
    threads: ThreadAdvice
    # The channel's latency bound (BasicChannel's MaxLatencyNs): a partly filled buffer is handed
    # over once its oldest event has waited this long. 0: no bound (buffers go when full or
    # flushed).
    max_latency_ns: int = 0
    # threads.consumers: adaptive: the pool controller's parameters (kPoolTuning), which the
    # header's ConsumerPool runs with by default. None: no kPoolTuning (PoolOptions' defaults).
    pool: PoolTuning | None = None
    # The file's own name, which its first line gives ("": <name>_channel.hpp, the default).
    file_name: str = ""

    def __post_init__(self) -> None:
        # C++ uses both as they are (the namespace, the file name in the first line): app.yaml
        # refuses any other (target.fields); a caller that skipped it is a bug, not bad input.
        for what, text in (("name", self.name), ("namespace", self.namespace)):
            if _IDENTIFIER.fullmatch(text) is None:
                raise ValueError(f"the header's {what} {text!r} is not a C++ identifier")


def _read_runtime(relative: str) -> str:
    return resources.files("hspc_gen.runtime").joinpath(relative).read_text(encoding="utf-8")


def _split_header(relative: str, text: str) -> tuple[list[str], list[str], str]:
    """Return (system includes, local includes, body inside `namespace hspc`)."""
    lines = text.splitlines()
    try:
        start = lines.index(_NAMESPACE_OPEN)
        end = len(lines) - 1 - lines[::-1].index(_NAMESPACE_CLOSE)
    except ValueError as err:
        raise RuntimeError(f"runtime header {relative} lacks its `namespace hspc` block") from err
    system, local = [], []
    for line in lines[:start]:
        if m := _SYSTEM_INCLUDE.match(line):
            system.append(m.group(1))
        elif m := _LOCAL_INCLUDE.match(line):
            local.append(m.group(1))
    return system, local, "\n".join(lines[start + 1 : end]).strip("\n")


@cache
def runtime_source() -> RuntimeSource:
    """The runtime headers in dependency order, each body once, includes merged and sorted."""
    order: list[str] = []
    parts: dict[str, tuple[list[str], str]] = {}

    def visit(relative: str) -> None:
        if relative in parts:
            return
        system, local, body = _split_header(relative, _read_runtime(relative))
        parts[relative] = (system, body)
        for dep in local:
            visit(dep)
        order.append(relative)

    for root in RUNTIME_ROOTS:
        visit(root)
    # C and POSIX headers first, then the C++ library: the order clang-format's Google style wants.
    includes = sorted(
        {inc for system, _ in parts.values() for inc in system},
        key=lambda name: (not name.endswith(".h"), name),
    )
    bodies = [f"// ---- {rel} ----\n{parts[rel][1]}" for rel in order]
    return RuntimeSource(tuple(includes), "\n\n".join(bodies))


def _load_template(name: str) -> str:
    return resources.files("hspc_gen.templates").joinpath(name).read_text(encoding="utf-8")


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(_load_template),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    # The header's comments hold text from outside (header_text): `comment` escapes it.
    env.filters["comment"] = comment_text
    env.filters["shell_line"] = shell_line
    env.filters["meson_string"] = meson_string
    return env


def render_header(spec: HeaderSpec) -> str:
    """The self-contained `<name>_channel.hpp` for one parameter point; its thread advice pins
    as kTuning does (generator/pinning), whichever advice the writer had at hand."""
    spec = dataclasses.replace(spec, threads=pinning.agreeing(spec.threads, spec.params))
    runtime = runtime_source()
    return (
        environment()
        .get_template("channel.hpp.j2")
        .render(
            spec=spec,
            params=spec.params,
            includes=runtime.system_includes,
            runtime_body=runtime.body,
            tuned_on_lines=initializer_lines(spec.provenance.tuned_on),
        )
    )


SAMPLE_KINDS = ("throughput", "latency", "paced", "pairs", "fanout")
"""The sample kinds a build may compile for its variants (harness/variant.hpp's Kind, less the
baselines and round_trip, which only the developer benchmarks run)."""


@dataclass(frozen=True)
class HarnessVariant:
    id: str
    params: ChannelParams


def _runtime_headers() -> dict[str, str]:
    """Every runtime and harness header, by its include path (hspc/..., harness/..., bench/...)."""
    root = resources.files("hspc_gen.runtime")
    files: dict[str, str] = {}
    for folder in ("hspc", "harness", "bench"):
        for entry in root.joinpath(folder).iterdir():
            if entry.name.endswith(".hpp"):
                files[f"{folder}/{entry.name}"] = entry.read_text(encoding="utf-8")
    return files


@dataclass(frozen=True)
class AppWork:
    """The app's own per-event C++: file name in the project -> text, and the sides it serves."""

    files: tuple[tuple[str, str], ...] = ()
    producer: bool = False
    consumer: bool = False
    include_dirs: tuple[str, ...] = ()  # the sources' own folders, for their local includes

    @classmethod
    def of(cls, workload: Workload) -> AppWork:
        """The app's source files (one file when both sides share it), read now."""
        sources = sorted({p for p in (workload.producer_source, workload.consumer_source) if p})
        files = tuple(
            (f"app_work_{i}.cpp", path.read_text(encoding="utf-8"))
            for i, path in enumerate(sources)
        )
        folders = tuple(sorted({str(path.parent) for path in sources}))
        producer, consumer = bool(workload.producer_source), bool(workload.consumer_source)
        return cls(files, producer, consumer, folders)

    @property
    def defines(self) -> tuple[str, ...]:
        return (("HSPC_APP_PRODUCER",) if self.producer else ()) + (
            ("HSPC_APP_CONSUMER",) if self.consumer else ()
        )


def render_harness_files(
    variants: tuple[HarnessVariant, ...],
    event_bytes: int,
    app: AppWork = AppWork(),
    max_latency_ns: int = 0,
    *,
    points_per_unit: int = 1,
    kinds: tuple[str, ...] = SAMPLE_KINDS,
) -> dict[str, str]:
    """The Meson project of one batch's benchmark binary: relative path -> text.

    Each distinct compile-time point is a function of its own (candidates that differ only in
    their CPUs share one, as placement is a run-time choice); `points_per_unit` of them share a
    translation unit (`unit_sources` names it), the variant table is `main.cpp`, and copies of
    the runtime and harness headers sit under `include/`, so the project stands alone. Every
    channel carries the latency bound `max_latency_ns` (0: none), as the header written for the
    winner will.
    """
    if max_latency_ns < 0:
        raise ValueError(f"max_latency_ns must be >= 0, got {max_latency_ns}")
    table = tuple(sorted(variants, key=lambda v: v.id))
    sources = unit_sources(table, points_per_unit)
    files = {f"include/{path}": text for path, text in _runtime_headers().items()}
    common = {
        "version": __version__,
        "event_bytes": event_bytes,
        "max_latency_ns": max_latency_ns,
    }
    files["meson.build"] = _harness_meson(sorted(set(sources.values())), app, common)
    files.update(app.files)
    files["main.cpp"] = (
        environment()
        .get_template("harness/main.cpp.j2")
        .render(variants=table, compiled=_compiled_points(table), compiled_id=compiled_id, **common)
    )
    files.update(_variant_units(table, sources, {**common, "kinds": kinds}))
    return files


def _variant_units(
    table: tuple[HarnessVariant, ...], sources: Mapping[str, str], common: Mapping[str, object]
) -> dict[str, str]:
    """Each translation unit of compile-time points, rendered."""
    template = environment().get_template("harness/variant.cpp.j2")
    compiled = _compiled_points(table)
    return {
        source: template.render(units=[u for u in compiled if sources[u.id] == source], **common)
        for source in sorted(set(sources.values()))
    }


def _compiled_points(variants: tuple[HarnessVariant, ...]) -> tuple[HarnessVariant, ...]:
    """The distinct compile-time points of the variants (their CPUs left out), by id."""
    units = {compiled_id(v): v.params.replace(producer_cpu=-1, consumer_cpu=-1) for v in variants}
    return tuple(HarnessVariant(cid, units[cid]) for cid in sorted(units))


def unit_sources(variants: tuple[HarnessVariant, ...], points_per_unit: int) -> dict[str, str]:
    """Compile-time point id -> the translation unit that holds it: the points in id order,
    `points_per_unit` to a unit (a unit of one point is named after it, `v_<id>.cpp`)."""
    if points_per_unit < 1:
        raise ValueError(f"points_per_unit must be >= 1, got {points_per_unit}")
    ids = [unit.id for unit in _compiled_points(variants)]
    out: dict[str, str] = {}
    for first in range(0, len(ids), points_per_unit):
        group = ids[first : first + points_per_unit]
        name = group[0] if len(group) == 1 else _group_id(group)
        out.update(dict.fromkeys(group, harness_source(name)))
    return out


def _group_id(ids: list[str]) -> str:
    digest = hashlib.sha1("\0".join(ids).encode(), usedforsecurity=False)
    return "g" + digest.hexdigest()[:10]


def _harness_meson(sources: list[str], app: AppWork, common: dict[str, object]) -> str:
    return (
        environment()
        .get_template("harness/meson.build.j2")
        .render(
            variant_sources=sources,
            app_sources=[name for name, _ in app.files],
            app_defines=app.defines,
            app_include_dirs=app.include_dirs,
            **common,
        )
    )


def compiled_id(variant: HarnessVariant) -> str:
    """The compile-time point a variant runs (its `run_<id>` function): its id with the CPUs
    left out."""
    unpinned = variant.params.replace(producer_cpu=-1, consumer_cpu=-1)
    digest = hashlib.sha1(repr(sorted(unpinned.identity().items())).encode(), usedforsecurity=False)
    return "u" + digest.hexdigest()[:10]


def harness_source(unit_id: str) -> str:
    return f"v_{unit_id}.cpp"


CONTEST_HEADER = "tuned.hpp"
CONTEST_ASSERTS_HEADER = "tuned_asserts.hpp"
ASSERTS_SUFFIX = "_asserts"


def render_contest_files(
    params: ChannelParams,
    event_bytes: int,
    header_text: str,
    namespace: str,
    *,
    tuned_rows: tuple[str, ...],
    app: AppWork = AppWork(),
) -> dict[str, str]:
    """`hspc-gen bench`'s Meson project: the user's generated header (`namespace`) compiled as
    it is and, renamed to `<namespace>_asserts`, once more with asserts on (a second namespace,
    so the two builds of one template never meet at link time), beside the peers and the
    harness under `include/`. `tuned_rows` are the run functions the tuned translation units
    define (`run_<row>`); a unit none of them is in is left out."""
    env = environment()
    common = {"version": __version__, "event_bytes": event_bytes}
    files = {f"include/{path}": text for path, text in _runtime_headers().items()}
    files.update(app.files)
    files[CONTEST_HEADER] = header_text
    files[CONTEST_ASSERTS_HEADER] = _renamed(header_text, namespace, namespace + ASSERTS_SUFFIX)
    present = _tuned_units(env, files, namespace, tuned_rows, common)
    files["main.cpp"] = env.get_template("bench/main.cpp.j2").render(
        params=params, tuned_rows=tuned_rows, **common
    )
    files["meson.build"] = env.get_template("bench/meson.build.j2").render(
        app_sources=[name for name, _ in app.files],
        app_defines=app.defines,
        app_include_dirs=app.include_dirs,
        **present,
        **common,
    )
    return files


def _tuned_units(
    env: jinja2.Environment,
    files: dict[str, str],
    namespace: str,
    tuned_rows: tuple[str, ...],
    common: Mapping[str, object],
) -> dict[str, bool]:
    """tuned.cpp and tuned_asserts.cpp into `files`, each only where one of `tuned_rows` is in
    it (a unit that did not compile is left out with its rows: search.contest); which are."""
    tuned = env.get_template("bench/tuned.cpp.j2")
    present = {}
    for unit, suffix in (("tuned", ""), ("asserts", ASSERTS_SUFFIX)):
        present[unit] = any(row.endswith(ASSERTS_SUFFIX) == bool(suffix) for row in tuned_rows)
        if present[unit]:
            header = CONTEST_ASSERTS_HEADER if suffix else CONTEST_HEADER
            files[f"tuned{suffix}.cpp"] = tuned.render(
                header=header, namespace=namespace + suffix, suffix=suffix, **common
            )
    return present


def _renamed(header_text: str, namespace: str, new: str) -> str:
    """The header with its namespace renamed (it opens it once, on a line of its own)."""
    opening = f"namespace {namespace} {{\n"
    if header_text.count(opening) != 1:
        raise ValueError(f"the header does not open namespace {namespace} once")
    return header_text.replace(opening, f"namespace {new} {{\n")
