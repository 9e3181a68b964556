from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--regen-golden",
        action="store_true",
        help="rewrite tests/data/golden/* from the templates (review the diff, then commit)",
    )
