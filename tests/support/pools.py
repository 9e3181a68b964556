"""The adaptive pool's inputs and parameters the tests share: made-up inputs, every figure
measured, and the parameters `--effort estimate` chooses (the estimate's stand-ins)."""

from __future__ import annotations

from hspc_gen import adaptive
from hspc_gen.model import Figure, HostTimings
from hspc_gen.model.pool import Basis
from hspc_gen.model.threads import ThreadAdvice
from hspc_gen.search.api import PoolInputs, pool_tuning

INPUTS = PoolInputs(
    advice=ThreadAdvice(1, 2, 2, (0,), (0, 1), pinned=False),
    events_per_buffer=512,
    pace_ns=Basis(40.0, "the channel's confirmed time per event", True),
    handling_ns=Basis(15.0, "the consumer's CPU time per event, measured", True),
    wake_ns=Basis(3000.0, "the futex wake-up measured on this host", True),
    margin=Basis(0.05, "the confirmation's decision margin", True),
    cpus=4,
    clock_ticks_per_s=100,
)
"""Every figure measured; the advice is an estimate's (no evidence): "partly measured"."""

ESTIMATED_POOL_INPUTS = PoolInputs(
    advice=ThreadAdvice(1, 1, 1, (-1,), (-1,), pinned=False),
    events_per_buffer=64,
    pace_ns=Basis(120.0, "app.yaml's work per event, the slower side's, not measured", False),
    handling_ns=Basis(120.0, "app.yaml's consumer_ns, not measured", False),
    wake_ns=adaptive.wake_ns(None),
    margin=adaptive.margin(None),
    cpus=2,
    clock_ticks_per_s=100,
)
"""What `--effort estimate` chooses the pool's parameters from: the estimate's stand-ins."""

ESTIMATED_POOL = pool_tuning(ESTIMATED_POOL_INPUTS)
"""The pool's parameters as `--effort estimate` chooses them: the estimate's stand-ins."""

STORED_WAKE = HostTimings(Figure(3000.0, 2900.0, 3100.0, 9), Figure(2000.0, 1900.0, 2100.0, 9))
"""Wait costs an earlier run measured on this host (its calibration in the record store)."""
