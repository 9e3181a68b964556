"""How many producer/consumer threads, and on which CPUs (issue 5's decision core).

`capacity` turns the host into a TopologyShape and a first estimate (Goetz). `counts` searches the
count along an `axis` (Thread Reinforcer made noise-aware: paired comparisons, profile `guards`) on
a coarse grid that `plan` sizes, `refine` brackets the peak and probes down, `knee` settles the
smallest good count. `placement` proposes and picks CPU lists, `recommend` ties it all into a
frozen Recommendation, `session` runs it on this host.
The tests' simulated host (tests/support/threadsim) and the real harness plug into the same
`Measure` callable (`measure`).
"""
