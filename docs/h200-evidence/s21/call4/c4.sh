#!/bin/bash
# Session 21 call 4: the final flash variant 2 (wg_wgmma: two S buffers, scale-d 0 first step,
# rescale skipped when no max moved; 3 blocks/SM at hd 64). Attention GPU tests, sanitizers, a
# planted fault (the tile barrier removed) that the tests must catch, attention_bench v0-v2, SASS
# counts, the 7B against the generic path, greedy, and prefill bench old (v1) vs new interleaved.
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p15.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
p=$c/p15; R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
note() { echo "$*" | tee -a $S; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee -a $S
timeout 200 $p/test_kernels_attention > $R/t-attention-all.txt 2>&1
note "attention tests (all) rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/t-attention-all.txt | tr '\n' ' ' | cut -c1-300)"
timeout 200 $p/nobar-test_kernels_attention --gtest_filter='FlashVariants*' > $R/t-nobar.txt 2>&1
note "planted (variant 2 without its tile barrier) FlashVariants rc $? $(grep -cE '^\[  FAILED  \] Flash.*ms\)$' $R/t-nobar.txt) failed of $(grep -cE '^\[ RUN' $R/t-nobar.txt)"
case='*EveryVariantIsBitwiseVariant0AndGeneric/T200_p100_H32_Hkv8_hd128:*EveryVariantIsBitwiseVariant0AndGeneric/T130_p64_H8_Hkv4_hd64_peaky:*EveryVariantIsBitwiseVariant0AndGeneric/T333_p0_H28_Hkv4_hd128'
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $p/test_kernels_attention --gtest_filter="$case" > $R/san-$tool.txt 2>&1
  note "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED' $R/san-$tool.txt | tr '\n' ' ')"
done
timeout 240 $p/attention_bench --reps 30 --T 512,2048,4096 --hkv 32,8 --hd 128,64 --csv $R/attn-bench.csv > $R/attn-bench.txt 2>&1
note "attention_bench rc $?"; sed -n '/== summary/,$p' $R/attn-bench.txt | tee -a $S
cuobjdump -sass $p/attention_bench > $R/sass-all.txt 2>/dev/null
python3 - $R/sass-all.txt <<'PY' | tee -a $S
import re, sys
cur = None; counts = {}
for line in open(sys.argv[1]):
    m = re.search(r"Function : (\S+)", line)
    if m: cur = m.group(1); counts[cur] = {"all": 0}; continue
    m = re.match(r"\s+/\*[0-9a-f]{4}\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+)", line)
    if m and cur:
        op = m.group(2).split(".")[0]; c = counts[cur]; c["all"] += 1; c[op] = c.get(op, 0) + 1
for k, c in counts.items():
    if "attn_flash" in k:
        top = sorted(((v, o) for o, v in c.items() if o != "all"), reverse=True)[:12]
        print(k[:60], c["all"], " ".join(f"{o}:{v}" for v, o in top))
PY
rm -f $R/sass-all.txt
M=/tmp/pfx-7b-q4km.gguf
$p/prefill synth --profile profiles/models/llama-7b-q4km.yaml --out $M --force > /dev/null || note "synth failed"
ids_of() { python3 -c "import random; random.seed($2); print(','.join(str(random.randrange(3, 32000)) for _ in range($1)))"; }
for spec in "1 11" "7 11" "128 11" "512 11" "2048 11" "1000 5"; do
  set -- $spec; ids=$(ids_of $1 $2)
  $p/prefill logits --backend cuda --path generic --model $M --tokens "$ids" --out /tmp/g.npy --force > /dev/null
  $p/prefill logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/n.npy --force > /dev/null
  $p/old-prefill logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/o.npy --force > /dev/null
  python3 -c "
import numpy as np; g=np.load('/tmp/g.npy'); n=np.load('/tmp/n.npy'); o=np.load('/tmp/o.npy')
print('7B T=$1 seed $2 new fast vs generic: bitwise %s (%.3e); new vs old fast: bitwise %s' % (np.array_equal(n,g), np.abs(n-g).max()/np.abs(g).max(), np.array_equal(n,o)))" | tee -a $S
done
ids=$(ids_of 40 7)
for v in old new; do bin=$p/prefill; [[ $v == old ]] && bin=$p/old-prefill; timeout 60 $bin greedy --backend cuda --path fast --model $M --tokens "$ids" -n 120 --json > $R/greedy-$v.json; done
python3 - $R <<'PY' | tee -a $S
import json, sys
d = sys.argv[1]
def ids(k):
    s = open(f"{d}/greedy-{k}.json").read(); return json.loads(s[s.index("{"):])["generated_ids"]
print("greedy 40+120 new == old:", ids("new") == ids("old"))
PY
ROUNDS=4 BENCH_ARGS="-p 512,2048 -r 5" timeout 280 bash scripts/gpu/bench_interleaved.sh $R/ab old=$p/old-prefill new=$p/prefill > $R/ab.txt 2>&1
note "A/B (4 rounds of -p 512,2048 -r 5):"; cat $R/ab.txt | tee -a $S
cd $OUT && tar czf r.tgz r
