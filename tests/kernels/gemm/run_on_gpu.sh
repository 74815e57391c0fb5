#!/usr/bin/env bash
# One GPU session for the fast GEMM: host checks, the GPU tests (mma.sync and wgmma variants in
# separate processes, so a crash in one flavour cannot hide the other's results), optional
# gemm_bench, then compute-sanitizer memcheck/racecheck on a small case (last: least important
# within a 300 s lease). Builds nothing: BIN_DIR
# holds test_gemm_fast, test_gemm_fast_host and gemm_bench (see stage_for_gpu.sh).
#   tests/kernels/gemm/run_on_gpu.sh BIN_DIR OUT
# Writes OUT/*.log, OUT/bench.csv, OUT/summary.txt; prints the summary last.
set -uo pipefail
bin=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
summary="$out/summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

# cuBLAS may sit outside the loader path on the GPU machine.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
         /usr/local/lib/python3*/dist-packages/nvidia/cublas/lib /opt/torch/.venv/lib/python3*/site-packages/nvidia/cublas/lib; do
  [[ -e "$d/libcublas.so.13" ]] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" && break
done
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>&1 || true; } >"$out/gpu.txt"
say "gpu: $(tail -1 "$out/gpu.txt")"

run() {  # name timeout cmd...
  local name=$1 secs=$2
  shift 2
  local start=$(date +%s)
  timeout "$secs" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local passed=$(grep -oP '^\[  PASSED  \] \K[0-9]+' "$out/$name.log" | tail -1)
  local failed=$(grep -oP '^\[  FAILED  \] \K[0-9]+(?= test)' "$out/$name.log" | tail -1)
  say "$(printf '%-22s rc=%-3s passed=%-3s failed=%-3s %4ss' "$name" "$rc" "${passed:-0}" "${failed:-0}" $(( $(date +%s) - start )))"
  grep -E '^\[  FAILED  \] [A-Za-z]' "$out/$name.log" | sort -u | sed 's/^/    /' | tee -a "$summary"
  return $rc
}

run host_checks 30 "$bin/test_gemm_fast_host" --gtest_color=no
PFX_GEMM_VARIANTS=mma_ run gpu_tests_mma 75 "$bin/test_gemm_fast" --gtest_color=no
PFX_GEMM_VARIANTS=wgmma_ run gpu_tests_wgmma 75 "$bin/test_gemm_fast" --gtest_color=no
wg_rc=$?

bench_variants=""
if [[ $wg_rc -ne 0 && $wg_rc -ne 1 ]]; then
  bench_variants="mma_"
  say "wgmma test process died (rc=$wg_rc): benchmarking the mma.sync variants only"
fi

PFX_GEMM_VARIANTS=$bench_variants run bench 100 "$bin/gemm_bench" --csv "$out/bench.csv"
say ""
sed -n '/== summary/,$p' "$out/bench.log" | tee -a "$summary"
grep -E "gemv_fast|swiglu" "$out/bench.log" | tee -a "$summary" >/dev/null

export PATH="$PATH:/usr/local/cuda/bin"
if command -v compute-sanitizer >/dev/null 2>&1; then
  for tool in memcheck racecheck; do
    PFX_GEMM_VARIANTS=mma_t128_n128_w8,wgmma_t128_n128_s3 run "sanitizer_$tool" 20 \
      compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin/test_gemm_fast" --gtest_color=no \
      --gtest_filter=GemmFast.WeightsBitExactThroughIdentity
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid" "$out/sanitizer_$tool.log" | sort | uniq -c | head -5 | sed 's/^/    /' | tee -a "$summary"
  done
else
  say "compute-sanitizer: not found on this machine"
fi

