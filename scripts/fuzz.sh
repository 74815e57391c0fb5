#!/usr/bin/env bash
# Fuzzes the GGUF reader + llama model binding (fuzz/gguf_model_fuzz.cpp) with libFuzzer for
# N seconds: builds it with clang (-fsanitize=fuzzer,address,undefined, CPU only) in BUILD_DIR,
# writes the seed corpus (small generated models plus the first 16 KiB of each fixture model
# and vocabulary, nothing committed), runs every seed once, then fuzzes from them with the GGUF
# dictionary (fuzz/gguf.dict). New inputs accumulate in BUILD_DIR/fuzz/corpus across runs;
# crashes go to BUILD_DIR/fuzz/artifacts/ and fail the script. Prints executions, coverage
# (edges, features) and the corpus size. FUZZ_MAX_RUNS=N also stops it after N executions.
# Usage: scripts/fuzz.sh N_SECONDS [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:?usage: scripts/fuzz.sh N_SECONDS [BUILD_DIR]}
build=${2:-build-fuzz}
if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found (scripts/bootstrap.sh installs Debian's clang)" >&2
  exit 5
fi
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DPFX_ENABLE_FUZZ=ON -DPFX_ENABLE_CUDA=OFF \
  -DPFX_ENABLE_TESTS=OFF ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
cmake --build "$build" -j "$(nproc)" --target fuzz_gguf_model fuzz_make_seeds
fuzzer=$build/fuzz/fuzz_gguf_model
seeds=$build/fuzz/seeds corpus=$build/fuzz/corpus artifacts=$build/fuzz/artifacts
rm -rf "$seeds"
mkdir -p "$seeds" "$corpus" "$artifacts"
"$build/fuzz/fuzz_make_seeds" "$seeds" >/dev/null
fixtures=${PFX_FIXTURES:-../shared/fixtures}
for f in "$fixtures"/models/*.gguf "$fixtures"/vocab/*.gguf; do
  [ -f "$f" ] && head -c 16384 "$f" >"$seeds/fixture-$(basename "$f")"
done
echo "fuzz: $(ls "$seeds" | wc -l) seeds, $(ls "$corpus" | wc -l) inputs in the corpus from earlier runs" >&2

# Allocations past 1 GiB from inputs of at most 64 KiB are findings, as are runs over 10 s.
opts=(-dict=fuzz/gguf.dict -max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024
      -artifact_prefix="$artifacts/" -print_final_stats=1)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
log=$build/fuzz/last-run.log
# 1. The seeds and the accumulated corpus, each input once: the corpus itself must be clean.
"$fuzzer" "${opts[@]}" -runs=0 "$corpus" "$seeds" >"$log.corpus" 2>&1 || {
  tail -40 "$log.corpus" >&2
  echo "fuzz: FAILED on the corpus (artifacts in $artifacts)" >&2
  exit 1
}
# 2. Fuzz for N seconds from there.
status=0
"$fuzzer" "${opts[@]}" "-max_total_time=$secs" ${FUZZ_MAX_RUNS:+"-runs=$FUZZ_MAX_RUNS"} "$corpus" "$seeds" >"$log" 2>&1 || status=$?
execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
cov=$(grep -o 'cov: [0-9]*' <<<"$last" | grep -o '[0-9]*$' || echo "?")
ft=$(grep -o 'ft: [0-9]*' <<<"$last" | grep -o '[0-9]*$' || echo "?")
echo "fuzz: ${secs}s, $execs executions, coverage $cov edges ($ft features), corpus $(ls "$corpus" | wc -l) inputs" >&2
if ((status != 0)); then
  grep -E 'ERROR|SUMMARY|==[0-9]+==|Test unit written|uncaught|deadly' "$log" | head -20 >&2 || true
  echo "fuzz: FAILED (exit $status): the crashing input is in $artifacts; reproduce: $fuzzer <file>" >&2
  exit 1
fi
