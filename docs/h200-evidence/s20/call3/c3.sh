#!/bin/bash
# Session 20 call 3: the backend on the real fixtures (parity incl. decode-sized prompts bitwise,
# accuracy, greedy vs the oracle) and the decode graph, at 6ced39f (the split decode mat-vec's
# shared-memory exchange; the chain kernel's shuffles).
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p7.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
export PFX_FIXTURES=$c/p7/fx PFX_PROJECT_FIXTURES=$root/tests/fixtures
n=$c/p7; R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
note() { echo "$*" | tee -a $S; }
timeout 240 $n/test_cuda_backend > $R/cuda_backend.txt 2>&1
note "test_cuda_backend rc $? $(grep -E '^\[  (PASSED|FAILED)|^\[  SKIPPED' $R/cuda_backend.txt | tr '\n' ' ')"
timeout 150 $n/test_cuda_decode_graph > $R/decode_graph.txt 2>&1
note "test_cuda_decode_graph rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/decode_graph.txt | tr '\n' ' ')"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $n/test_cuda_decode_graph --gtest_filter='DecodeGraph.SmallCaseForSanitizers' > $R/san-graph.txt 2>&1
note "memcheck decode graph rc $? $(grep -E 'ERROR SUMMARY' $R/san-graph.txt | tail -1)"
grep -E "FAILED|Failure" -A3 $R/cuda_backend.txt $R/decode_graph.txt | head -40 | tee -a $S
grep -E "parity|bitwise|max" $R/cuda_backend.txt | head -40 > $R/parity-lines.txt
cd $OUT && tar czf r.tgz r
# Carried: .carry/p7.tar.xz = the fixtures (../shared/fixtures: models, oracle) and the stripped
# static test_cuda_backend and test_cuda_decode_graph of 6ced39f.
