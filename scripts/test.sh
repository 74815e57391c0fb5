#!/usr/bin/env bash
# The README's test command: install what is missing (scripts/bootstrap.sh), configure (CMake
# preset "default": warnings are errors), build, run every CTest test. GPU tests report SKIPPED
# where there is no GPU.
# Usage: scripts/test.sh [build-dir]        (default build, the preset's folder)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
build=${1:-build}
cmake --preset default -B "$build" >/dev/null
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 900 --output-junit junit.xml
