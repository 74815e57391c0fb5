#!/usr/bin/env bash
# q5_K in the fused prefill GEMM (issue 13, item 4: kernels/gemm_ws* with the q5_K layout), checked
# in one H200 call over a static build (scripts/gpu/stage_build.sh's layout, from the repository
# root, beside new_models_check.sh):
#   tests   test_gemm_fast GemmWs.*: every gemm_ws type, q5_K included: device repack vs host
#           layout, X = identity (weights bit-exact), float64, BITWISE vs the generic GEMM at 7B
#           shapes, SwiGLU bitwise at 11008x4096; and the host layout tests where the build has them
#   bench   gemm_bench --types q4_K,q5_K,q6_K: q5_K beside cuBLAS fp16 at the 7B shapes, T=512/2048
#   model   a synthesized llama-2-7B Q5_K_M (profiles/models/llama-7b-q5km.yaml): logits on 128
#           random tokens, --path fast --gemm fused and pipelined vs --path generic (max|d|/max|ref|
#           <= 1e-3, bitwise reported), the fused run's fallback lines counted (0 expected: every
#           prefill GEMM in gemm_ws), then `prefill bench -p 512,2048 -r 5` fused vs pipelined
#   scripts/gpu/q5k_check.sh BUILD_DIR OUT [stage ...]      (default: tests bench model)
#   env: KEEP (model dir, default /tmp/pfx-q5km: a second run skips the synthesis)
# Writes OUT/summary.txt (the short table, printed last) and every stage's log in OUT. About 6
# minutes on the H200 host; each stage has a time limit, so a hung kernel costs its stage only.
set -uo pipefail
build=$(cd "$1" && pwd); out=$2; shift 2
mkdir -p "$out"; out=$(cd "$out" && pwd)
stages=("$@"); [[ ${#stages[@]} -eq 0 ]] && stages=(tests bench model)
repo=$(cd "$(dirname "$0")/../.." && pwd)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
prefill=$build/engine/cli/prefill
tests=$build/tests/kernels/gemm
W=${KEEP:-/tmp/pfx-q5km}; mkdir -p "$W"
model=$W/llama-7b-q5km.gguf
summary=$out/summary.txt
: >"$summary"
failed=0
note() { echo "$*" >>"$summary"; }

stage_tests() {
  local rc=0
  if [[ -x $tests/test_gemm_fast_host ]]; then
    timeout 120 "$tests/test_gemm_fast_host" --gtest_filter='GemmWs*' >"$out/tests-host.log" 2>&1 || rc=1
  else
    echo "test_gemm_fast_host is not in this build (stage_build.sh packs no CPU tests): host layout tests not run" \
      >"$out/tests-host.log"
  fi
  timeout 240 "$tests/test_gemm_fast" --gtest_filter='GemmWs.*' >"$out/tests-gpu.log" 2>&1 || rc=1
  local f
  for f in tests-host tests-gpu; do
    note "$f: $(grep -E '^\[  (PASSED|FAILED)  \]|not in this build' "$out/$f.log" | tr '\n' ' ')"
    grep -E '^\[  FAILED  \] GemmWs' "$out/$f.log" | sed 's/^/    /' | sort -u | head -8 >>"$summary"
  done
  # q5_K's bitwise lines (max |y - generic| per variant and shape) and the q5_K failures, if any.
  grep -E '^  q5_K .*max \|y - generic\|' "$out/tests-gpu.log" | sed 's/^  /    /' >>"$summary"
  grep -c 'q5_K' "$out/tests-gpu.log" | sed 's/^/    lines of the GPU test log naming q5_K (0: its cases did not run): /' >>"$summary"
  return $rc
}

stage_bench() {
  # gemm_ws variants only (the staged gemm_fast ones have no q5_K kernel), cuBLAS and generic beside.
  PFX_GEMM_VARIANTS=ws_ timeout 240 "$tests/gemm_bench" --reps 20 --types q4_K,q5_K,q6_K --csv "$out/bench.csv" \
    >"$out/bench.log" 2>&1 || return 1
  note "gemm_bench (TFLOP/s, median of 20; ws = best gemm_ws variant, ws/cb = its speed over cuBLAS fp16):"
  awk '/== summary/ {on = 1; next} on && /^(type|q4_K|q5_K|q6_K)/ && $2 != "" {print "    " $0} on && /^GEMM-only/ {print "    " $0}' \
    "$out/bench.log" >>"$summary"
}

stage_model() {
  local rc=0
  if [[ ! -f $model ]]; then
    timeout 300 "$prefill" synth --profile "$repo/profiles/models/llama-7b-q5km.yaml" --out "$model" >"$out/synth.log" 2>&1 ||
      { note "model: synth failed (synth.log)"; rm -f "$model"; return 1; }
  fi
  "$prefill" info --model "$model" >"$out/info.txt" 2>&1 || { note "model: info failed"; return 1; }
  note "model: $(grep -E '^ +(q5_K|q6_K|f32)' "$out/info.txt" | awk '{printf "%s %s tensors; ", $1, $2}')"
  local ids
  ids=$(python3 -c "import random; r = random.Random(7); print(','.join(str(r.randrange(3, 32000)) for _ in range(128)))")
  timeout 120 "$prefill" logits --backend cuda --path generic --model "$model" --tokens "$ids" --out "$W/generic.npy" --force \
    >"$out/logits-generic.log" 2>&1 || { note "model: generic logits failed"; return 1; }
  local g
  for g in fused pipelined; do
    timeout 120 "$prefill" logits --backend cuda --path fast --gemm "$g" --model "$model" --tokens "$ids" --out "$W/$g.npy" \
      --force >"$out/logits-$g.log" 2>&1 || { note "model: logits --gemm $g failed"; rc=1; continue; }
    python3 - "$W" "$g" "$(grep -c 'falls back to generic' "$out/logits-$g.log")" >>"$summary" <<'PY' || rc=1
import sys, numpy as np
w, g, fallbacks = sys.argv[1], sys.argv[2], int(sys.argv[3])
f, r = np.load(f"{w}/{g}.npy"), np.load(f"{w}/generic.npy")
rel = float(np.abs(f - r).max() / np.abs(r).max())
ok = rel <= 1e-3 and np.isfinite(f).all() and np.isfinite(r).all() and (g != "fused" or fallbacks == 0)
print(f"7B Q5_K_M parity fast/{g} vs generic, {f.shape[0]} tokens: max|d|/max|ref| {rel:.3e} bitwise {np.array_equal(f, r)} "
      f"top-1 {(f.argmax(1) == r.argmax(1)).mean() * 100:.1f}% fallbacks {fallbacks} -> {'PASS' if ok else 'FAIL'}")
raise SystemExit(0 if ok else 1)
PY
  done
  grep -h 'falls back to generic' "$out/logits-fused.log" 2>/dev/null | head -5 | sed 's/^/    /' >>"$summary"
  for g in pipelined fused; do
    timeout 150 "$prefill" bench --model "$model" -p 512,2048 -r 5 --path fast --gemm "$g" --json >"$out/bench7b-$g.json" \
      2>"$out/bench7b-$g.err" || { note "model: bench --gemm $g failed"; rc=1; }
  done
  python3 - "$out" >>"$summary" <<'PY'
import json, sys
res = {}
for g in ("pipelined", "fused"):
    try: res[g] = {r["test"]: r for r in json.load(open(f"{sys.argv[1]}/bench7b-{g}.json"))["results"]}
    except Exception as e: print(f"    7B Q5_K_M {g}: no result ({e})")
for t in ("pp512", "pp2048"):
    row = [f"{g} {res[g][t]['mean_tps']:8.1f} ± {res[g][t]['stddev_tps']:5.1f}" for g in ("pipelined", "fused") if t in res.get(g, {})]
    ratio = (f"  fused/pipelined {res['fused'][t]['mean_tps'] / res['pipelined'][t]['mean_tps']:.2f}x"
             if all(t in res.get(g, {}) for g in ("pipelined", "fused")) else "")
    print(f"7B Q5_K_M {t:6s} tok/s: " + "  ".join(row) + ratio)
PY
  return $rc
}

for s in "${stages[@]}"; do
  t0=$SECONDS
  "stage_$s"
  rc=$?
  [[ $rc -ne 0 ]] && failed=1
  echo "stage $s: rc=$rc ($((SECONDS - t0)) s)"
done
echo
echo "== q5k_check summary ($(date -u +%H:%M) UTC)"
cat "$summary"
exit $failed
