#!/bin/bash
# Session 22 call 2 (the machine of call 1, warm): the landing's GPU gates parity and accuracy
# (every fixture now here), the GPU host's share of the suite gate (every test labelled gpu of the
# candidate's landing build, scripts/gpu/final_gates.sh suite), then compute-sanitizer memcheck and
# racecheck on the sanitizer cases of the fused GEMM and decode mat-vec, a flash attention variant
# case and the decode graph. Staging: ../stage.sh.
set -u
t0=$SECONDS
source docs/h200-evidence/s22/stage.sh
OUT=$R/gates GATES="parity accuracy" CAP_S=${GATES_CAP_S:-200} scripts/gpu/final_gates.sh gates $st/base.tar.xz \
  $st/cand.tar.xz f72db9b4906a 034c001ac43e $FINAL_WORK/baseline/gates/landing/landing > $R/final-gates.out 2>&1
note "final_gates gates rc $? ($((SECONDS - t0)) s)"; cat $R/gates/summary.txt >> $S 2>/dev/null
s0=$SECONDS
OUT=$R/suite CAP_S=$((460 - (SECONDS - t0))) scripts/gpu/final_gates.sh suite $st/base.tar.xz $st/cand.tar.xz \
  f72db9b4906a 034c001ac43e $FINAL_WORK/baseline/gates/landing/landing > $R/final-suite.out 2>&1
note "final_gates suite rc $? ($((SECONDS - s0)) s)"; cat $R/suite/summary.txt >> $S 2>/dev/null
b=$st/s/034c001ac43e
export PFX_PROJECT_FIXTURES=$root/tests/fixtures
san() {  # san BINARY FILTER
  for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $b/$1 --gtest_filter="$2" > $R/san-$tool-$(basename $1).txt 2>&1
    note "$tool $(basename $1) '$2' rc $? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $R/san-$tool-$(basename $1).txt | tr '\n' ' ')"
  done
}
((SECONDS - t0 < 470)) && san tests/kernels/gemm/test_gemm_fast '*SmallCaseForSanitizers'
((SECONDS - t0 < 520)) && san tests/kernels/test_kernels_attention '*EveryVariantIsBitwiseVariant0AndGeneric/T200_p100_H32_Hkv8_hd128'
((SECONDS - t0 < 555)) && san tests/engine/cuda/test_cuda_decode_graph 'DecodeGraph.SmallCaseForSanitizers'
note "elapsed $((SECONDS - t0)) s"
cd $OUT && tar czf r.tgz r
