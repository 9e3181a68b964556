"""Read a YAML mapping and remember where every key and value came from.

PyYAML's safe_load forgets line numbers and silently keeps the last of two equal keys. Here the
document is composed into a node tree first: the walk over that tree rejects duplicate and
non-string keys and records the line of every key and value by path, and the same tree is then
constructed into plain Python data. Every problem becomes one UserError that names the file and,
where the YAML gives one, the line.
"""

from __future__ import annotations

import copy
import difflib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from hspc_gen.errors import UserError
from hspc_gen.target.units import describe_input

Loc = tuple[str | int, ...]
"""A path into the document: ("constraints", "primitives", 2) is constraints.primitives[2]."""

_STR_TAG = "tag:yaml.org,2002:str"
_NULL_TAG = "tag:yaml.org,2002:null"
_OVERRIDE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def dotted(loc: Loc) -> str:
    """("constraints", "primitives", 2) -> "constraints.primitives[2]"."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else part
    return text


@dataclass(frozen=True)
class YamlSource:
    """A parsed mapping document with the line of every key and value, by path."""

    path: Path
    data: dict[str, object]
    value_lines: Mapping[Loc, int] = field(default_factory=dict)
    key_lines: Mapping[Loc, int] = field(default_factory=dict)
    overrides: Mapping[Loc, str] = field(default_factory=dict)

    def message(self, loc: Loc, text: str, *, at_key: bool = False) -> str:
        """`text` prefixed with the file and line of `loc` (or of its nearest ancestor).

        at_key points at the key rather than its value: what an unknown key wants.
        """
        for length in range(len(loc), -1, -1):
            if loc[:length] in self.overrides:
                return f"{text} (from {self.overrides[loc[:length]]})"
        line = self.line(loc, at_key=at_key)
        return f"{self.path}:{line}: {text}" if line else f"{self.path}: {text}"

    def line(self, loc: Loc, *, at_key: bool = False) -> int | None:
        """The line of `loc`'s value (or key), else of its nearest ancestor's key, else None."""
        if loc in self.value_lines and not at_key:
            return self.value_lines[loc]
        # A missing key has no line of its own: its parent's key line is where it belongs.
        for length in range(len(loc), 0, -1):
            if loc[:length] in self.key_lines:
                return self.key_lines[loc[:length]]
        return None

    def with_overrides(
        self, overrides: Mapping[str, str], labels: Mapping[str, str] | None = None
    ) -> YamlSource:
        """A copy with `dotted.key=value` pairs set; each value is read as a YAML scalar or list.
        A problem with one is blamed on its label (e.g. "--budget 2x"), not on the file."""
        data = copy.deepcopy(self.data)
        recorded = dict(self.overrides)
        for key, text in overrides.items():
            label = (labels or {}).get(key, f"override '{key}={text}'")
            where = f"{self.path}: {label}"
            if _OVERRIDE_KEY.fullmatch(key) is None:
                raise UserError(
                    f"{where}: '{key}' is not a dotted key such as budget or event.size"
                )
            parts = key.split(".")
            _set_path(data, parts, _parse_override(text, where), where)
            recorded[tuple(parts)] = label
        return YamlSource(self.path, data, self.value_lines, self.key_lines, recorded)


def load_yaml_mapping(path: Path) -> YamlSource:
    """The mapping in the YAML file at `path`; a UserError for anything else."""
    text = _read_text(path)
    try:
        loader = yaml.SafeLoader(text)
    except yaml.reader.ReaderError as error:  # a control character, before any parsing
        line = text.count("\n", 0, error.position) + 1
        raise UserError(
            f"{path}:{line}: not a YAML text: character {error.character:#04x} is not allowed"
        ) from None
    try:
        node = loader.get_single_node()
        if node is None or (isinstance(node, yaml.ScalarNode) and node.tag == _NULL_TAG):
            raise UserError(f"{path}: the file is empty: expected a mapping of keys")
        if not isinstance(node, yaml.MappingNode):
            line = node.start_mark.line + 1
            raise UserError(
                f"{path}:{line}: expected a mapping of keys at the top level, got {_kind(node)}"
            )
        value_lines: dict[Loc, int] = {}
        key_lines: dict[Loc, int] = {}
        for loc, key_node, value_node in _walk(path, node, (), set()):
            key_lines[loc] = key_node.start_mark.line + 1
            value_lines[loc] = value_node.start_mark.line + 1
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as error:
        raise UserError(_yaml_error_text(path, error)) from None
    except yaml.YAMLError as error:
        raise UserError(f"{path}: invalid YAML: {error}") from None
    finally:
        loader.dispose()
    assert isinstance(data, dict)
    return YamlSource(path, data, value_lines, key_lines)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, not a YAML file") from None
    except UnicodeDecodeError as error:
        raise UserError(f"{path}: not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise UserError(f"{path}: cannot read: {error.strerror}") from None


def _walk(
    path: Path, node: yaml.Node, loc: Loc, ancestors: set[int]
) -> Iterator[tuple[Loc, yaml.Node, yaml.Node]]:
    """(path, key node, value node) for every mapping entry below `node`; sequence items too,
    with the item node as both. Rejects duplicate and non-string keys on the way."""
    if id(node) in ancestors:  # a recursive alias: walked once is enough
        return
    ancestors = ancestors | {id(node)}
    if isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield (*loc, index), item, item
            yield from _walk(path, item, (*loc, index), ancestors)
    elif isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = _string_key(path, key_node, loc)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise UserError(
                    f"{path}:{line}: {dotted((*loc, key))}: duplicate key"
                    f" (first at line {seen[key]}; YAML would silently keep only the last)"
                )
            seen[key] = line
            yield (*loc, key), key_node, value_node
            yield from _walk(path, value_node, (*loc, key), ancestors)


def _string_key(path: Path, key_node: yaml.Node, loc: Loc) -> str:
    line = key_node.start_mark.line + 1
    where = f"{path}:{line}: {dotted(loc) + ': ' if loc else ''}"
    if key_node.tag == "tag:yaml.org,2002:merge":
        raise UserError(f"{where}merge keys (<<) are not supported: write the keys out")
    if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR_TAG:
        shown = key_node.value if isinstance(key_node, yaml.ScalarNode) else _kind(key_node)
        raise UserError(f"{where}key {shown!r} is not a name: keys are words such as 'event'")
    assert isinstance(key_node.value, str)
    return key_node.value


def _kind(node: yaml.Node) -> str:
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    return f"the value {node.value!r}"


def _yaml_error_text(path: Path, error: yaml.MarkedYAMLError) -> str:
    mark = error.problem_mark or error.context_mark
    # "expected a single document in the stream, but found another document"
    problem = ", ".join(part for part in (error.context, error.problem) if part) or "unreadable"
    if mark is None:
        return f"{path}: invalid YAML: {problem}"
    return f"{path}:{mark.line + 1}:{mark.column + 1}: invalid YAML: {problem}"


def _parse_override(text: str, where: str) -> object:
    try:
        return yaml.safe_load(text) if text.strip() else text
    except yaml.YAMLError:
        raise UserError(f"{where}: the value is not valid YAML") from None


def _set_path(data: dict[str, object], parts: list[str], value: object, where: str) -> None:
    node = data
    for depth, part in enumerate(parts[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict):
            raise UserError(f"{where}: '{'.'.join(parts[: depth + 1])}' is not a mapping")
        node = child
    node[parts[-1]] = value


class LocatedError(ValueError):
    """A validation error about a key below the one being validated: a model-level check that
    blames one of its fields, or a list check that blames one item."""

    def __init__(self, loc: Loc, message: str) -> None:
        super().__init__(message)
        self.loc = loc


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """ "did you mean 'objective'?" for a near miss, else the list of choices."""
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if close:
        return f"did you mean '{close[0]}'?"
    return f"expected one of: {', '.join(choices)}"


_Model = TypeVar("_Model", bound=BaseModel)
_MAX_PROBLEMS = 8


def validate(source: YamlSource, model: type[_Model], context: Mapping[str, Any]) -> _Model:
    """`source.data` validated as `model`; every problem one line of a single UserError."""
    try:
        return model.model_validate(source.data, context=dict(context))
    except ValidationError as error:
        problems = sorted(
            (_problem(source, model, detail) for detail in error.errors(include_url=False)),
            key=lambda problem: problem[0],
        )
        lines = [text for _, text in problems]
        if len(lines) > _MAX_PROBLEMS:
            lines[_MAX_PROBLEMS:] = [f"... and {len(lines) - _MAX_PROBLEMS} more problems"]
        raise UserError("\n".join(lines)) from None


def _problem(source: YamlSource, model: type[BaseModel], detail: ErrorDetails) -> tuple[int, str]:
    """(line for ordering, message) for one pydantic error."""
    loc: Loc = tuple(detail["loc"])
    cause = detail.get("ctx", {}).get("error")
    if isinstance(cause, LocatedError):
        loc = (*loc, *cause.loc)
    kind, value = detail["type"], detail["input"]
    at_key = kind == "extra_forbidden"
    order = source.line(loc, at_key=at_key) or 0
    if at_key:
        known = _keys_at(model, loc[:-1])
        hint = f" ({did_you_mean(str(loc[-1]), known)})" if known else ""
        return order, source.message(loc, f"unknown key '{dotted(loc)}'{hint}", at_key=True)
    if kind == "missing":
        text = "required key is missing"
    elif kind in {"model_type", "dict_type", "model_attributes_type"}:
        text = f"expected a mapping of keys, got {describe_input(value)}"
    elif kind in {"tuple_type", "list_type"}:
        text = f"expected a list, got {describe_input(value)}"
    elif cause is not None:
        text = str(cause)
    else:
        text = f"{detail['msg']}, got {describe_input(value)}"
    return order, source.message(loc, f"{dotted(loc) or 'top level'}: {text}")


def _keys_at(model: type[BaseModel], loc: Loc) -> list[str]:
    """The keys the model accepts at `loc`, [] where that is not a model of ours."""
    for part in loc:
        field_info = model.model_fields.get(part) if isinstance(part, str) else None
        annotation = field_info.annotation if field_info else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return list(model.model_fields)
