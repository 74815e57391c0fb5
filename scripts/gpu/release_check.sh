#!/usr/bin/env bash
# One device call that checks a release candidate on the H200 and measures it beside llama.cpp:
#   scripts/gpu/release_check.sh ARCHIVE PEER_DIR OUTDIR
#     ARCHIVE   a staged static build (scripts/gpu/stage_build.sh, with its test binaries)
#     PEER_DIR  a copy of ../shared/peer (side_by_side.sh, llama.cpp sources); its ../fixtures/vocab
#               holds the SentencePiece vocabulary side_by_side.sh writes into the 7B file
#     OUTDIR    logs.tar.xz, summary.txt (printed last) and side_by_side's raw JSON
# Order, so that no timing shares the machine with other work: llama.cpp's build and the random
# 7B f16 -> Q4_K_M file are made in the background (side_by_side.sh with PAIRS=0) while the GPU
# tests and sanitizers run (correctness only); then, alone: side_by_side.sh for the default GEMM
# variant (PAIRS=2) and for `--gemm pipelined` (PAIRS=1), interleaved with llama-bench, and fast vs
# generic parity on that llama-quantize file at T = 512 and 2048 with every GEMM variant.
# About 9 minutes on a fresh machine. Env: KEEP (reuse llama.cpp and the model from this folder),
# STAGES (device_run.sh stages to run; default info kernels gemm backend cli sanitize).
set -uo pipefail
archive=$(realpath "$1"); peer=$(cd "$2" && pwd); out=$3
mkdir -p "$out"; out=$(cd "$out" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
export KEEP=${KEEP:-/tmp/peer-sbs} LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
logs=$out/logs; mkdir -p "$logs"
summary=$out/summary.txt; : >"$summary"
note() { echo "$(date +%T) $*" | tee -a "$summary"; }
t_start=$SECONDS

work=/tmp/release-check; mkdir -p "$work"
tar xJf "$archive" -C "$work" || { note "cannot unpack $archive"; exit 1; }
build=$(dirname "$(dirname "$(dirname "$(find "$work" -path '*/engine/cli/prefill' -type f | head -1)")")")
prefill=$build/engine/cli/prefill
[[ -x $prefill ]] || { note "no engine/cli/prefill in $archive"; exit 1; }
"$prefill" --version --json >"$logs/version.json" 2>&1
note "candidate: $(python3 -c "import json; j=json.load(open('$logs/version.json')); print(j.get('commit','?'), j.get('capabilities',{}).get('gemm_variants'))")"

PAIRS=0 "$peer/side_by_side.sh" "$peer" "$prefill" "$logs/prep" >"$logs/prep.log" 2>&1 &
prep=$!

cd "$repo"
timeout 300 scripts/gpu/device_run.sh "$build" "$logs/tests" ${STAGES:-info kernels gemm backend cli sanitize} >"$logs/tests.log" 2>&1
note "GPU tests + sanitizers: rc=$? ($(grep -c "rc=0" "$logs/tests/summary.txt" 2>/dev/null) stages rc=0)"
sed 's/^/    /' "$logs/tests/summary.txt" | tee -a "$summary"
wait $prep; note "llama.cpp + 7B Q4_K_M ready: rc=$? (after $((SECONDS - t_start)) s)"

PAIRS=2 "$peer/side_by_side.sh" "$peer" "$prefill" "$out/sbs-default" >"$logs/sbs-default.log" 2>&1
note "side by side, default GEMM variant:"; sed 's/^/    /' "$out/sbs-default/summary.txt" | tee -a "$summary"
PAIRS=1 "$peer/side_by_side.sh" "$peer" "$prefill" "$out/sbs-pipelined" --gemm pipelined >"$logs/sbs-pipelined.log" 2>&1
note "side by side, --gemm pipelined:"; sed 's/^/    /' "$out/sbs-pipelined/summary.txt" | tee -a "$summary"

model=$KEEP/q4km.gguf
if [[ -f $model ]]; then
  for T in 512 2048; do
    ids=$(python3 -c "import random; r=random.Random($T); print(','.join(str(r.randrange(3, 32000)) for _ in range($T)))")
    "$prefill" logits --backend cuda --path generic --model "$model" --tokens "$ids" --out "$work/g$T.npy" --force >"$logs/parity-generic-$T.log" 2>&1
    for v in $("$prefill" --version --json | python3 -c "import json,sys; print(' '.join(json.load(sys.stdin)['capabilities']['gemm_variants']))"); do
      "$prefill" logits --backend cuda --path fast --gemm "$v" --model "$model" --tokens "$ids" --out "$work/f$T-$v.npy" --force >"$logs/parity-$v-$T.log" 2>&1
      python3 - "$work/f$T-$v.npy" "$work/g$T.npy" "$v" "$T" <<'PY' | tee -a "$summary"
import sys, numpy as np
f, g = np.load(sys.argv[1]), np.load(sys.argv[2])
rel = np.abs(f - g).max() / np.abs(g).max()
print(f"    parity 7B llama-quantize Q4_K_M T={sys.argv[4]} --gemm {sys.argv[3]:9s}: max|d|/max|ref| {rel:.3e} "
      f"{'bitwise' if np.array_equal(f, g) else ''} top-1 {(f.argmax(1) == g.argmax(1)).mean()*100:.1f}% -> "
      f"{'PASS' if rel <= 1e-3 and np.isfinite(f).all() else 'FAIL'} (1e-3)")
PY
    done
  done
fi

note "elapsed $((SECONDS - t_start)) s"
tar cJf "$out/logs.tar.xz" -C "$out" logs sbs-default sbs-pipelined 2>/dev/null
rm -rf "$logs" "$out/sbs-default" "$out/sbs-pipelined"
cat "$summary"
