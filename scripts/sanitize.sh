#!/usr/bin/env bash
# The CPU tests under AddressSanitizer + UBSan (PFX_SANITIZE=ON, no CUDA): every test labelled cpu,
# any memory error, leak or undefined behaviour failing the test that hit it.
# Usage: scripts/sanitize.sh [BUILD_DIR]   (default build-asan)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
cmake --preset asan -B "$build" -DPFX_ENABLE_CUDA=OFF \
  ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
cmake --build "$build" -j "$(nproc)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" -L cpu --output-on-failure -j "$(nproc)" --timeout 1800 --output-junit junit-asan.xml
