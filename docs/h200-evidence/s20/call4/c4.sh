#!/bin/bash
# Session 20 call 4, 6ced39f: GemvWs GPU tests and sanitizers; gemv_bench --ws-only T = 1 against
# session 19's final (f329476: the chain kernel's speed back); the 7B (synthesized) fast vs generic
# at T = 1, 7, 128, 512, 2048 and greedy ids against f329476. (side_by_side.sh: call 5.)
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p8.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
p=$c/p8; R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
note() { echo "$*" | tee -a $S; }
timeout 120 $p/test_gemm_fast --gtest_filter='GemvWs.*' > $R/t-gemvws.txt 2>&1
note "GemvWs tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/t-gemvws.txt | tr '\n' ' ')"
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $p/test_gemm_fast --gtest_filter='GemvWs.SmallCaseForSanitizers' > $R/san-gemvws-$tool.txt 2>&1
  note "$tool GemvWs small rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-gemvws-$tool.txt | tail -1)"
done
for v in old new; do
  bin=$p/gemv_bench; [[ $v == old ]] && bin=$p/old-gemv_bench
  timeout 90 $bin --ws-only --types q4_K,q6_K --T 1 --reps 10 --csv $R/gemv-$v.csv > $R/bench-$v.txt 2>&1 || note "gemv_bench $v rc $?"
done
python3 - $R <<'PY' | tee -a $S
import csv, sys, collections
d = sys.argv[1]
rows = collections.defaultdict(dict)
for v in ("old", "new"):
    for x in csv.DictReader(open(f"{d}/gemv-{v}.csv")):
        rows[(x["type"], x["N"], x["K"], x["kernel"])][v] = float(x["gbs"])
print("gemv_bench T=1 GB/s             old     new  new/old")
for k, m in rows.items():
    if k[3] in ("ws_chain8", "ws_w4", "ws_w8", "ws_auto"):
        print(f"{k[0]} {k[1]}x{k[2]} {k[3]:9}{m.get('old', 0):8.0f}{m.get('new', 0):8.0f}  {m.get('new', 0) / m.get('old', 1):6.3f}")
PY
M=/tmp/pfx-7b-q4km.gguf
$p/prefill synth --profile profiles/models/llama-7b-q4km.yaml --out $M --force > /dev/null || note "synth failed"
ids_of() { python3 -c "import random; random.seed($2); print(','.join(str(random.randrange(3, 32000)) for _ in range($1)))"; }
for spec in "1 11" "1 12" "7 11" "128 11" "512 11" "2048 11"; do
  set -- $spec; ids=$(ids_of $1 $2)
  $p/prefill logits --backend cuda --path generic --model $M --tokens "$ids" --out /tmp/g.npy --force > /dev/null
  $p/prefill logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/n.npy --force > /dev/null
  python3 -c "
import numpy as np; g=np.load('/tmp/g.npy'); n=np.load('/tmp/n.npy')
print('7B T=$1 seed $2 fast vs generic: bitwise %s, max|d|/max|g| %.3e' % (np.array_equal(n,g), np.abs(n-g).max()/np.abs(g).max()))" | tee -a $S
done
ids=$(ids_of 40 7)
timeout 60 $p/prefill greedy --backend cuda --path fast --model $M --tokens "$ids" -n 120 --json > $R/greedy-new.json
timeout 60 $p/prefill greedy --backend cuda --path fast --decode-graph off --model $M --tokens "$ids" -n 120 --json > $R/greedy-new-off.json
timeout 60 $p/old-prefill greedy --backend cuda --path fast --model $M --tokens "$ids" -n 120 --json > $R/greedy-old.json
python3 - $R <<'PY' | tee -a $S
import json, sys
d = sys.argv[1]
def ids(k):
    s = open(f"{d}/greedy-{k}.json").read(); return json.loads(s[s.index("{"):])["generated_ids"]
r = {k: ids(k) for k in ("old", "new", "new-off")}
print("greedy 40+120 equal to old:", {k: v == r["old"] for k, v in r.items()})
PY
cd $OUT && tar czf r.tgz r
# Carried: .carry/p8.tar.xz = stripped static prefill, gemv_bench and test_gemm_fast of 6ced39f,
# prefill and gemv_bench of f329476 (old), ../shared/peer and the vocab file side_by_side needs.
