#!/usr/bin/env bash
# The README's test command: configure, build (warnings are errors), run every CTest test.
# GPU tests report SKIPPED where there is no GPU. Usage: scripts/test.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cmake -S . -B "$build" -G Ninja -DPFX_WERROR=ON >/dev/null
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 900 --output-junit junit.xml
