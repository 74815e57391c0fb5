#!/bin/bash
# Session 19 call 2: the staged split GEMV (k_gemv_ws_staged, the T = 1 pick) and the attention's
# self-merging splits. GemvWs GPU tests and sanitizers; gemv_bench at T = 1 (ws_w<n> registers vs
# ws_s<n> stages); the 7B fast path bit for bit against the old build (664887a) and greedy ids;
# prefill bench interleaved: old, att (self-merging splits only, 29bb014), new (both).
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p2.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
p=$c/p2; NEW=$p/prefill OLD=$p/old-prefill ATT=$p/att-prefill
R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
note() { echo "$*" | tee -a $S; }
timeout 240 $p/test_gemm_fast --gtest_filter='GemvWs.*' > $R/t-gemvws.txt 2>&1
note "GemvWs tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/t-gemvws.txt | tr '\n' ' ')"
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $p/test_gemm_fast --gtest_filter='GemvWs.SmallCaseForSanitizers' > $R/san-gemvws-$tool.txt 2>&1
  note "$tool GemvWs small rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-gemvws-$tool.txt | tail -1)"
done
grep -E "Failure|FAILED" -A4 $R/t-*.txt | head -30 | tee -a $S
timeout 200 $p/gemv_bench --types q4_K,q6_K --T 1 --reps 10 --csv $R/gemv.csv > $R/bench.txt 2>&1
note "gemv_bench rc $?"
python3 - $R/gemv.csv <<'PY' | tee -a $S
import csv, sys, collections
rows = collections.defaultdict(dict)
for r in csv.DictReader(open(sys.argv[1])):
    rows[(r["type"], r["N"], r["K"])][r["kernel"]] = float(r["gbs"])
for k, v in rows.items():
    print(k[0], f"{k[1]}x{k[2]}", " ".join(f"{n}={v[n]:.0f}" for n in ("ws_w2", "ws_s2", "ws_w4", "ws_s4", "ws_w8", "ws_s8", "ws_auto") if n in v))
PY
M=/tmp/pfx-7b-q4km.gguf
$NEW synth --profile profiles/models/llama-7b-q4km.yaml --out $M --force > /dev/null || note "synth failed"
ids_of() { python3 -c "import random; random.seed($2); print(','.join(str(random.randrange(3, 32000)) for _ in range($1)))"; }
for spec in "1 11" "1 12" "1 15" "7 11"; do
  set -- $spec; ids=$(ids_of $1 $2)
  $NEW logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/n.npy --force > /dev/null
  $OLD logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/o.npy --force > /dev/null
  python3 -c "
import numpy as np; n=np.load('/tmp/n.npy'); o=np.load('/tmp/o.npy')
print('7B T=$1 seed $2: new==old bitwise %s (max|d| %.3e)' % (np.array_equal(n,o), np.abs(n-o).max()))" | tee -a $S
done
ids=$(ids_of 40 7)
for k in new new-off att old; do
  bin=$NEW; extra=
  [[ $k == old ]] && bin=$OLD; [[ $k == att ]] && bin=$ATT; [[ $k == new-off ]] && extra="--decode-graph off"
  timeout 60 $bin greedy --backend cuda --path fast $extra --model $M --tokens "$ids" -n 120 --json > $R/greedy-$k.json
done
python3 - $R <<'PY' | tee -a $S
import json, sys
d = sys.argv[1]
def ids(k):
    s = open(f"{d}/greedy-{k}.json").read(); return json.loads(s[s.index("{"):])["generated_ids"]
r = {k: ids(k) for k in ("new", "new-off", "att", "old")}
print("greedy 40+120 equal to old:", {k: v == r["old"] for k, v in r.items()})
PY
ROUNDS=4 BENCH_ARGS="-p 512 -n 128 -r 3" timeout 280 bash scripts/gpu/bench_interleaved.sh $R/ab old=$OLD att=$ATT new=$NEW > $R/ab.txt 2>&1
note "A/B (4 rounds of -p 512 -n 128 -r 3):"; cat $R/ab.txt | tee -a $S
cd $OUT && tar czf r.tgz r && rm -rf r/ab
# Carried: the .carry/*.tar.xz (or p6/) it unpacks: stripped static binaries built here (new: this session's tree at the commit the header names; old: 664887a), fixtures where named.
