#!/usr/bin/env bash
# Issue 23 on the 16-CPU host, second visit: two cold default runs (no --budget: the default
# 120 s) of a bare 8-byte channel, compare them, the A/A check of each winner against a copy of
# itself (the spread this host allows one program), a budget-bounded thread sweep, and bench.
# Each step's wall time and exit status go to log.txt; outputs are tarred after every step.
set -u
source .devbox/on-device.sh > "$OUT/install.txt" 2>&1
W=/tmp/w; mkdir -p "$W"; cd "$W"
printf 'name: tp8\nevent: {size: 8}\n' > tp8.yaml
t() { local s e; s=$(date +%s.%N); "$@"; local rc=$?; e=$(date +%s.%N);
      echo "$(python3 -c "print(round($e - $s, 1))") s rc=$rc: ${*:2:7}" >> "$OUT/log.txt"; }
keep() { tar czf "$OUT/runs.tgz" r1 r2 th bench ./*.txt ./*.json 2>/dev/null; }
{ nproc; lscpu | grep -E 'Model name|Thread|Core|Socket|NUMA node\(s\)|L3'; } >> "$OUT/log.txt"
t timeout 60 hspc-gen host --json --cache "$W/c0" > host.json 2>> "$OUT/log.txt"
for i in 1 2; do
  t timeout 170 hspc-gen --target tp8.yaml --cache "$W/c$i" --out "$W/r$i" > "r$i.summary.txt" 2>&1
  keep
done
t timeout 60 hspc-gen compare --target tp8.yaml r1/hspc-result.json r2/hspc-result.json \
  --rounds 20 --cache "$W/c3" --json > compare.json 2> compare.err.txt; keep
for i in 1 2; do
  t timeout 40 hspc-gen compare --target tp8.yaml r$i/hspc-result.json --aa --rounds 12 \
    --cache "$W/c3" --json > aa$i.json 2> aa$i.err.txt; keep
done
t timeout 45 hspc-gen threads --target tp8.yaml --from r1/hspc-result.json --sweep --budget 30s \
  --cache "$W/c1" --out "$W/th" > threads.txt 2>&1; keep
t timeout 90 hspc-gen bench --target tp8.yaml --from r1/hspc-result.json --rounds 5 \
  --out "$W/bench" --cache "$W/c1" > bench.txt 2>&1; keep
echo done >> "$OUT/log.txt"
