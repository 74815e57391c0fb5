#!/usr/bin/env bash
# Builds, here (no GPU needed), the race-gate evidence for the H200: three race-stress builds
# (-DPFX_RACE_STRESS=ON, kernels/race_stress.cuh) of the commit at REV, as build folders a GPU host
# can run (PFX_STATIC_RUNTIME=ON):
#   OUT/stress           the commit as it is: parity must PASS (the stress alone changes nothing)
#   OUT/flash-nobarrier  the flash prefill kernel the engine runs without the synchronization of
#                        its tile loop (kernels/attention_flash_variants.h's default): since
#                        2026-12-03 the wgmma kernel's wait for its tile copies
#                        (kernels/attention_flash_wg.cu: its warps line up at every wgmma, so
#                        its barrier alone is not a detectable plant), from 2026-12-02 the
#                        pipelined kernel's one barrier per tile
#                        (kernels/attention_flash_pipe.cu); at older commits, which have only
#                        kernels/attention_flash.cu, its end-of-loop barrier (docs/perf-h200.md:
#                        passed parity at 0 before the race-stress points)
#   OUT/gemm-nobarrier   the fused GEMM (the fast path's default) with consumers that no longer
#                        wait on a stage's `full` mbarrier: they read the ring before the TMA
#                        bytes land (kernels/gemm_ws_kernel.cuh, WsConsumer::tile)
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
# The flash kernel REV's engine runs: the wgmma variant 2 or the pipelined variant 1 where
# attention_flash_variants.h makes it the default, else attention_flash.cu's kernel (older commits,
# and branch attn-flash's variant 0).
if grep -qE 'kFlashDefaultVariant = 2;' "$src/kernels/attention_flash_variants.h" 2>/dev/null; then
  # Its warps line up at every wgmma anyway, so a missing barrier changes nothing measurable
  # (kernels/attention_flash_wg.cu): the planted fault is the thread's wait for its tile copies.
  plant flash-nobarrier kernels/attention_flash_wg.cu "This thread's copies of tile j+1 have landed" 'dev::cp_async_wait<'
elif grep -qE 'kFlashDefaultVariant = 1;' "$src/kernels/attention_flash_variants.h" 2>/dev/null; then
  plant flash-nobarrier kernels/attention_flash_pipe.cu 'The one barrier of the tile' '__syncthreads();'
else
  plant flash-nobarrier kernels/attention_flash.cu 'every warp is done with this stage before iteration j+1 refills it' '__syncthreads();'
fi
plant gemm-nobarrier kernels/gemm_ws_kernel.cuh 'struct WsConsumer {' 'mbar_wait(full0 + 8 * stage, phase);'
cat "$out/PLANTED.txt"
du -sh "$out"
