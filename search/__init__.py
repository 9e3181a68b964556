"""The search: parameter space, strategies, build, run, statistics, decision and record store.
The stages outside it call its face, `hspc_gen.search.api`, only."""
