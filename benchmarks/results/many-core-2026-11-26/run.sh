#!/usr/bin/env bash
# Issue 23 on the 16-CPU host: two cold default-effort runs of a bare 8-byte channel, compare,
# a budget-bounded thread sweep. Each step's wall time goes to log.txt.
set -u
source .devbox/on-device.sh > "$OUT/install.txt" 2>&1
W=/tmp/w; mkdir -p "$W"; cd "$W"
printf 'name: tp8\nevent: {size: 8}\n' > tp8.yaml
t() { local s e; s=$(date +%s.%N); "$@"; local rc=$?; e=$(date +%s.%N);
      echo "$(python3 -c "print(round($e - $s, 1))") s rc=$rc: ${*:2:6}" >> "$OUT/log.txt"; }
{ nproc; lscpu | grep -E 'Model name|Thread|Core|Socket|NUMA node\(s\)|L3'; } >> "$OUT/log.txt"
t timeout 60 hspc-gen host --json --cache "$W/c0" > "$OUT/host.json" 2>> "$OUT/log.txt"
for i in 1 2; do
  t timeout 150 hspc-gen --target tp8.yaml --budget 90s --cache "$W/c$i" --out "$W/r$i" \
    > "$W/r$i.summary.txt" 2>&1
  tar czf "$OUT/runs.tgz" r* 2>/dev/null
done
t timeout 120 hspc-gen compare --target tp8.yaml r1/hspc-result.json r2/hspc-result.json \
  --rounds 12 --cache "$W/c3" > "$OUT/compare.txt" 2>&1
t timeout 60 hspc-gen threads --target tp8.yaml --from r1/hspc-result.json --sweep --budget 30s \
  --cache "$W/c1" --out "$W/th" > "$W/threads.txt" 2>&1
tar czf "$OUT/runs.tgz" r* th threads.txt 2>/dev/null
echo done >> "$OUT/log.txt"
