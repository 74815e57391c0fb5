#!/bin/bash
# Session 22 call 1: the landing's GPU gates greedy, timing and ab for candidate 034c001 (session
# 21's final) against baseline f72db9b (session 20's final), judged by the baseline's landing
# (scripts/gpu/final_gates.sh gates over the builds `landing run` made here, .landing/build/<id>);
# then gemm_bench (the fused GEMM beside cuBLAS fp16 at the 7B shapes) and the CUPTI trace of pp512
# and pp2048 passes with the candidate build. Staging: ../stage.sh.
set -u
t0=$SECONDS
source docs/h200-evidence/s22/stage.sh
note "staged in $((SECONDS - t0)) s"
OUT=$R/gates GATES="greedy timing ab" CAP_S=${GATES_CAP_S:-330} scripts/gpu/final_gates.sh gates $st/base.tar.xz \
  $st/cand.tar.xz f72db9b4906a 034c001ac43e $FINAL_WORK/baseline/gates/landing/landing > $R/final-gates.out 2>&1
note "final_gates gates rc $? ($((SECONDS - t0)) s)"; cat $R/gates/summary.txt >> $S 2>/dev/null
p=$FINAL_WORK/candidate
b0=$SECONDS
PFX_GEMM_VARIANTS=ws_n128,ws_n256,ws_sk_n256 timeout 150 $st/x/gemm_bench --reps 20 --types q4_K,q6_K,q8_0 \
  --csv $R/gemm-bench.csv > $R/gemm-bench.txt 2>&1
note "gemm_bench rc $? ($((SECONDS - b0)) s)"
M=/tmp/pfx-7b-q4km.gguf
[[ -f $M ]] || $p/engine/cli/prefill synth --profile profiles/models/llama-7b-q4km.yaml --out $M --force > /dev/null
for T in 512 2048; do
  ((SECONDS - t0 < 540)) || { note "trace pp$T: not run (time)"; continue; }
  $p/gates/trace/kerneltrace -o /tmp/trace-$T.json --range prefill --skip 1 --quiet -- \
    $p/engine/cli/prefill bench --model $M -p $T -r 3 --path fast --json > $R/trace-bench-$T.json 2> $R/trace-$T.err || note "trace pp$T failed"
  $p/gates/trace/kerneltrace summarize /tmp/trace-$T.json --top 20 > $R/trace-pp$T.txt 2>&1
  note "pp$T trace: $(grep -m1 'kernel time' $R/trace-pp$T.txt)"
done
note "elapsed $((SECONDS - t0)) s"
cd $OUT && tar czf r.tgz r
