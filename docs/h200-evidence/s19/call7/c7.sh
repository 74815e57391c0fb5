#!/bin/bash
# Session 19 call 7 (mutation check): the two new checks built on a tree with the fix taken out
# (attention_fast back to decode at every T <= 4, set_generic_decode_order(false) always); they must fail.
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf pm.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PFX_FIXTURES=$c/pm/fx PFX_PROJECT_FIXTURES=$root/tests/fixtures
R=$OUT/r; mkdir -p $R
timeout 60 $c/pm/test_cuda_backend --gtest_filter='*DecodeSized*' > $R/backend.txt 2>&1; echo "backend rc $?"
timeout 60 $c/pm/test_kernels_attention --gtest_filter='Shapes/*' > $R/attn.txt 2>&1; echo "attention rc $?"
grep -E "^\[  (PASSED|FAILED)|T = [0-9]+:|position 0 vs generic" $R/backend.txt $R/attn.txt | head -30
# Carried: pm.tar.xz = test_cuda_backend and test_kernels_attention built from 0368c87 with those two lines changed (stripped), and the shared fixtures.
