#!/bin/bash
# Session 19 call 3: prompts of decode size with the generic path's bits (b8ecfc1): flash attention
# at position 0, the first chunk's repack mat-vecs in the generic order, no graph at position 0.
# new = b8ecfc1; fa = the same with the split mat-vecs at T = 1 (flash only); old = 664887a.
# Attention tests; the 7B (synthesized) fast vs generic at T = 1 (5 prompts), 2, 3, 4, 7; greedy
# ids; prefill bench interleaved (tg128's first token is such a prompt).
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p4.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
p=$c/p4; NEW=$p/prefill OLD=$p/old-prefill FA=$p/fa-prefill
R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
note() { echo "$*" | tee -a $S; }
timeout 200 $p/test_kernels_attention --gtest_filter='Attention.*:Shapes/*' > $R/t-attn.txt 2>&1
note "attention tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/t-attn.txt | tr '\n' ' ')"
grep -E "Failure|FAILED" -A4 $R/t-attn.txt | head -20 | tee -a $S
M=/tmp/pfx-7b-q4km.gguf
$NEW synth --profile profiles/models/llama-7b-q4km.yaml --out $M --force > /dev/null || note "synth failed"
ids_of() { python3 -c "import random; random.seed($2); print(','.join(str(random.randrange(3, 32000)) for _ in range($1)))"; }
for spec in "1 11" "1 12" "1 13" "1 14" "1 15" "2 11" "3 11" "4 11" "7 11"; do
  set -- $spec; ids=$(ids_of $1 $2)
  $NEW logits --backend cuda --path generic --model $M --tokens "$ids" --out /tmp/g.npy --force > /dev/null
  $NEW logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/n.npy --force > /dev/null
  $FA logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/f.npy --force > /dev/null
  $OLD logits --backend cuda --path fast --model $M --tokens "$ids" --out /tmp/o.npy --force > /dev/null
  python3 -c "
import numpy as np; g=np.load('/tmp/g.npy'); n=np.load('/tmp/n.npy'); f=np.load('/tmp/f.npy'); o=np.load('/tmp/o.npy')
r=lambda x: np.abs(x-g).max()/np.abs(g).max()
print('7B T=$1 seed $2 vs generic: new %.3e (bitwise %s)  fa %.3e  old %.3e' % (r(n), np.array_equal(n,g), r(f), r(o)))" | tee -a $S
done
ids=$(ids_of 40 7)
for k in new new-off old generic; do
  bin=$NEW; path=fast; extra=
  [[ $k == old ]] && bin=$OLD; [[ $k == generic ]] && path=generic; [[ $k == new-off ]] && extra="--decode-graph off"
  timeout 60 $bin greedy --backend cuda --path $path $extra --model $M --tokens "$ids" -n 120 --json > $R/greedy-$k.json
done
python3 - $R <<'PY' | tee -a $S
import json, sys
d = sys.argv[1]
def ids(k):
    s = open(f"{d}/greedy-{k}.json").read(); return json.loads(s[s.index("{"):])["generated_ids"]
r = {k: ids(k) for k in ("new", "new-off", "old", "generic")}
print("greedy 40+120 equal to old:", {k: v == r["old"] for k, v in r.items()})
PY
ROUNDS=4 BENCH_ARGS="-p 512 -n 128 -r 3" timeout 240 bash scripts/gpu/bench_interleaved.sh $R/ab old=$OLD fa=$FA new=$NEW > $R/ab.txt 2>&1
note "A/B (4 rounds of -p 512 -n 128 -r 3):"; cat $R/ab.txt | tee -a $S
cd $OUT && tar czf r.tgz r && rm -rf r/ab
# Carried: the .carry/*.tar.xz (or p6/) it unpacks: stripped static binaries built here (new: this session's tree at the commit the header names; old: 664887a), fixtures where named.
