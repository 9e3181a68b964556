#!/usr/bin/env bash
# The phase benchmark (issue 25 item 4) on this host: three repetitions, each one process that
# runs every configuration (fixed1..fixed8, pool, hill) through light -> heavy -> blocking ->
# light, 3.5 s a phase, 100 ms windows, the order rotated by the rep (--rep). Each rep holds the
# exclusive measuring lock on its own (~2.5 min); then the table and the figure.
# From the project root: benchmarks/results/pool-phases-2026-11-27/run.sh
set -eu
HERE=benchmarks/results/pool-phases-2026-11-27
export PATH="$PWD/.venv/bin:$PATH"
[ -f build/benchmarks/build.ninja ] || flock -s /tmp/hspc-measure.lock meson setup build/benchmarks --buildtype=release
flock -s /tmp/hspc-measure.lock ninja -C build/benchmarks benchmarks/hspc_pool_phases
mkdir -p "$HERE/output"
for rep in 0 1 2; do
  { uptime; cat /proc/pressure/cpu; } > "$HERE/output/rep$rep.load.txt"
  flock -x /tmp/hspc-measure.lock timeout 170 build/benchmarks/benchmarks/hspc_pool_phases \
    --rep=$rep --phase_ms=3500 --window_ms=100 --trace=1 \
    > "$HERE/output/rep$rep.csv" 2> "$HERE/output/rep$rep.err"
  { uptime; cat /proc/pressure/cpu; } >> "$HERE/output/rep$rep.load.txt"
done
gzip -9f "$HERE"/output/rep*.err
.venv/bin/python "$HERE/analyse.py" "$HERE/output" "$HERE"/output/rep*.csv
