"""The app's per-event work, from its target, as the search's Workload."""

from __future__ import annotations

from hspc_gen.search.records import Workload
from hspc_gen.target import Target


def app_workload(target: Target) -> Workload:
    """The app's per-event work: the synthetic part and its own source files."""
    w = target.workload
    return Workload(
        target.event.size,
        w.producer_ns,
        w.consumer_ns,
        w.consumer_bytes,
        str(w.producer_source or ""),
        str(w.consumer_source or ""),
    )
