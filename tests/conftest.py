from __future__ import annotations

import pytest

# The profiler example's fixtures (installed, hp), for every test module that asks for them.
pytest_plugins = ["pyprof_check"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--regen-golden",
        action="store_true",
        help="rewrite tests/data/golden/* from the templates (review the diff, then commit)",
    )
