#!/bin/bash
# Session 22 call 3: ../shared/peer/side_by_side.sh (PAIRS=2 REPS=3) with candidate 034c001's
# landing-build prefill against llama.cpp, on llama.cpp's own Q4_K_M file of a random llama-2-7B.
# Staging: ../stage.sh. A fresh machine (call 2's was released): it carried .carry/c1/builds.tar.xz,
# .carry/c2/peer and the spm vocab in .carry/c3.
set -u
t0=$SECONDS
source docs/h200-evidence/s22/stage.sh
rm -f /tmp/pfx-7b-q4km.gguf
PAIRS=2 REPS=3 VOCAB=$c/c3/ggml-vocab-llama-spm.gguf bash $c/c2/peer/side_by_side.sh $c/c2/peer \
  $st/s/034c001ac43e/engine/cli/prefill $R/sbs > $R/sbs.log 2>&1
note "side by side rc $? ($((SECONDS - t0)) s)"; cat $R/sbs/summary.txt >> $S 2>/dev/null
cd $OUT && tar czf r.tgz r
