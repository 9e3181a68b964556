"""How many producer/consumer threads, and on which CPUs (issue 5's decision core).

`capacity` turns the host into a TopologyShape and a first estimate (Goetz). `reinforcer` searches
the count along an `axis` (Thread Reinforcer made noise-aware: paired `duel`s, profile `guards`),
`refine` brackets the peak and probes down, `knee` settles the smallest good count on a fresh sweep.
`placement` proposes and picks CPU lists, `recommend` ties it all into a frozen Recommendation.
The tests' simulated host (tests/support/threadsim) and the real harness plug into the same
`Measure` callable (`measure`).
"""
