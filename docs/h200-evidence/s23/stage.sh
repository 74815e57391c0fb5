#!/bin/bash
# Session 23, sourced by each call's script. Baseline dd970ee (main at the session's start: the
# engine of session 21, 034c001) against candidate $CAND: calls 1-2 9fcdd5f (the AccumulateF32
# epilogue with 8 / 16 column groups in flight), calls 3-4 d5e82a1 (and the old outputs prefetched
# 16 k-tiles earlier), each built here by `landing run` (.landing/build/<id>). The tracked tree
# (36 MB) plus the builds and every fixture exceed one call's 64 MiB, so call 1 carried the builds
# and the fixtures the greedy gate reads, and call 2 (the same machine, still warm: it found call
# 1's files in .carry/) the other fixtures and the peer for the side by side:
#   .carry/c1/builds.tar.xz  b/ = the baseline's landing build (gates-only), s/ = the candidate's
#                            (its suite share), x/ and xo/ = the candidate's and baseline's gemm_bench
#                            (9fcdd5f's gemm_bench ran in call 1; calls 3-4 carry no third)
#   .carry/c1/fxa.tar.xz     ../shared/fixtures oracle/ (but its two largest logits files) and models
#                            stories260K, kq256-q4km, kq256-q6k
#   .carry/c2/fxb.tar.xz     the other models and oracle files, the spm vocab; .carry/c2/peer = ../shared/peer
# (docs/h200-evidence/s23/pack.sh made builds.tar.xz.)
root=$(pwd); c=$root/.carry
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
export FINAL_WORK=$c/final PFX_FIXTURES=$c/fixtures
BASE=dd970ee8ad2e CAND=${CAND:-9fcdd5f7ebb8}
st=$c/st
R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
note() { echo "$*" | tee -a $S; }
if [[ ! -f $st/cand.tar.xz && -f $c/c1/builds.tar.xz ]]; then
  mkdir -p $st && tar xJf $c/c1/builds.tar.xz -C $st
  (cd $st/b && tar cf - $BASE | xz -0 -T0 > $st/base.tar.xz)
  (cd $st/s && tar cf - $CAND | xz -0 -T0 > $st/cand.tar.xz)
  [[ -f $c/c1/fxa.tar.xz ]] && tar xJf $c/c1/fxa.tar.xz -C $c
fi
[[ -f $c/c2/fxb.tar.xz && ! -f $c/fixtures/models/kq256spm-q4km.gguf ]] && tar xJf $c/c2/fxb.tar.xz -C $c
if [[ ! -f $st/cand.tar.xz ]]; then
  note "stage: no builds in $st (call 1 did not run on this machine: it was released between calls)"
  cd $OUT && tar czf r.tgz r; exit 7
fi
note "fixtures: $(ls $c/fixtures/models | tr '\n' ' ')"
