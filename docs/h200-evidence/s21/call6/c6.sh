#!/bin/bash
# Session 21 call 6: where a pass goes, old (f72db9b's kernels, flash variant 1) against new
# (88d9d11, flash variant 2): kerneltrace of prefill bench -p 2048 and -p 512 (-r 3), two
# interleaved rounds each, on the synthesized 7B Q4_K_M.
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p17.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
p=$c/p17; R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
M=/tmp/pfx-7b-q4km.gguf
[[ -f $M ]] || $p/prefill synth --profile profiles/models/llama-7b-q4km.yaml --out $M --force > /dev/null
for round in 1; do
  for T in 2048; do
    for v in old new; do
      bin=$p/prefill; [[ $v == old ]] && bin=$p/old-prefill
      $p/kerneltrace -o $R/trace-$v-$T-$round.json --range prefill --skip 1 --quiet -- \
        $bin bench --model $M -p $T -r 3 --path fast --json > /dev/null 2> $R/trace-$v-$T-$round.err || echo "trace $v $T failed" | tee -a $S
      $p/kerneltrace summarize $R/trace-$v-$T-$round.json --top 12 > $R/trace-$v-$T-$round.txt
      rm -f $R/trace-$v-$T-$round.json
      echo "round $round pp$T $v: $(grep -m1 'kernel time' $R/trace-$v-$T-$round.txt)" | tee -a $S
      grep -E "^attn  " $R/trace-$v-$T-$round.txt | tee -a $S
    done
  done
done
cd $OUT && tar czf r.tgz r
