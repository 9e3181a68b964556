"""The scripts that write the recorded sysfs trees and matrices (tests/data/sysfs), loaded as
modules for the tests that run them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SYSFS = Path(__file__).resolve().parents[1] / "data" / "sysfs"


def load(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """tests/data/sysfs/<name>.py; make_trees imports make_matrices from beside it, and
    dataclasses resolves a module's annotations through sys.modules."""
    monkeypatch.syspath_prepend(str(SYSFS))
    spec = importlib.util.spec_from_file_location(name, SYSFS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module
