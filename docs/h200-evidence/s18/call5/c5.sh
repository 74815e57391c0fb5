#!/bin/bash
# Session 18 call 5: the side by side with llama.cpp (side_by_side.sh, PAIRS=2 REPS=3) of the final
# build; meanwhile (llama.cpp's build is CPU-only) gemv_ws's tests and sanitizers, gemv_bench at
# T = 1, 2, and the 7B at T = 2, 5, 7 fast vs generic.
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf n.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
n=$c/n; R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
note() { echo "$*" | tee -a $S; }
PAIRS=2 REPS=3 bash $c/sbs/peer/side_by_side.sh $c/sbs/peer $n/prefill $R/sbs > $R/sbs.log 2>&1 &
sbs=$!
timeout 200 $n/test_gemm_fast --gtest_filter='GemvWs.*' > $R/tests.txt 2>&1
note "GemvWs tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/tests.txt | tr '\n' ' ')"
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $n/test_gemm_fast --gtest_filter='GemvWs.SmallCaseForSanitizers' > $R/san-$tool.txt 2>&1
  note "$tool GemvWs rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-$tool.txt | tail -1)"
done
timeout 120 $n/gemv_bench --types q4_K,q6_K --T 1,2 --reps 10 --csv $R/gemv.csv > $R/bench.txt 2>&1
note "gemv_bench rc $?"; sed -n '/== gemv summary/,$p' $R/bench.txt | tee -a $S
M=/tmp/pfx-7b-q4km.gguf
$n/prefill synth --profile profiles/models/llama-7b-q4km.yaml --out $M --force > /dev/null || note "synth failed"
ids_of() { python3 -c "import random; random.seed($2); print(','.join(str(random.randrange(3, 32000)) for _ in range($1)))"; }
for t in 1 2 5 7 128; do
  ids=$(ids_of $t 11)
  $n/prefill logits --backend cuda --path generic --model $M --tokens "$ids" --out /tmp/g.npy --force > /dev/null
  $n/prefill logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/f.npy --force > /dev/null
  $n/old-prefill logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/o.npy --force > /dev/null
  python3 -c "
import numpy as np; g=np.load('/tmp/g.npy'); f=np.load('/tmp/f.npy'); o=np.load('/tmp/o.npy')
r=lambda x: np.abs(x-g).max()/np.abs(g).max()
print('7B T=$t fast vs generic new %.3e old %.3e; bitwise new %s old %s; new==old %s' % (r(f), r(o), np.array_equal(f,g), np.array_equal(o,g), np.array_equal(f,o)))" | tee -a $S
done
rm -f $M
wait $sbs; note "side by side rc $?"; cat $R/sbs/summary.txt >> $S 2>/dev/null; cat $R/sbs/summary.txt 2>/dev/null
cd $OUT && tar czf r.tgz r
