#!/bin/bash
# Session 19 call 4: the backend on the real fixtures (parity incl. the new bitwise test of
# decode-sized prompts, accuracy, greedy vs the oracle) and the decode graph, b8ecfc1.
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p5.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
export PFX_FIXTURES=$c/p5/fx PFX_PROJECT_FIXTURES=$root/tests/fixtures
n=$c/p5; R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
note() { echo "$*" | tee -a $S; }
timeout 300 $n/test_cuda_backend > $R/cuda_backend.txt 2>&1
note "test_cuda_backend rc $? $(grep -E '^\[  (PASSED|FAILED)|^\[  SKIPPED' $R/cuda_backend.txt | tr '\n' ' ')"
timeout 200 $n/test_cuda_decode_graph > $R/decode_graph.txt 2>&1
note "test_cuda_decode_graph rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/decode_graph.txt | tr '\n' ' ')"
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $n/test_cuda_decode_graph --gtest_filter='DecodeGraph.SmallCaseForSanitizers' > $R/san-graph.txt 2>&1
note "memcheck decode graph rc $? $(grep -E 'ERROR SUMMARY' $R/san-graph.txt | tail -1)"
grep -E "FAILED|Failure" -A3 $R/cuda_backend.txt $R/decode_graph.txt | head -40 | tee -a $S
cd $OUT && tar czf r.tgz r
# Carried: the .carry/*.tar.xz (or p6/) it unpacks: stripped static binaries built here (new: this session's tree at the commit the header names; old: 664887a), fixtures where named.
