"""The thread search's simulated host, for tests only: `simulator` (the host the search measures,
with its noise and clock), `model` (its physics), `pool` (CPUs shared out to threads), `hosts` (the
machines of 2 to 128 CPUs)."""
