"""What a finished run did not do that was asked of it, in words for the command line: a
latency bound no channel kept, or the user's own code failing every measurement. Read from the
typed result only; the command line turns each into its exit status."""

from __future__ import annotations

import re

from hspc_gen.model import Status
from hspc_gen.model.result import TuneResult
from hspc_gen.model.threads import ThreadFailure


def latency_unmet(result: TuneResult) -> str | None:
    """Why the channel written does not keep constraints.max_latency_us, when it does not: no
    candidate confirmed kept it, and the header holds the one that came closest."""
    confirmed = result.search.confirmed if result.search else None
    asked = result.run.max_latency_us
    if result.search is not None and confirmed is None and asked is not None:
        return (
            f"constraints.max_latency_us ({asked:g} us) was not verified: nothing was measured"
            " within the budget (the header holds the estimate, which carries the bound)"
        )
    if confirmed is None or confirmed.latency_bound_ns is None:
        return None
    p99 = confirmed.latency_p99_ns
    if p99 is not None and p99.median <= confirmed.latency_bound_ns:
        return None
    bound = confirmed.latency_bound_ns / 1e3
    if p99 is None:
        return (
            f"constraints.max_latency_us ({bound:g} us) was not verified: no latency was"
            " measured within the budget (the header's channel carries the bound all the same)"
        )
    return (
        f"no channel kept constraints.max_latency_us ({bound:g} us): the closest, written to"
        f" the header, waited {p99.median / 1e3:.3g} us at the 99th percentile"
    )


def _in_their_code(cause: str) -> bool:
    """Whether the harness said a thread was in the user's code when the sample died."""
    said = re.search(r"the user's (producer|consumer) code|was in the user's hspc_", cause)
    return said is not None


def user_code_failure(result: TuneResult) -> str | None:
    """Why tuning did not happen when the user's own code made every measurement fail (it ran
    alone, but not under load): then the run must not end as if it had tuned."""
    search = result.search
    if search is None or (search.confirmed is not None and search.confirmed.rate is not None):
        return None
    theirs = [f for f in search.failures if _in_their_code(f.cause)]
    if not theirs:
        return None
    first = theirs[0]
    return (
        f"nothing could be measured: the user's code failed under the benchmark"
        f" ({first.status}: {first.cause}, in {len(theirs)} run(s); it passed alone, before"
        " tuning); the header holds the estimate"
    )


def threads_unmet(result: TuneResult) -> str | None:
    """Why the thread counts asked for were not measured, when a failure (not the budget)
    stopped their search: the channel's header and reports are written, the advice estimated."""
    advice = result.threads
    if not isinstance(advice, ThreadFailure) or advice.status is Status.skipped:
        return None
    first = advice.error.strip().splitlines()[0] if advice.error.strip() else ""
    return (
        f"the thread search failed ({advice.status}{': ' + first if first else ''}); the channel"
        " is tuned and written, its thread advice is the estimate (see hspc-result.json)"
    )
