#!/usr/bin/env bash
# One GPU session for the fast GEMM: host checks, the GPU tests (mma.sync and wgmma variants in
# one process per variant family, so a crash in one cannot hide the others' results), optional
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
# One process per variant family: a crash (sticky CUDA error) in one cannot hide the others.
bench_variants=""
for fam in mma_ wgmma_ wgp_t128_n128_d2 wgp_t128_n128_d3 wgp_t256 wgp_t128_n256; do
  PFX_GEMM_VARIANTS=$fam run "gpu_tests_$fam" 40 "$bin/test_gemm_fast" --gtest_color=no
  rc=$?
  if [[ $rc -eq 0 || $rc -eq 1 ]]; then
    bench_variants="${bench_variants:+$bench_variants,}$fam"
  else
    say "    family $fam: test process died (rc=$rc), left out of the benchmark"
  fi
done

PFX_GEMM_VARIANTS=$bench_variants run bench 120 "$bin/gemm_bench" --csv "$out/bench.csv"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/gpu.txt" 2>&1 || true
say "gpu after bench: $(tail -1 "$out/gpu.txt")"
say ""
sed -n '/== summary/,$p' "$out/bench.log" | tee -a "$summary"
grep -E "gemv_fast|swiglu" "$out/bench.log" | tee -a "$summary" >/dev/null

export PATH="$PATH:/usr/local/cuda/bin"
if command -v compute-sanitizer >/dev/null 2>&1; then
  for tool in memcheck racecheck; do
    PFX_GEMM_VARIANTS=mma_t128_n128_w8,wgmma_t128_n128_s3,wgp_t128_n128_d2,wgp_t256 run "sanitizer_$tool" 30 \
      compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin/test_gemm_fast" --gtest_color=no \
      --gtest_filter=GemmFast.WeightsBitExactThroughIdentity
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid" "$out/sanitizer_$tool.log" | sort | uniq -c | head -5 | sed 's/^/    /' | tee -a "$summary"
  done
else
  say "compute-sanitizer: not found on this machine"
fi

