"""hspc-result.json: what was chosen, how it was measured, and on which host."""

from __future__ import annotations

from typing import Any

from hspc_gen import __version__
from hspc_gen.host import Host
from hspc_gen.model import ChannelParams, Effort
from hspc_gen.target import Target

SCHEMA_VERSION = 1


def _common(target: Target, host: Host, effort: Effort, elapsed: float) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "hspc-gen", "version": __version__},
        "target": {
            "name": target.name,
            "event_bytes": target.event.size,
            "objective": str(target.objective),
        },
        "effort": str(effort),
        "budget_seconds": target.budget,
        "elapsed_seconds": round(elapsed, 3),
        "host": host.to_json(),
        "fingerprint": host.fingerprint,
    }


def estimate_result(
    target: Target, host: Host, params: ChannelParams, effort: Effort, elapsed: float
) -> dict[str, Any]:
    """The result of `--effort estimate`: heuristics only, so every measured figure is null."""
    document = _common(target, host, effort, elapsed)
    document.update(
        winner={"params": params.as_dict(), "events_per_second": None},
        baselines=None,
        efficiency=None,
        candidates=[],
        seed=None,
    )
    return document
