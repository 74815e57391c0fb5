#!/bin/bash
# Session 18 call 3: gemv_ws's chain kernel (generic order) against its split form and the raw-block
# kernels (gemv_bench); the engine with the split pick at T = 1 (A) and the chain (B) against the
# old build: parity at T = 1 over several prompts, greedy, tg128/pp A/B.
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf c3.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
A=$c/A/prefill B=$c/B/prefill O=$c/old-prefill
R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
note() { echo "$*" | tee -a $S; }
timeout 240 $c/A/test_gemm_fast --gtest_filter='GemvWs.*' > $R/tests.txt 2>&1
note "GemvWs tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/tests.txt | tr '\n' ' ')"
for tool in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $c/A/test_gemm_fast --gtest_filter='GemvWs.SmallCaseForSanitizers' > $R/san-$tool.txt 2>&1
  note "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-$tool.txt | tail -1)"
done
timeout 300 $c/A/gemv_bench --types q4_K,q6_K --T 1 --reps 15 --csv $R/gemv.csv > $R/bench.txt 2>&1
note "gemv_bench rc $?"; sed -n '/== gemv summary/,$p' $R/bench.txt | tee -a $S
M=/tmp/pfx-7b-q4km.gguf
$A synth --profile profiles/models/llama-7b-q4km.yaml --out $M --force > /dev/null || note "synth failed"
ids_of() { python3 -c "import random; random.seed($2); print(','.join(str(random.randrange(3, 32000)) for _ in range($1)))"; }
for spec in "1 11" "1 12" "1 13" "1 14" "1 15" "2 11" "7 11" "128 11"; do
  set -- $spec; n=$1; seed=$2; ids=$(ids_of $n $seed)
  for k in generic A B old; do
    bin=$A; path=fast; [[ $k == B ]] && bin=$B; [[ $k == old ]] && bin=$O; [[ $k == generic ]] && path=generic
    $bin logits --backend cuda --path $path --model $M --tokens "$ids" --out /tmp/$k.npy --force > /dev/null
  done
  python3 - "$n" "$seed" <<'PY' | tee -a $S
import numpy as np, sys
g, a, b, o = (np.load(f"/tmp/{k}.npy") for k in ("generic", "A", "B", "old"))
rel = lambda x: np.abs(x - g).max() / np.abs(g).max()
print(f"7B T={sys.argv[1]} seed {sys.argv[2]}: vs generic: A(split) {rel(a):.3e} B(chain) {rel(b):.3e} old {rel(o):.3e}; "
      f"bitwise A {np.array_equal(a, g)} B {np.array_equal(b, g)} old {np.array_equal(o, g)}")
PY
done
ids=$(ids_of 40 7)
for k in A B B-off old generic; do
  bin=$A; path=fast; extra=; [[ $k == B* ]] && bin=$B; [[ $k == old ]] && bin=$O; [[ $k == generic ]] && path=generic
  [[ $k == B-off ]] && extra="--decode-graph off"
  $bin greedy --backend cuda --path $path $extra --model $M --tokens "$ids" -n 120 --json > $R/greedy-$k.json
done
python3 - $R <<'PY' | tee -a $S
import json, sys
d = sys.argv[1]
def ids(k):
    s = open(f"{d}/greedy-{k}.json").read(); return json.loads(s[s.index("{"):])["generated_ids"]
r = {k: ids(k) for k in ("A", "B", "B-off", "old", "generic")}
print("greedy 40+120 equal to generic:", {k: v == r["generic"] for k, v in r.items()})
PY
ROUNDS=4 bash scripts/gpu/bench_interleaved.sh $R/ab old=$O A=$A B=$B > $R/ab.txt 2>&1
note "A/B:"; cat $R/ab.txt | tee -a $S
cd $OUT && tar czf r.tgz r && rm -rf r/ab r/tests.txt
