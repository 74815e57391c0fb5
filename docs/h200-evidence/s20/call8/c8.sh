#!/bin/bash
# Session 20 call 8: the launchers now raise the dynamic shared-memory limit through
# detail::set_dynamic_smem (the project's helper) instead of their own once-only lambdas.
# GemvWs GPU tests (incl. the 16-warp launches, the only ones above 48 KB) and the sanitizers.
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p11.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
timeout 120 $c/p11/test_gemm_fast --gtest_filter='GemvWs.*' > $R/t-gemvws.txt 2>&1
echo "GemvWs tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/t-gemvws.txt | tr '\n' ' ')" | tee -a $S
grep -c "warps 16" $R/t-gemvws.txt | sed 's/^/lines naming 16-warp cases: /' | tee -a $S
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $c/p11/test_gemm_fast --gtest_filter='GemvWs.SmallCaseForSanitizers' > $R/san-$tool.txt 2>&1
  echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-$tool.txt | tail -1)" | tee -a $S
done
cd $OUT && tar czf r.tgz r
# Carried: .carry/p11.tar.xz = test_gemm_fast of this tree (stripped, static).
