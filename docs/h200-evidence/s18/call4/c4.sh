#!/bin/bash
# Session 18 call 4: the backend on the real fixtures (parity, accuracy, greedy vs the oracle) and
# the decode graph, with gemv_ws in the engine (split pick at T = 1, the chain kernel at T = 2..8).
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf m.tar.xz && tar xJf fx.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
export PFX_FIXTURES=$c/fx PFX_PROJECT_FIXTURES=$root/tests/fixtures
n=$c/m; R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
note() { echo "$*" | tee -a $S; }
timeout 300 $n/test_cuda_backend > $R/cuda_backend.txt 2>&1
note "test_cuda_backend rc $? $(grep -E '^\[  (PASSED|FAILED)|^\[  SKIPPED' $R/cuda_backend.txt | tr '\n' ' ')"
timeout 200 $n/test_cuda_decode_graph > $R/decode_graph.txt 2>&1
note "test_cuda_decode_graph rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/decode_graph.txt | tr '\n' ' ')"
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $n/test_cuda_decode_graph --gtest_filter='DecodeGraph.SmallCaseForSanitizers' > $R/san-graph.txt 2>&1
note "memcheck decode graph rc $? $(grep -E 'ERROR SUMMARY' $R/san-graph.txt | tail -1)"
grep -E "FAILED|Failure" -A3 $R/cuda_backend.txt $R/decode_graph.txt | head -40 | tee -a $S
cd $OUT && tar czf r.tgz r
# Carried: m.tar.xz = test_cuda_backend + test_cuda_decode_graph of 0bfb543's tree (stripped);
# fx.tar.xz = ../shared/fixtures/{models,oracle,README.md}.
