"""How many producer/consumer threads, and on which CPUs (issue 5's decision core).

`capacity` turns the host into a TopologyShape and a first estimate (Goetz), `reinforcer` searches
the count (Thread Reinforcer made noise-aware), `placement` proposes and picks CPU lists,
`recommend` ties them into a frozen Recommendation. `simulator` is a deterministic host for tests;
the real harness plugs into the same `Measure` callable (`measure`).
"""
