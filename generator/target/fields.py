"""app.yaml's field types: names that must be C++ identifiers, choices among the model's enums,
thread counts, and paths resolved against app.yaml's folder. `target.app` builds its models from
these; each raises ValueError with a message a person can act on."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path, PurePath
from typing import Annotated, Literal, TypeVar

from pydantic import BeforeValidator, Field, PlainValidator, ValidationInfo

from hspc_gen.model import MAX_THREADS, Objective, PinThreads, Primitive
from hspc_gen.target.units import describe_input
from hspc_gen.target.yaml_source import did_you_mean

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


def valid_name(value: object) -> str:
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


ADAPTIVE = "adaptive"
"""threads.consumers: adaptive: the count the thread search finds is where the generated
ConsumerPool starts, and its controller (parameters chosen for the host: kPoolTuning) moves it."""


def _consumer_count(value: object) -> int | str:
    if value == ADAPTIVE:
        return ADAPTIVE
    try:
        return _thread_count(value)
    except ValueError:
        wanted = f"'auto', '{ADAPTIVE}' or a whole number from 1 to {MAX_THREADS}"
        raise ValueError(f"expected {wanted}, got {describe_input(value)}") from None


def _producer_count(value: object) -> int | str:
    if value == ADAPTIVE:  # the pool adapts its own threads; the producers are the app's
        raise ValueError(
            f"'{ADAPTIVE}' is for threads.consumers only: the pool grows and shrinks its"
            " consumers, the producers are the application's own threads ('auto' or a number)"
        )
    return _thread_count(value)


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
    if "\n" in str(path) or "\r" in str(path):  # Meson passes its folder to Ninja, which cannot
        raise ValueError(f"{str(path)!r} has a line break: the build cannot take it (rename it)")
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


_NAME_PATTERN = Annotated[str, Field(pattern="^[a-z](_?[a-z0-9])*_?$")]
_NAMESPACE_PATTERN = Annotated[str, Field(pattern="^[A-Za-z](_?[A-Za-z0-9])*_?$")]
Name = Annotated[str, BeforeValidator(valid_name, json_schema_input_type=_NAME_PATTERN)]
Namespace = Annotated[str, BeforeValidator(_namespace, json_schema_input_type=_NAMESPACE_PATTERN)]
PrimitiveName = Annotated[Primitive, BeforeValidator(_choice(Primitive, "primitive"))]
ObjectiveName = Annotated[Objective, BeforeValidator(_choice(Objective, "objective"))]
PinThreadsName = Annotated[PinThreads, BeforeValidator(_choice(PinThreads, "pin_threads mode"))]
_COUNT = Annotated[int, Field(ge=1, le=MAX_THREADS)]
ThreadCount = Annotated[
    int | Literal["auto"],
    BeforeValidator(_producer_count, json_schema_input_type=_COUNT | Literal["auto"]),
]
ConsumerCount = Annotated[
    int | Literal["auto", "adaptive"],
    BeforeValidator(_consumer_count, json_schema_input_type=_COUNT | Literal["auto", "adaptive"]),
]
SourceFile = Annotated[Path | None, PlainValidator(_source_file, json_schema_input_type=str | None)]
HeaderFile = Annotated[Path, PlainValidator(_header_file, json_schema_input_type=str)]
ReportFolder = Annotated[Path, PlainValidator(_report_folder, json_schema_input_type=str)]
