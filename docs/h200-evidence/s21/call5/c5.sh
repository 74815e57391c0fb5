#!/bin/bash
# Session 21 call 5: 88d9d11 (flash variant 2 the default). The race gate's new flash plant (the
# tile loop's cp.async wait removed) must fail the FlashVariants tests; then side_by_side.sh
# (PAIRS=2 REPS=3) against llama.cpp on llama.cpp's own Q4_K_M file of a random llama-2-7B.
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p16.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
p=$c/p16; R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
timeout 120 $p/nowait-test_kernels_attention --gtest_filter='FlashVariants*' > $R/t-nowait.txt 2>&1
echo "planted (variant 2 without its tile wait) FlashVariants rc $? $(grep -cE '^\[  FAILED  \] Flash.*ms\)$' $R/t-nowait.txt) failed of $(grep -cE '^\[ RUN' $R/t-nowait.txt)" | tee -a $S
grep -E "differ; first" $R/t-nowait.txt | head -3 | tee -a $S
rm -f /tmp/pfx-7b-q4km.gguf
PAIRS=2 REPS=3 bash $p/peer/side_by_side.sh $p/peer $p/prefill $R/sbs > $R/sbs.log 2>&1
echo "side by side rc $?" | tee -a $S; cat $R/sbs/summary.txt | tee -a $S
cd $OUT && tar czf r.tgz r
