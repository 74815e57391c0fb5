#!/usr/bin/env bash
# Packs what scripts/gpu/gemm_ws_run.sh needs on the GPU host into one carry folder (the device
# tool's `carry`, 64 MiB in all): the binaries of a PFX_STATIC_RUNTIME=ON Release build (one xz
# archive, build-tree layout, with the tracer and its library for the per-role trace), the session
# script itself (the device runs the main checkout's tree, where an unlanded script is missing),
# and the fixtures' models and oracle (backend stage).
#   scripts/gpu/pack_gemm_carry.sh BUILD_DIR CARRY_DIR [--fixtures]
# On the device:  mkdir /tmp/b && tar xJf CARRY_DIR/build.tar.xz -C /tmp/b &&
#                 bash CARRY_DIR/gemm_ws_run.sh /tmp/b OUT [stage ...]
set -euo pipefail
build=$(cd "$1" && pwd); dst=$2; fixtures=${3:-}
mkdir -p "$dst"
files=(engine/cli/prefill engine/cli/kernel-resources.json tests/kernels/gemm/test_gemm_fast
       tests/kernels/gemm/test_gemm_fast_host tests/kernels/gemm/gemm_bench tests/engine/cuda/test_cuda_backend
       gates/trace/kerneltrace gates/trace/libkerneltrace.so)
tmp=$(mktemp -d)
for f in "${files[@]}"; do
  mkdir -p "$tmp/$(dirname "$f")"
  if [[ -x $build/$f ]]; then strip -o "$tmp/$f" "$build/$f"; else cp "$build/$f" "$tmp/$f"; fi
done
tar -C "$tmp" -cJf "$dst/build.tar.xz" "${files[@]}"
rm -rf "$tmp"
cp "$(dirname "$0")/gemm_ws_run.sh" "$dst/"
if [[ $fixtures == --fixtures ]]; then
  here=$(cd "$(dirname "$0")/../.." && pwd)
  mkdir -p "$dst/fixtures"
  cp -r "$here/../shared/fixtures/models" "$here/../shared/fixtures/oracle" "$dst/fixtures/"
fi
du -sh "$dst" "$dst"/*
