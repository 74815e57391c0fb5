#!/bin/bash
# Session 21 call 1: flash attention variant 2 (wg_wgmma). Attention GPU tests (new, and a build
# with the V descriptor's strides swapped as insurance), sanitizers on variant cases, attention_bench
# variants 1 and 2, the 7B fast vs generic and greedy with variant 2 as the default, and prefill
# bench old (variant 1 default) vs new (variant 2 default) interleaved.
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p12.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
p=$c/p12; R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
note() { echo "$*" | tee -a $S; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee -a $S
for v in new swap; do
  bin=$p/test_kernels_attention; [[ $v == swap ]] && bin=$p/swap-test_kernels_attention
  timeout 200 $bin --gtest_filter='FlashVariants*' > $R/t-variants-$v.txt 2>&1
  note "FlashVariants $v rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/t-variants-$v.txt | tr '\n' ' ')"
  grep -E "Failure|FAILED|differ|mismatch" $R/t-variants-$v.txt | head -8 | tee -a $S
done
timeout 200 $p/test_kernels_attention > $R/t-attention-all.txt 2>&1
note "attention tests (all) rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/t-attention-all.txt | tr '\n' ' ')"
case='*EveryVariantIsBitwiseVariant0AndGeneric/T200_p100_H32_Hkv8_hd128'
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $p/test_kernels_attention --gtest_filter="$case" > $R/san-$tool.txt 2>&1
  note "$tool ($case) rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|tests ran|PASSED' $R/san-$tool.txt | tr '\n' ' ')"
done
timeout 200 $p/attention_bench --reps 30 --T 512,2048,4096 --hkv 32,8 --hd 128,64 --variants 1,2 --csv $R/attn-bench.csv > $R/attn-bench.txt 2>&1
note "attention_bench rc $?"; tail -30 $R/attn-bench.txt | tee -a $S
M=/tmp/pfx-7b-q4km.gguf
$p/prefill synth --profile profiles/models/llama-7b-q4km.yaml --out $M --force > /dev/null || note "synth failed"
ids_of() { python3 -c "import random; random.seed($2); print(','.join(str(random.randrange(3, 32000)) for _ in range($1)))"; }
for spec in "7 11" "512 11" "2048 11" "1000 5"; do
  set -- $spec; ids=$(ids_of $1 $2)
  $p/prefill logits --backend cuda --path generic --model $M --tokens "$ids" --out /tmp/g.npy --force > /dev/null
  $p/prefill logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/n.npy --force > /dev/null
  $p/old-prefill logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/o.npy --force > /dev/null
  python3 -c "
import numpy as np; g=np.load('/tmp/g.npy'); n=np.load('/tmp/n.npy'); o=np.load('/tmp/o.npy')
print('7B T=$1 seed $2 new vs generic: bitwise %s (%.3e); new vs old bitwise %s' % (np.array_equal(n,g), np.abs(n-g).max()/np.abs(g).max(), np.array_equal(n,o)))" | tee -a $S
done
ids=$(ids_of 40 7)
timeout 60 $p/prefill greedy --backend cuda --path fast --model $M --tokens "$ids" -n 120 --json > $R/greedy-new.json
timeout 60 $p/old-prefill greedy --backend cuda --path fast --model $M --tokens "$ids" -n 120 --json > $R/greedy-old.json
python3 - $R <<'PY' | tee -a $S
import json, sys
d = sys.argv[1]
def ids(k):
    s = open(f"{d}/greedy-{k}.json").read(); return json.loads(s[s.index("{"):])["generated_ids"]
print("greedy 40+120 new == old:", ids("new") == ids("old"))
PY
ROUNDS=3 BENCH_ARGS="-p 512,2048 -n 128 -r 3" timeout 300 bash scripts/gpu/bench_interleaved.sh $R/ab old=$p/old-prefill new=$p/prefill > $R/ab.txt 2>&1
note "A/B (3 rounds of -p 512,2048 -n 128 -r 3):"; cat $R/ab.txt | tee -a $S
cd $OUT && tar czf r.tgz r
