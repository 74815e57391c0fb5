#!/bin/bash
# Session 22, sourced by each call's script. The tracked tree, the fixtures and the builds do not
# fit one call's 64 MiB: call 1 carried the builds and most fixtures, call 2 (the same machine,
# still warm) the rest and found call 1's files in .carry/; call 3 got a fresh machine and carried
# the builds again (no fixtures: the side by side needs only prefill, the peer and the vocab).
#   .carry/c1/builds.tar.xz  b/ = baseline f72db9b's landing build (gates-only), s/ = candidate
#                            034c001's landing build (its suite share), x/ = its gemm_bench
#   .carry/c1/fx1.tar.xz     ../shared/fixtures oracle/ and every model but kq256spm-q4km
#   .carry/c2/fx2.tar.xz     kq256spm-q4km.gguf and the spm vocab; .carry/c2/peer = ../shared/peer
# The builds are repacked as the one-top-folder archives scripts/gpu/final_gates.sh takes (xz -0).
root=$(pwd); c=$root/.carry
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
export FINAL_WORK=$c/final PFX_FIXTURES=$c/fixtures
st=$c/st
R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
note() { echo "$*" | tee -a $S; }
if [[ ! -f $st/cand.tar.xz && -f $c/c1/builds.tar.xz ]]; then
  mkdir -p $st && tar xJf $c/c1/builds.tar.xz -C $st
  (cd $st/b && tar cf - f72db9b4906a | xz -0 -T0 > $st/base.tar.xz)
  (cd $st/s && tar cf - 034c001ac43e | xz -0 -T0 > $st/cand.tar.xz)
  [[ -f $c/c1/fx1.tar.xz ]] && tar xJf $c/c1/fx1.tar.xz -C $c
fi
[[ -f $c/c2/fx2.tar.xz && ! -f $c/fixtures/models/kq256spm-q4km.gguf ]] && tar xJf $c/c2/fx2.tar.xz -C $c
if [[ ! -f $st/cand.tar.xz ]]; then
  note "stage: no builds in $st (call 1 did not run on this machine: it was released between calls)"
  cd $OUT && tar czf r.tgz r; exit 7
fi
note "fixtures: $(ls $c/fixtures/models | tr '\n' ' ')"
