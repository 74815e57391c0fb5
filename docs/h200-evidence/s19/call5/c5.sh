#!/bin/bash
# Session 19 call 5: side_by_side.sh (PAIRS=2 REPS=3) of b8ecfc1 against llama.cpp on llama.cpp's
# own Q4_K_M file of a random llama-2-7B.
set -u
root=$(pwd); c=$root/.carry/p6
xz -d $c/prefill.xz && chmod +x $c/prefill
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
R=$OUT/r; mkdir -p $R
PAIRS=2 REPS=3 bash $c/peer/side_by_side.sh $c/peer $c/prefill $R/sbs > $R/sbs.log 2>&1
echo "side by side rc $?"; cat $R/sbs/summary.txt
cd $OUT && tar czf r.tgz r
# Carried: the .carry/*.tar.xz (or p6/) it unpacks: stripped static binaries built here (new: this session's tree at the commit the header names; old: 664887a), fixtures where named.
