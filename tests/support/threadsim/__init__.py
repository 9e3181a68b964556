"""The thread search's simulated host, for tests only: `simulator` (the host the search measures,
with its noise and clock), `physics` (a configuration's operating point), `pool` (CPUs shared out to
threads), `hosts` (the machines of 2 to 128 CPUs)."""
