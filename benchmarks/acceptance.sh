#!/usr/bin/env bash
# Reproduces the tuner's acceptance measurements on this host (after ./dev setup), into DIR:
#   1. the example tuned cold, then the same command again (time and bytes of a warm re-run);
#   2. the example with --effort exhaustive, and both winners re-measured side by side;
#   3. the bare channel tuned, and its header among the peer queues (benchmarks/run.py);
#   4. the thread recommendation against an exhaustive sweep of counts.
# Takes about 20 minutes on a 2-vCPU machine; run it with nothing else busy.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/acceptance}
hspc=.venv/bin/hspc-gen
rm -rf "$out" && mkdir -p "$out"
common=(--cache "$out/cache" --quiet)

timed() {  # NAME COMMAND...: runs it and appends its wall time to times.txt
  local name=$1 start
  shift
  start=$(date +%s%N)
  "$@"
  echo "$name $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$out/times.txt"
}

timed cold "$hspc" --target examples/app.yaml --out "$out/measure" "${common[@]}"
cp "$out/measure/example_channel.hpp" "$out/cold.hpp"
timed warm "$hspc" --target examples/app.yaml --out "$out/measure" "${common[@]}"
cmp "$out/cold.hpp" "$out/measure/example_channel.hpp" && echo "warm header: identical" >> "$out/times.txt"

timed exhaustive "$hspc" --target examples/app.yaml --effort exhaustive --budget 30m \
  --out "$out/exhaustive" "${common[@]}"
"$hspc" compare --target examples/app.yaml "$out/measure/hspc-result.json" \
  "$out/exhaustive/hspc-result.json" --cache "$out/cache" > "$out/compare.md"

timed bare "$hspc" --target examples/bare.yaml --out "$out/bare" "${common[@]}"
.venv/bin/python benchmarks/run.py --only peers --tuned-header "$out/bare/bare_channel.hpp" \
  > "$out/peers.txt"

"$hspc" threads --target examples/app.yaml --sweep --from "$out/measure/hspc-result.json" \
  --out "$out/threads" --cache "$out/cache" > "$out/threads.md"
cat "$out/times.txt" "$out/compare.md" "$out/threads.md"
