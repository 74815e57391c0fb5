#!/bin/bash
# Session 23 call 4 (the machine of call 3, warm): the landing's GPU gates parity and accuracy, the
# GPU host's share of the suite gate (every test labelled gpu of the candidate's landing build),
# compute-sanitizer memcheck and racecheck on the fused GEMM's sanitizer cases (AccumulateF32 among
# them). No side by side: the session's device time did not cover one more (call 2 ran it with
# 9fcdd5f's build). Staging: ../stage.sh.
set -u
t0=$SECONDS
export CAND=d5e82a1a4d3f
source docs/h200-evidence/s23/stage.sh
OUT=$R/gates GATES="parity accuracy" CAP_S=${GATES_CAP_S:-150} scripts/gpu/final_gates.sh gates $st/base.tar.xz \
  $st/cand.tar.xz $BASE $CAND $FINAL_WORK/baseline/gates/landing/landing > $R/final-gates.out 2>&1
note "final_gates gates rc $? ($((SECONDS - t0)) s)"; cat $R/gates/summary.txt >> $S 2>/dev/null
s0=$SECONDS
OUT=$R/suite CAP_S=120 scripts/gpu/final_gates.sh suite $st/base.tar.xz $st/cand.tar.xz \
  $BASE $CAND $FINAL_WORK/baseline/gates/landing/landing > $R/final-suite.out 2>&1
note "final_gates suite rc $? ($((SECONDS - s0)) s)"; cat $R/suite/summary.txt >> $S 2>/dev/null
b=$st/s/$CAND
export PFX_PROJECT_FIXTURES=$root/tests/fixtures
san() {  # san BINARY FILTER
  for tool in memcheck racecheck; do
    timeout 50 compute-sanitizer --tool $tool --error-exitcode 9 $b/$1 --gtest_filter="$2" > $R/san-$tool-$(basename $1).txt 2>&1
    note "$tool $(basename $1) '$2' rc $? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $R/san-$tool-$(basename $1).txt | tr '\n' ' ')"
  done
}
((SECONDS - t0 < 300)) && san tests/kernels/gemm/test_gemm_fast '*SmallCaseForSanitizers'
note "elapsed $((SECONDS - t0)) s"
cd $OUT && tar czf r.tgz r
