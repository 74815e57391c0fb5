#!/bin/bash
# Session 20 call 5: side_by_side.sh (PAIRS=2 REPS=3) of 6ced39f against llama.cpp on llama.cpp's
# own Q4_K_M file of a random llama-2-7B.
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p8.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
p=$c/p8; R=$OUT/r; mkdir -p $R
rm -f /tmp/pfx-7b-q4km.gguf
PAIRS=2 REPS=3 bash $p/peer/side_by_side.sh $p/peer $p/prefill $R/sbs > $R/sbs.log 2>&1
echo "side by side rc $?"; cat $R/sbs/summary.txt
cd $OUT && tar czf r.tgz r
# Carried: .carry/p8.tar.xz (as call 4's): prefill of 6ced39f, ../shared/peer, the vocab file.
