#!/usr/bin/env bash
# One H200 session for the warp-specialized fused GEMM (kernels/gemm_ws*): correctness first,
# then kernel timings beside cuBLAS, then the 7B model end to end (every --gemm variant against
# the generic path; pp512/pp2048/tg128). Runs from the repository root over a build carried from
# a machine without a GPU (PFX_STATIC_RUNTIME=ON, Release; scripts/gpu/stage_build.sh):
#   scripts/gpu/gemm_ws_run.sh BUILD_DIR OUT [stage ...]
# Stages (default: info host gpu bench e2e): info host c2probe gpu sanitize bench e2e trace backend
# Writes OUT/summary.txt (printed last) and OUT/logs.tar.gz (every stage's log, the bench CSV and
# JSON: two files, inside the device tool's 8-file limit); every command has a timeout, so a hung
# kernel costs its stage, not the session. Stage time limits: $PFX_STAGE_LIMIT_<stage> seconds.
set -uo pipefail
build=$(cd "$1" && pwd); top=$2; shift 2
mkdir -p "$top/logs"; top=$(cd "$top" && pwd); out=$top/logs
stages=("$@"); [[ ${#stages[@]} -eq 0 ]] && stages=(info host gpu bench e2e)
source "$(dirname "$0")/stage_runner.sh"  # paths, note, run_stage

stage_info() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  "$prefill" --version --json
  # SASS check: the gemm_ws kernels must issue HGMMA (wgmma), not HMMA.
  cuobjdump -sass "$prefill" 2>/dev/null | awk '/Function : .*k_gemm_ws[^_]/{f=$3} f && /HGMMA/{n[f]++} END{for (k in n) print n[k], "HGMMA in", k}' | sort -k4 | head -20
}
stage_host() { "$tests/test_gemm_fast_host" --gtest_filter='GemmWs*'; }
# The cluster variants alone on a small case, first and with a short limit: if they fail or hang,
# the later stages leave them out (PFX_GEMM_VARIANTS=ws_n) instead of hanging in them.
stage_c2probe() { PFX_GEMM_VARIANTS=ws_c2 "$tests/test_gemm_fast" --gtest_filter='GemmWs.SmallCaseForSanitizers'; }
stage_gpu() { PFX_GEMM_VARIANTS=${ws_variants:-} "$tests/test_gemm_fast" --gtest_filter='GemmWs.*'; }
stage_sanitize() {
  local rc=0
  PFX_GEMM_VARIANTS=${ws_variants:-} compute-sanitizer --tool memcheck --error-exitcode 9 "$tests/test_gemm_fast" \
    --gtest_filter='GemmWs.SmallCaseForSanitizers' || rc=1
  # racecheck per kernel family: k_gemm_ws (every consumer thread arrives on `empty`) and
  # k_gemm_ws_c2 (one lane per warp arrives after __syncwarp): the two protocols side by side.
  local fam
  for fam in ws_n ws_c2; do
    [[ -n $ws_variants && $fam == ws_c2 ]] && continue
    echo "== racecheck PFX_GEMM_VARIANTS=$fam"
    PFX_GEMM_VARIANTS=$fam compute-sanitizer --tool racecheck --error-exitcode 9 "$tests/test_gemm_fast" \
      --gtest_filter='GemmWs.SmallCaseForSanitizers' 2>&1 | grep -v "^  "
    [[ ${PIPESTATUS[0]} -eq 0 ]] || rc=1  # the sanitizer's status, not grep's
  done
  return $rc
}
stage_bench() { PFX_GEMM_VARIANTS=${ws_variants:-ws_} "$tests/gemm_bench" --reps 20 --csv "$out/bench.csv"; }
stage_e2e() {
  [[ -f $model7b ]] || "$prefill" synth --profile profiles/models/llama-7b-q4km.yaml --out "$model7b" --force >/dev/null || return 1
  local ids rc=0
  ids=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(3, 32000)) for _ in range(128)))")
  "$prefill" logits --backend cuda --path generic --model "$model7b" --tokens "$ids" --out /tmp/7b.generic.npy --force >/dev/null || return 1
  for g in $("$prefill" --version --json | python3 -c "import json,sys; print(' '.join(json.load(sys.stdin)['capabilities']['gemm_variants']))"); do
    if [[ -n $ws_variants && $g == fused ]]; then echo "fused: skipped (cluster variants failed their probe)"; continue; fi
    "$prefill" logits --backend cuda --path fast --gemm "$g" --model "$model7b" --tokens "$ids" --out "/tmp/7b.$g.npy" --force >/dev/null || rc=1
    python3 - "$g" <<'PY' || rc=1
import numpy as np, sys
g = sys.argv[1]
f, r = np.load(f"/tmp/7b.{g}.npy"), np.load("/tmp/7b.generic.npy")
rel = np.abs(f - r).max() / np.abs(r).max()
print(f"7B parity fast/{g} vs generic (128 tokens): max|d|/max|ref| {rel:.3e}  bitwise {np.array_equal(f, r)}  top-1 {(f.argmax(1) == r.argmax(1)).mean()*100:.1f}%")
raise SystemExit(0 if rel <= 1e-3 and np.isfinite(f).all() else 1)
PY
  done
  for g in pipelined fused; do
    [[ -n $ws_variants && $g == fused ]] && continue
    "$prefill" bench --model "$model7b" -p 512,2048 -n 128 -r 5 --path fast --gemm "$g" --json >"$out/bench7b-$g.json" || rc=1
  done
  python3 - "$out" <<'PY'
import json, sys
# No llama.cpp column: a comparison with it is made only in the same run (release_check.sh).
for g in ("pipelined", "fused"):
    try: j = json.load(open(f"{sys.argv[1]}/bench7b-{g}.json"))
    except Exception as e: print(g, "no result:", e); continue
    for r in j["results"]:
        print(f"7B {g:9s} {r['test']:7s} {r['mean_tps']:10.1f} ± {r['stddev_tps']:7.1f} tok/s")
PY
  return $rc
}
# One traced pass of each variant per prompt size in $TRACE_PROMPTS (default 512), after a
# warm-up pass: per-role table and diff (kerneltrace).
stage_trace() {
  local kt=$build/gates/trace/kerneltrace g n rc=0
  [[ -x $kt ]] || { echo "no tracer in the build"; return 1; }
  for n in ${TRACE_PROMPTS:-512}; do
    for g in pipelined fused; do
      "$kt" -o "$out/trace-pp$n-$g.json" --range prefill --skip 1 -- \
        "$prefill" bench --model "$model7b" -p "$n" -r 1 --warmup 1 --path fast --gemm "$g" --json >/dev/null || rc=1
      echo "== pp$n $g"
      "$kt" summarize "$out/trace-pp$n-$g.json" --top 40 | tee "$out/trace-pp$n-$g.txt"
      [[ ${PIPESTATUS[0]} -eq 0 ]] || rc=1
    done
    [[ -f $out/trace-pp$n-pipelined.json && -f $out/trace-pp$n-fused.json ]] &&
      { echo "== pp$n diff pipelined -> fused"; "$kt" diff "$out/trace-pp$n-pipelined.json" "$out/trace-pp$n-fused.json" --top 30; }
  done
  return $rc
}
stage_backend() {
  if [[ -n $ws_variants ]]; then echo "skipped: the fused variant's cluster kernels failed their probe"; return 1; fi
  "$build/tests/engine/cuda/test_cuda_backend"
}

ws_variants=""
export build out prefill tests model7b ws_variants TRACE_PROMPTS
export -f stage_info stage_host stage_c2probe stage_gpu stage_sanitize stage_bench stage_e2e stage_trace stage_backend
declare -A limit=([info]=60 [host]=60 [c2probe]=40 [gpu]=150 [sanitize]=240 [bench]=180 [e2e]=240 [trace]=120 [backend]=300)
for s in "${stages[@]}"; do
  run_stage "$s" "$(stage_limit "$s" 300)" "stage_$s"
  rc=$?
  if [[ $s == c2probe && $rc -ne 0 ]]; then
    export ws_variants=ws_n
    note "    cluster variants failed their probe: later kernel stages run ws_n* only"
  fi
done
echo
note "== gemm_bench summary"
sed -n '/== summary/,$p' "$out/bench.log" 2>/dev/null | tee -a "$summary"
grep -h "7B " "$out/e2e.log" 2>/dev/null | tee -a "$summary"
grep -h "HGMMA in" "$out/info.log" 2>/dev/null | head -3 | tee -a "$summary"
grep -h "RACECHECK SUMMARY\|== racecheck\|ERROR SUMMARY" "$out/sanitize.log" 2>/dev/null | tee -a "$summary"
for n in ${TRACE_PROMPTS:-512}; do
  for g in pipelined fused; do
    [[ -f $out/trace-pp$n-$g.txt ]] &&
      { note "== per-role, one pp$n pass, $g"; sed -n '1,/^by NVTX range/p' "$out/trace-pp$n-$g.txt" | head -28 | tee -a "$summary"; }
  done
done
tar -C "$top" -czf "$top/logs.tar.gz" logs && rm -rf "$out"
