#!/bin/bash
# Session 18 call 2: the decode mat-vec on the repack in the engine. Tests, sanitizers, the 7B
# (fast vs generic and vs the old build at T = 1, 7, 128, 512, 2048; greedy), weight memory, A/B.
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf new.tar.xz && tar xJf old.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
new=$c/new old=$c/old; P=$new/engine/cli/prefill; O=$old/engine/cli/prefill
S=$OUT/summary.txt; : > $S
note() { echo "$*" | tee -a $S; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee -a $S
timeout 300 $new/tests/kernels/gemm/test_gemm_fast --gtest_filter='GemvWs.*:GemvFast.*:GemvSeq.*:GemmWs.*' > $OUT/tests.txt 2>&1
note "test_gemm_fast GemvWs/GemvFast/GemvSeq/GemmWs rc $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/tests.txt | tr '\n' ' ')"
timeout 200 $new/tests/engine/cuda/test_cuda_decode_graph > $OUT/decode_graph.txt 2>&1
note "test_cuda_decode_graph rc $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/decode_graph.txt | tr '\n' ' ')"
for tool in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $new/tests/kernels/gemm/test_gemm_fast --gtest_filter='GemvWs.SmallCaseForSanitizers' > $OUT/san-$tool.txt 2>&1
  note "$tool GemvWs rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool.txt | tail -1)"
done
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $new/tests/engine/cuda/test_cuda_decode_graph --gtest_filter='DecodeGraph.SmallCaseForSanitizers' > $OUT/san-graph.txt 2>&1
note "memcheck decode graph rc $? $(grep -E 'ERROR SUMMARY' $OUT/san-graph.txt | tail -1)"
M=/tmp/pfx-7b-q4km.gguf
$P synth --profile profiles/models/llama-7b-q4km.yaml --out $M --force > /dev/null || note "synth failed"
ids_of() { python3 -c "import random; random.seed($2); print(','.join(str(random.randrange(3, 32000)) for _ in range($1)))"; }
for n in 1 7 128 512 2048; do
  ids=$(ids_of $n 11)
  $P logits --backend cuda --path generic --model $M --tokens "$ids" --out /tmp/g$n.npy --force > /dev/null
  $P logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/f$n.npy --force > $OUT/logits-fast-$n.json
  $O logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/o$n.npy --force > /dev/null
  python3 - $n <<'PY' | tee -a $S
import numpy as np, sys
n = sys.argv[1]
g, f, o = (np.load(f"/tmp/{k}{n}.npy") for k in "gfo")
rel = lambda a, b: np.abs(a - b).max() / np.abs(b).max()
print(f"7B T={n}: new fast vs generic {rel(f, g):.3e} bitwise {np.array_equal(f, g)}; old fast vs generic {rel(o, g):.3e}; "
      f"new vs old bitwise {np.array_equal(f, o)} ({rel(f, o):.3e}); finite {np.isfinite(f).all()}")
PY
done
ids=$(ids_of 40 7)
$P greedy --backend cuda --path fast --model $M --tokens "$ids" -n 120 --json > $OUT/greedy-new.json
$P greedy --backend cuda --path fast --decode-graph off --model $M --tokens "$ids" -n 120 --json > $OUT/greedy-new-off.json
$P greedy --backend cuda --path generic --model $M --tokens "$ids" -n 120 --json > $OUT/greedy-generic.json
$O greedy --backend cuda --path fast --model $M --tokens "$ids" -n 120 --json > $OUT/greedy-old.json
python3 - $OUT <<'PY' | tee -a $S
import json, sys
d = sys.argv[1]
def load(k):
    s = open(f"{d}/greedy-{k}.json").read(); return json.loads(s[s.index("{"):])
r = {k: load(k)["generated_ids"] for k in ("new", "new-off", "generic", "old")}
def first_diff(a, b): return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
print("greedy 40+120: new on==off", r["new"] == r["new-off"], "| new==old", r["new"] == r["old"], "first diff", first_diff(r["new"], r["old"]),
      "| new==generic", r["new"] == r["generic"], first_diff(r["new"], r["generic"]), "| old==generic", r["old"] == r["generic"], first_diff(r["old"], r["generic"]),
      "| fallbacks", load("new").get("fallbacks"))
PY
for b in new old; do
  bin=$P; [[ $b == old ]] && bin=$O
  ( while true; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits; sleep 0.3; done ) > $OUT/mem-$b.txt &
  sp=$!
  $bin bench --model $M -p 512 -n 32 -r 2 --path fast --json > $OUT/membench-$b.json 2>&1
  kill $sp
  note "$b: GPU memory used max $(sort -n $OUT/mem-$b.txt | tail -1) MiB; weight_matrix_bytes $(python3 -c "import json,sys;s=open('$OUT/membench-$b.json').read();print(json.loads(s[s.index('{'):]).get('weight_matrix_bytes'))")"
done
ROUNDS=4 bash scripts/gpu/bench_interleaved.sh $OUT/ab old=$O new=$P > $OUT/ab.txt 2>&1
note "A/B old vs new:"; cat $OUT/ab.txt | tee -a $S
