#!/usr/bin/env bash
# Issue 23 on the 16-CPU host, the same visit's second script (after a80836b, the thread
# search's pairing past the CPUs): is the first script's gap between its two winners their
# parameters or their CPUs? compare the two winners as run (run1 on CPUs 6,11, run2 on 3,9)
# beside each on the other's CPUs, all in the same rounds; then two more cold default runs
# and all four winners side by side; then bench the first run's winner with more rounds.
set -u
source .devbox/on-device.sh > "$OUT/install.txt" 2>&1
R=$PWD/benchmarks/results/many-core-2026-11-27
W=/tmp/w; mkdir -p "$W"; cd "$W"
printf 'name: tp8\nevent: {size: 8}\n' > tp8.yaml
t() { local s e; s=$(date +%s.%N); "$@"; local rc=$?; e=$(date +%s.%N);
      echo "$(python3 -c "print(round($e - $s, 1))") s rc=$rc: ${*:2:7}" >> "$OUT/log.txt"; }
keep() { tar czf "$OUT/runs2.tgz" r3 r4 bench2 ./*.txt ./*.json 2>/dev/null; }
python3 - "$R" <<'PY'
import gzip, json, os, sys
runs = {i: json.load(gzip.open(f"{sys.argv[1]}/run{i}-result.json.gz")) for i in (1, 2)}
cpus = {i: {k: runs[i]["winner"]["params"][k] for k in ("producer_cpu", "consumer_cpu")} for i in runs}
for i, other in ((1, 2), (2, 1)):
    for name, doc in ((f"run{i}", runs[i]), (f"run{i}-on-run{other}-cpus", json.loads(json.dumps(runs[i])))):
        if "-on-" in name:
            doc["winner"]["params"].update(cpus[other])
        os.makedirs(name, exist_ok=True)
        json.dump(doc, open(f"{name}/hspc-result.json", "w"))
PY
t timeout 90 hspc-gen compare --target tp8.yaml run1/hspc-result.json run2/hspc-result.json \
  run1-on-run2-cpus/hspc-result.json run2-on-run1-cpus/hspc-result.json --rounds 20 \
  --cache "$W/c0" --json > swap.json 2> swap.err.txt; keep
for i in 3 4; do
  t timeout 170 hspc-gen --target tp8.yaml --cache "$W/c$i" --out "$W/r$i" > "r$i.summary.txt" 2>&1
  keep
done
t timeout 90 hspc-gen compare --target tp8.yaml run1/hspc-result.json run2/hspc-result.json \
  r3/hspc-result.json r4/hspc-result.json --rounds 20 --cache "$W/c0" --json > four.json \
  2> four.err.txt; keep
t timeout 60 hspc-gen bench --target tp8.yaml --from r3/hspc-result.json --rounds 12 \
  --out "$W/bench2" --cache "$W/c3" > bench2.txt 2>&1; keep
echo done >> "$OUT/log.txt"
