#!/bin/bash
# Session 23 call 3 (a fresh machine): the landing's GPU gates greedy, timing and ab for candidate d5e82a1 against
# baseline dd970ee, judged by the baseline's landing (scripts/gpu/final_gates.sh gates over the
# builds `landing run` made here); then gemm_bench of both builds (the AccumulateF32 rows are what
# changed) and CUPTI traces of pp2048 and pp512 passes with both. Staging: ../stage.sh.
set -u
t0=$SECONDS
export CAND=d5e82a1a4d3f
source docs/h200-evidence/s23/stage.sh
note "staged in $((SECONDS - t0)) s"
OUT=$R/gates GATES="greedy timing ab" CAP_S=${GATES_CAP_S:-330} scripts/gpu/final_gates.sh gates $st/base.tar.xz \
  $st/cand.tar.xz $BASE $CAND $FINAL_WORK/baseline/gates/landing/landing > $R/final-gates.out 2>&1
note "final_gates gates rc $? ($((SECONDS - t0)) s)"; cat $R/gates/summary.txt >> $S 2>/dev/null
for b in new:x old:xo; do
  b0=$SECONDS
  PFX_GEMM_VARIANTS=ws_n128,ws_n256 timeout 100 $st/${b#*:}/gemm_bench --reps 20 --types q4_K,q6_K \
    --csv $R/gemm-bench-${b%:*}.csv > $R/gemm-bench-${b%:*}.txt 2>&1
  note "gemm_bench ${b%:*} rc $? ($((SECONDS - b0)) s)"
done
M=/tmp/pfx-7b-q4km.gguf
[[ -f $M ]] || $FINAL_WORK/candidate/engine/cli/prefill synth --profile profiles/models/llama-7b-q4km.yaml --out $M --force > /dev/null
for T in 2048 512; do
  for b in new:candidate old:baseline; do
    ((SECONDS - t0 < 520)) || { note "trace pp$T ${b%:*}: not run (time)"; continue; }
    p=$FINAL_WORK/${b#*:}; n=${b%:*}-$T
    $p/gates/trace/kerneltrace -o /tmp/trace-$n.json --range prefill --skip 1 --quiet -- \
      $p/engine/cli/prefill bench --model $M -p $T -r 3 --path fast --json > $R/trace-bench-$n.json 2> $R/trace-$n.err || note "trace $n failed"
    $p/gates/trace/kerneltrace summarize /tmp/trace-$n.json --top 12 > $R/trace-$n.txt 2>&1
    note "trace $n: $(grep -m1 'kernel time' $R/trace-$n.txt)"
  done
done
note "elapsed $((SECONDS - t0)) s"
cd $OUT && tar czf r.tgz r
