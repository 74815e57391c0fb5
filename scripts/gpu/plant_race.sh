#!/usr/bin/env bash
# Builds, here (no GPU needed), the race-gate evidence for the H200: three race-stress builds
# (-DPFX_RACE_STRESS=ON, kernels/race_stress.cuh) of the commit at REV, as build folders a GPU host
# can run (PFX_STATIC_RUNTIME=ON):
#   OUT/stress           the commit as it is: parity must PASS (the stress alone changes nothing)
#   OUT/flash-nobarrier  flash attention without its end-of-tile-loop barrier
#                        (kernels/attention_flash.cu; docs/perf-h200.md: passed parity at 0 before)
#   OUT/gemm-nobarrier   the fast GEMM main loop without its per-k-tile barrier
#                        (kernels/gemm_fast_kernel.cuh)
# Then scripts/gpu/race_check.sh runs parity and compute-sanitizer on each, on the device.
#   scripts/gpu/plant_race.sh OUT [REV]      (REV default HEAD; about 3 × a CUDA build here)
set -euo pipefail
out=$(mkdir -p "$1" && cd "$1" && pwd); rev=${2:-HEAD}
repo=$(git rev-parse --show-toplevel)
work=${TMPDIR:-/tmp}/pfx-plant-race-$$
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"
# One source tree and one build folder for all three: between variants only the planted file
# changes, so each later build recompiles the one translation unit that includes it.
src=$work/src
mkdir -p "$src"
git -C "$repo" archive "$rev" | tar -x -C "$src"
configured=0 last_planted=""

# plant NAME FILE ANCHOR TARGET: REV with the first line containing TARGET at or after the one
# line containing ANCHOR deleted in FILE (fails loudly when the anchor is not unique); built and
# copied to OUT/NAME. Every earlier plant is undone first.
plant() {
  local name=$1 file=$2 anchor=$3 target=$4
  if [[ -n $last_planted ]]; then cp "$work/pristine" "$src/$last_planted"; last_planted=""; fi  # undo the last plant
  if [[ -n $file ]]; then
    cp "$src/$file" "$work/pristine"
    last_planted=$file
    local n
    n=$(grep -cF -- "$anchor" "$src/$file" || true)
    [[ $n == 1 ]] || { echo "plant_race: $name: expected one line with '$anchor' in $file, found $n" >&2; exit 2; }
    awk -v a="$anchor" -v t="$target" 'index($0, a) { armed = 1 } armed && !done && index($0, t) { done = 1; next } { print }
      END { if (!done) exit 3 }' "$src/$file" > "$src/$file.planted" ||
      { echo "plant_race: $name: no '$target' after '$anchor' in $file" >&2; exit 2; }
    mv "$src/$file.planted" "$src/$file"
    echo "plant_race: $name: removed from $file the first '$target' after '$anchor'" >&2
  fi
  if ((!configured)); then
    cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPFX_WERROR=OFF -DPFX_STATIC_RUNTIME=ON \
      -DPFX_ENABLE_TESTS=OFF -DPFX_RACE_STRESS=ON ${CMAKE_CUDA_COMPILER_LAUNCHER:+-DCMAKE_CUDA_COMPILER_LAUNCHER=$CMAKE_CUDA_COMPILER_LAUNCHER} \
      ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >&2
    configured=1
  fi
  cmake --build "$work/build" -j "${JOBS:-2}" --target prefill >&2
  mkdir -p "$out/$name/engine/cli"
  cp "$work/build/engine/cli/prefill" "$work/build/engine/cli/kernel-resources.json" "$out/$name/engine/cli/"
  python3 "$src/scripts/kernel_sass.py" --binary "$out/$name/engine/cli/prefill" >&2 || true
  "$out/$name/engine/cli/prefill" --version --json > "$out/$name/version.json"
  echo "$name: $(git -C "$repo" rev-parse --short=12 "$rev")${file:+ minus the first '$target' after '$anchor' in $file}" >> "$out/PLANTED.txt"
}

: > "$out/PLANTED.txt"
plant stress "" "" ""
plant flash-nobarrier kernels/attention_flash.cu 'every warp is done with this stage before iteration j+1 refills it' '__syncthreads();'
plant gemm-nobarrier kernels/gemm_fast_kernel.cuh 'cp_async_wait<D - 1>();  // group i+1' '__syncthreads();'
cat "$out/PLANTED.txt"
du -sh "$out"
