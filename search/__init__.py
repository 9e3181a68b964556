"""The search: parameter space, strategies, build, run, statistics, decision and record store."""
