"""generator/schema/app.schema.json: committed, current, and in step with the loader.

After changing the models in generator/target/app.py, regenerate the file with
    .venv/bin/python -m hspc_gen.target.app --write-schema
and review the diff.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from hspc_gen.model import Objective, PinThreads, Primitive
from hspc_gen.target import app as target
from hspc_gen.target.app import SCHEMA_PATH, Target, schema_text

REPO = Path(__file__).resolve().parents[2]
SCHEMA: dict[str, Any] = json.loads(schema_text())


def test_committed_schema_is_current() -> None:
    assert SCHEMA_PATH.resolve() == REPO / "generator" / "schema" / "app.schema.json"
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), (
        "app.schema.json is stale: run `python -m hspc_gen.target.app --write-schema`"
    )


def test_schema_text_is_deterministic_sorted_json() -> None:
    text = schema_text()
    assert text == schema_text()
    assert text.endswith("}\n")
    assert text == json.dumps(SCHEMA, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_write_schema_writes_schema_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(target, "SCHEMA_PATH", tmp_path / "app.schema.json")
    assert target.main(["--write-schema"]) == 0
    assert (tmp_path / "app.schema.json").read_text(encoding="utf-8") == schema_text()


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in node:
        merged = dict(SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[1]])
        merged.update({k: v for k, v in node.items() if k != "$ref"})
        return merged
    return node


def _accepts(node: dict[str, Any], value: Any) -> bool:  # noqa: PLR0911
    """The subset of JSON Schema this schema uses, enough to check values against it."""
    node = _resolve(node)
    if "anyOf" in node:
        return any(_accepts(option, value) for option in node["anyOf"])
    if "enum" in node and value not in node["enum"]:
        return False
    if "const" in node and value != node["const"]:
        return False
    kind = node.get("type")
    if kind == "object":
        return _accepts_object(node, value)
    if kind == "array":
        items = node.get("items", {})
        return isinstance(value, list) and all(_accepts(items, item) for item in value)
    if kind == "string":
        return isinstance(value, str) and re.search(node.get("pattern", ""), value) is not None
    if kind == "null":
        return value is None
    if kind in {"integer", "number"}:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or (kind == "integer" and not isinstance(value, int)):
            return False
        return bool(node.get("minimum", value) <= value <= node.get("maximum", value))
    return kind is None


def _accepts_object(node: dict[str, Any], value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    properties = node.get("properties", {})
    if node.get("additionalProperties") is False and set(value) - set(properties):
        return False
    if set(node.get("required", [])) - set(value):
        return False
    return all(_accepts(properties[key], item) for key, item in value.items())


def test_the_example_satisfies_the_schema() -> None:
    example = yaml.safe_load((REPO / "examples" / "app.yaml").read_text(encoding="utf-8"))
    assert _accepts(SCHEMA, example)


@pytest.mark.parametrize(
    "document",
    [
        {"event": {"size": 8}},
        {"name": "x", "event": {"size": 8}, "objectve": "latency"},
        {"name": "x", "event": {"size": 0}},
        {"name": "x", "event": {"size": 8, "sise": 8}},
        {"name": "Bad-Name", "event": {"size": 8}},
        {"name": "_x", "event": {"size": 8}},
        {"name": "x", "event": {"size": 8}, "objective": "thruput"},
        {"name": "x", "event": {"size": 8}, "constraints": {"primitives": ["spinlok"]}},
        {"name": "x", "event": {"size": 8}, "threads": {"producers": 0}},
        {"name": "x", "event": {"size": 8}, "budget": 0},
        {"name": "x", "event": {"size": 8}, "output": {"namespace": "a-b"}},
    ],
)
def test_schema_and_loader_both_refuse(document: dict[str, Any]) -> None:
    assert not _accepts(SCHEMA, document)
    with pytest.raises(ValueError, match="validation error"):
        Target.model_validate(document)


@pytest.mark.parametrize(
    "document",
    [
        {"name": "x", "event": {"size": "4KiB", "align": "64B"}},
        {"name": "x", "event": {"size": 8}, "budget": "1h30m", "workload": {"consumer_ns": "3µs"}},
        {"name": "x", "event": {"size": 8}, "threads": {"producers": 2, "consumers": "auto"}},
        {"name": "x", "event": {"size": 8}, "constraints": {"max_latency_us": None}},
    ],
)
def test_schema_and_loader_both_accept(document: dict[str, Any]) -> None:
    assert _accepts(SCHEMA, document)
    Target.model_validate(document)


def test_every_key_and_choice_is_in_the_schema() -> None:
    definitions = SCHEMA["$defs"]
    assert set(SCHEMA["properties"]) == set(Target.model_fields)
    assert SCHEMA["required"] == ["name", "event"]
    assert definitions["Event"]["required"] == ["size"]
    for name in ("Event", "Workload", "Constraints", "Threads", "Output"):
        model = getattr(target, name)
        assert set(definitions[name]["properties"]) == set(model.model_fields)
        assert definitions[name]["additionalProperties"] is False
        assert all("description" in p for p in definitions[name]["properties"].values())
    assert definitions["Primitive"]["enum"] == [p.value for p in Primitive]
    assert definitions["Objective"]["enum"] == [o.value for o in Objective]
    assert definitions["PinThreads"]["enum"] == [p.value for p in PinThreads]
    # Derived defaults are described in words, not given a placeholder value.
    assert "default" not in definitions["Event"]["properties"]["align"]
    assert not any("default" in p for p in definitions["Output"]["properties"].values())
