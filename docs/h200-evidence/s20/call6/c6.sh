#!/bin/bash
# Session 20 call 6: mutation check of the shared-memory exchange (6ced39f with one planted fault
# each): mut-x stores the activation words of tq = 1 and 2 in each other's chunks; mut-scale gives
# slot 0 of every quad lane 1's d share. The GemvWs GPU tests must fail on both.
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p9.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
for m in mut-x mut-scale; do
  timeout 120 $c/p9/$m --gtest_filter='GemvWs.*' > $R/$m.txt 2>&1
  echo "$m rc $? $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]' $R/$m.txt | tr '\n' ' ') failing: $(grep -E '^\[  FAILED  \] GemvWs' $R/$m.txt | sort -u | tr '\n' ' ')" | tee -a $S
  grep -m3 -E "bit|differ|mismatch|Failure" $R/$m.txt | cut -c1-200 | tee -a $S
done
cd $OUT && tar czf r.tgz r
# Carried: .carry/p9.tar.xz = test_gemm_fast of 6ced39f with each fault planted (stripped, static).
