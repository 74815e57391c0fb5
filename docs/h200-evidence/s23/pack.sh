#!/bin/bash
# Session 23, run here (no GPU) from the repository root once `landing run` has built both commits
# (calls 3-4: CAND=d5e82a1a4d3f MID=9fcdd5f7ebb8):
# packs .carry/c1/builds.tar.xz for stage.sh. One xz stream with a 256 MiB dictionary over all four
# parts, so the two builds' identical kernels are stored once (~18 MB instead of ~30).
set -euo pipefail
BASE=dd970ee8ad2e CAND=${CAND:-9fcdd5f7ebb8} MID=${MID:-}
root=$(pwd); tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd .landing/build && "$root/scripts/gpu/stage_build.sh" $BASE "$tmp/base.tar.xz" --gates-only)
"$root/scripts/gpu/stage_suite_share.sh" .landing/build/$CAND "$tmp/cand.tar.xz"
mkdir -p "$tmp/p/b" "$tmp/p/s" "$tmp/p/x" "$tmp/p/xo"
tar xJf "$tmp/base.tar.xz" -C "$tmp/p/b"
tar xJf "$tmp/cand.tar.xz" -C "$tmp/p/s"
cp .landing/build/$CAND/tests/kernels/gemm/gemm_bench "$tmp/p/x/"
cp .landing/build/$BASE/tests/kernels/gemm/gemm_bench "$tmp/p/xo/"
parts="b s x xo"
if [[ -n $MID ]]; then mkdir -p "$tmp/p/xm"; cp .landing/build/$MID/tests/kernels/gemm/gemm_bench "$tmp/p/xm/"; parts+=" xm"; fi
mkdir -p .carry/c1
(cd "$tmp/p" && tar cf - $parts | xz --lzma2=preset=9e,dict=256MiB -T1 > "$root/.carry/c1/builds.tar.xz")
ls -la .carry/c1
