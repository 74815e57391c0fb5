#!/usr/bin/env bash
# The CPU tests under AddressSanitizer + UBSan (PFX_SANITIZE=ON, no CUDA): every test labelled cpu,
# any memory error, leak or undefined behaviour failing the test that hit it.
# Usage: scripts/sanitize.sh [BUILD_DIR [TEST_DIR...]]   (default build-asan, every cpu test)
#   TEST_DIR (tests/base, tests/engine, ...): build and run only the cpu tests of those folders.
#   .ci/run passes tests/base tests/engine: the readers of untrusted files (GGUF, npy, quant
#   blocks, tokenizer vocabularies, model binding, the CPU forward, prefill on hostile files).
#   The gates tree is left to the full run: under ASan it is 133 more of the 212 files (about an
#   hour more CPU, 25 s a file), which CI's 90 minutes cannot hold next to scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
dirs=("${@:2}")
cmake --preset asan -B "$build" -DPFX_ENABLE_CUDA=OFF \
  ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest_args=(-L cpu --output-on-failure -j "$(nproc)" --timeout 1800)
if ((${#dirs[@]} == 0)); then
  cmake --build "$build" -j "$(nproc)"
  ctest --test-dir "$build" "${ctest_args[@]}" --output-junit junit-asan.xml
  exit
fi
# prefill_bench_formats (tests/engine/cli) runs `landing compare` on prefill's own output files:
# it needs the landing binary, i.e. the gates tree, and reads no untrusted input.
cmake --build "$build" -j "$(nproc)" --target "${dirs[@]/%//all}"
status=0
for d in "${dirs[@]}"; do
  ctest --test-dir "$build/$d" "${ctest_args[@]}" -E '^prefill_bench_formats$' \
    --output-junit "junit-asan-${d//\//-}.xml" || status=1
done
exit "$status"
