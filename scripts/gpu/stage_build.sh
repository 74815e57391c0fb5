#!/usr/bin/env bash
# Packs what a GPU session needs from a build made here (CMake preset gpu-static: Release,
# PFX_STATIC_RUNTIME=ON; `cmake --preset gpu-static && cmake --build build-gpu`) into one
# compressed archive that fits the device tool's 64 MiB carry, keeping the build-tree layout:
#   scripts/gpu/stage_build.sh BUILD_DIR ARCHIVE [--gates-only]   (unpack there with: tar xJf ARCHIVE)
# --gates-only: what the GPU gates run (prefill and its kernel records, the tracer, landing), no
# test binaries (about a third of the size: two builds and the fixtures fit one carry).
set -euo pipefail
build=$1; archive=$2
files=(
  engine/cli/prefill engine/cli/kernel-resources.json engine/cli/kernel-resources.ptxas.txt engine/cli/kernel-sass.json
  tests/engine/cuda/test_cuda_backend tests/engine/cuda/test_cuda_decode_graph
  gates/trace/kerneltrace gates/trace/libkerneltrace.so
  tests/gates/trace/test_trace_gpu tests/gates/trace/trace_gpu_program tests/gates/trace/trace_plain_cuda_program
  tests/kernels/test_kernels_attention tests/kernels/test_kernels_dequant tests/kernels/test_kernels_norm_elementwise
  tests/kernels/test_kernels_rope tests/kernels/attention_bench tests/kernels/gemm/test_gemm_fast tests/kernels/gemm/gemm_bench tests/kernels/gemm/gemv_bench
  gates/landing/landing
)
if [[ ${3:-} == --gates-only ]]; then
  files=(engine/cli/prefill engine/cli/kernel-resources.json engine/cli/kernel-sass.json gates/trace/kerneltrace
         gates/trace/libkerneltrace.so gates/landing/landing)
fi
present=()
for f in "${files[@]}"; do [[ -e $build/$f ]] && present+=("$build/$f") || echo "stage_build: missing $build/$f" >&2; done
# Shared libraries a static build of an older commit still links and the GPU host lacks
# (libpugixml, before PFX_STATIC_RUNTIME linked its archive: a baseline's landing could not start
# on the H200 host in session 8), copied into BUILD/lib: the GPU scripts put that folder on
# LD_LIBRARY_PATH. Builds of newer commits link none of them.
mkdir -p "$build/lib"
for bin in "${present[@]}"; do
  [[ -x $bin && ! -d $bin ]] || continue
  for lib in $(ldd "$bin" 2>/dev/null | awk '/=> \// {print $3}' | grep -E 'libpugixml' || true); do cp -L "$lib" "$build/lib/"; done
done
if [[ -n $(ls -A "$build/lib") ]]; then present+=("$build/lib"); fi
tar cJf "$archive" "${present[@]}"
ls -la "$archive"
