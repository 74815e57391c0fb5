#!/usr/bin/env bash
# Copies the fast-GEMM binaries of a build directory, stripped, into BUILD_DIR/gpu (small enough to
# carry to the GPU machine), with the ptxas reports of kernels/gemm_fast*.cu beside them.
#   tests/kernels/gemm/stage_for_gpu.sh BUILD_DIR
set -euo pipefail
build=$1
dst="$build/gpu"
rm -rf "$dst"
mkdir -p "$dst"
for b in test_gemm_fast test_gemm_fast_host gemm_bench; do
  strip -o "$dst/$b" "$build/tests/kernels/gemm/$b"
done
cp "$build"/kernels/ptxas/gemm_fast*.ptxas.txt "$dst/" 2>/dev/null || true
du -sh "$dst"
