#!/bin/bash
# Session 18 call 1: gemv_ws GPU tests, sanitizers, gemv_bench (ws vs direct). Carried: t.tar.xz =
# test_gemm_fast + gemv_bench of 429c66e's tree (stripped).
cd "$(dirname "$0")" && tar xJf t.tar.xz && cd t
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt 2>&1
timeout 300 ./test_gemm_fast --gtest_filter='GemvWs.*:GemvFast.*:GemvSeq.*' > $OUT/tests.txt 2>&1; echo "tests rc $?" >> $OUT/summary.txt
grep -E "^\[  (PASSED|FAILED)|FAILED  \]" $OUT/tests.txt | head -20 >> $OUT/summary.txt
for tool in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool ./test_gemm_fast --gtest_filter='GemvWs.SmallCaseForSanitizers' > $OUT/san-$tool.txt 2>&1
  echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool.txt | tail -1)" >> $OUT/summary.txt
done
timeout 400 ./gemv_bench --types q4_K,q6_K --T 1,2 --reps 15 --csv $OUT/gemv.csv > $OUT/bench.txt 2>&1; echo "bench rc $?" >> $OUT/summary.txt
cat $OUT/summary.txt
sed -n '/== gemv summary/,$p' $OUT/bench.txt
