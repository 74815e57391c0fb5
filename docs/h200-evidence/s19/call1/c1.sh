#!/bin/bash
# Session 19 call 1: the decode step with the norms in the Q/K/V and gate/up mat-vecs and the
# attention's self-merging splits. GPU tests and sanitizers of the changed kernels; the 7B fast
# path against the old build (session 18's final, 664887a) bit for bit at T = 1, 7, 128 and against
# the generic path; greedy ids; then prefill bench interleaved: old, norm-only (N), new.
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p1.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
p=$c/p1; NEW=$p/prefill OLD=$p/old-prefill VAR=$p/norm-prefill
R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
note() { echo "$*" | tee -a $S; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee -a $S
timeout 200 $p/test_gemm_fast --gtest_filter='GemvWs.*' > $R/t-gemvws.txt 2>&1
note "GemvWs tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/t-gemvws.txt | tr '\n' ' ')"
timeout 200 $p/test_kernels_attention --gtest_filter='Attention.*:Shapes/*' > $R/t-attn.txt 2>&1
note "attention tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/t-attn.txt | tr '\n' ' ')"
timeout 100 $p/test_kernels_norm_elementwise > $R/t-norm.txt 2>&1
note "norm/elementwise tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/t-norm.txt | tr '\n' ' ')"
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $p/test_gemm_fast --gtest_filter='GemvWs.SmallCaseForSanitizers' > $R/san-gemvws-$tool.txt 2>&1
  note "$tool GemvWs small rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-gemvws-$tool.txt | tail -1)"
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $p/test_kernels_attention --gtest_filter='Attention.SelfMerging*' > $R/san-attn-$tool.txt 2>&1
  note "$tool attention self-merge rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-attn-$tool.txt | tail -1)"
done
grep -E "Failure|FAILED" -A4 $R/t-*.txt | head -30 | tee -a $S
M=/tmp/pfx-7b-q4km.gguf
$NEW synth --profile profiles/models/llama-7b-q4km.yaml --out $M --force > /dev/null || note "synth failed"
ids_of() { python3 -c "import random; random.seed($2); print(','.join(str(random.randrange(3, 32000)) for _ in range($1)))"; }
for spec in "1 11" "1 12" "1 15" "7 11" "128 11"; do
  set -- $spec; ids=$(ids_of $1 $2)
  $NEW logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/n.npy --force > /dev/null
  $OLD logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/o.npy --force > /dev/null
  $NEW logits --backend cuda --path generic --model $M --tokens "$ids" --out /tmp/g.npy --force > /dev/null
  python3 -c "
import numpy as np; g=np.load('/tmp/g.npy'); n=np.load('/tmp/n.npy'); o=np.load('/tmp/o.npy')
r=lambda x: np.abs(x-g).max()/np.abs(g).max()
print('7B T=$1 seed $2: new==old bitwise %s; vs generic new %.3e old %.3e' % (np.array_equal(n,o), r(n), r(o)))" | tee -a $S
done
ids=$(ids_of 40 7)
for k in new new-off norm old generic; do
  bin=$NEW; path=fast; extra=
  [[ $k == old ]] && bin=$OLD; [[ $k == norm ]] && bin=$VAR; [[ $k == generic ]] && path=generic
  [[ $k == new-off ]] && extra="--decode-graph off"
  timeout 60 $bin greedy --backend cuda --path $path $extra --model $M --tokens "$ids" -n 120 --json > $R/greedy-$k.json
done
python3 - $R <<'PY' | tee -a $S
import json, sys
d = sys.argv[1]
def ids(k):
    s = open(f"{d}/greedy-{k}.json").read(); return json.loads(s[s.index("{"):])["generated_ids"]
r = {k: ids(k) for k in ("new", "new-off", "norm", "old", "generic")}
print("greedy 40+120 equal to old:", {k: v == r["old"] for k, v in r.items()})
PY
ROUNDS=4 timeout 300 bash scripts/gpu/bench_interleaved.sh $R/ab old=$OLD norm=$VAR new=$NEW > $R/ab.txt 2>&1
note "A/B (4 rounds of -p 512,2048 -n 128 -r 3):"; cat $R/ab.txt | tee -a $S
cd $OUT && tar czf r.tgz r && rm -rf r/ab
# Carried: the .carry/*.tar.xz (or p6/) it unpacks: stripped static binaries built here (new: this session's tree at the commit the header names; old: 664887a), fixtures where named.
