#!/usr/bin/env bash
# The bulk path's floor on this host, side by side in one run: the tuned header's per-event path
# (tuned_bulk: push + consume), its bulk calls (tuned_runs: push(ptr, 256) + pop(ptr, 256)) and
# boost's bulk calls in hspc_peers, then copy_cost (what pop(ptr, 256)'s copy costs on one thread).
# Run from the project root with nothing else running: bash benchmarks/results/bulk-copy-2026-11-26/run.sh
set -euo pipefail
here=benchmarks/results/bulk-copy-2026-11-26
gunzip -c "$here/tp8_channel.hpp.gz" > build/tp8_channel.hpp  # hspc-gen --effort quick, tp8.yaml
.venv/bin/python benchmarks/run.py --tuned-header build/tp8_channel.hpp --only peers \
  --filter 'throughput/(tuned_|boost_spsc_bulk)' --repetitions 15
g++ -O2 -DNDEBUG -Wall -Wextra -o build/copy_cost "$here/copy_cost.cpp"
taskset -c 1 build/copy_cost
