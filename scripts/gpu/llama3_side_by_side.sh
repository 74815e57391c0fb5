#!/usr/bin/env bash
# Llama-3.1-8B beside llama.cpp on the SAME file: `prefill synth` writes the 8B shape (GQA 4:1,
# rope_freqs, the 128,256-token vocabulary) in f16 with random weights, llama.cpp's own
# llama-quantize makes it Q4_K_M, then llama-bench and our `prefill bench` run interleaved
# (llama, ours, llama, ours) in one window, so the ratios are measured, never taken across windows.
#
#   scripts/gpu/llama3_side_by_side.sh PEER_DIR PREFILL OUTDIR [extra prefill bench args...]
#     PEER_DIR  a copy of ../shared/peer (llama.cpp-src.tar.xz): it does not travel with a device
#               call; carry a copy in an ignored folder of the checkout (e.g. .carry/peer)
#     PREFILL   our prefill binary (a static build: scripts/gpu/stage_build.sh)
#     OUTDIR    where llama-*.json, ours-*.json, parity.txt and summary.txt go (e.g. $OUT)
#   env: PAIRS (2), REPS (5), TESTS ("512,2048"), GEN (128), N_LAYER (32; 2 for a quick check),
#        PFX_FIXTURES (the vocab: $PFX_FIXTURES/vocab/ggml-vocab-llama-bpe.gguf, else a synthetic
#        vocab of the same size), LLAMA_CUDA (ON; OFF builds llama.cpp CPU-only, for a dry run on a
#        machine without a GPU), JOBS (nproc), KEEP (reuse llama.cpp and the models from this dir).
# Also checks the 8B file on our side before timing it: fast vs generic logits on 64 tokens
# (parity.txt; the 128k-column head included), and the tensor-type histogram llama-quantize chose.
# Takes about 7 minutes on the H200 host (llama.cpp build ~4 min on 16 cores, in parallel with
# writing the 16 GB f16 file; quantize ~1 min; parity + benches ~1.5 min).
set -uo pipefail
peer=$(cd "$1" && pwd); prefill=$(realpath "$2"); out=$3; shift 3
mkdir -p "$out"; out=$(cd "$out" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
W=${KEEP:-/tmp/pfx-l3-sbs}; mkdir -p "$W"
PAIRS=${PAIRS:-2}; REPS=${REPS:-5}; TESTS=${TESTS:-512,2048}; GEN=${GEN:-128}; N_LAYER=${N_LAYER:-32}
LLAMA_CUDA=${LLAMA_CUDA:-ON}; JOBS=${JOBS:-$(nproc)}
log() { echo "$(date +%T) $*" | tee -a "$out/progress.txt"; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
f16=$W/l3-8b-L$N_LAYER.f16.gguf q4km=$W/l3-8b-L$N_LAYER.q4km.gguf

if [[ ! -x $W/llama/build/bin/llama-bench ]]; then
  log "building llama.cpp (CUDA $LLAMA_CUDA)"
  rm -rf "$W/llama"; mkdir -p "$W/llama"
  tar xJf "$peer/llama.cpp-src.tar.xz" -C "$W/llama"
  cuda_args=(-DGGML_CUDA=OFF)
  [[ $LLAMA_CUDA == ON ]] && cuda_args=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a)
  ( cd "$W/llama" && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF "${cuda_args[@]}" \
      -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
      -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF >"$out/llama-build.log" 2>&1 &&
    cmake --build build -j "$JOBS" --target llama-bench llama-quantize >>"$out/llama-build.log" 2>&1 ) &
  build_pid=$!
else
  build_pid=""
fi
if [[ ! -f $q4km ]]; then
  log "writing the f16 Llama-3.1-8B-shaped model ($N_LAYER layers) with prefill synth"
  "$prefill" synth --profile "$repo/profiles/models/llama-3-8b-q4km.yaml" --out "$f16" --force \
    --set types.default=f16 --set 'types.rules=[]' --set types.file_type=1 --set "shape.n_layer=$N_LAYER" \
    >"$out/synth.log" 2>&1 || { log "synth failed (synth.log)"; exit 1; }
fi
if [[ -n $build_pid ]]; then wait $build_pid || { log "llama.cpp build failed (llama-build.log)"; exit 1; }; fi
LB=$W/llama/build/bin/llama-bench
if [[ ! -f $q4km ]]; then
  log "llama-quantize f16 -> Q4_K_M"
  "$W/llama/build/bin/llama-quantize" "$f16" "$q4km" Q4_K_M "$JOBS" >"$out/quantize.log" 2>&1 ||
    { log "quantize failed (quantize.log)"; exit 1; }
  rm -f "$f16"
fi
# The mix llama-quantize chose, from the quantized file itself (quantize.log's "type" lines describe
# its f16 input, and are gone when KEEP reuses the file).
"$prefill" info --model "$q4km" >"$out/info.txt" 2>&1 || { log "prefill info refused the file (info.txt)"; exit 1; }
sed -n '/^tensor types:/,$p' "$out/info.txt" | tee "$out/types.txt"

log "fast vs generic logits, 64 tokens"
ids=$(python3 -c "import random; r=random.Random(8); print(','.join(str(r.randrange(128000)) for _ in range(64)))")
for p in fast generic; do
  "$prefill" logits --backend cuda --path $p --model "$q4km" --tokens "128000,$ids" --out "$W/l3.$p.npy" --force \
    >"$out/logits-$p.log" 2>&1 || log "prefill logits --path $p failed (logits-$p.log)"
done
python3 - "$W" <<'PY' | tee "$out/parity.txt"
import sys, numpy as np
w = sys.argv[1]
try:
    f, g = np.load(f"{w}/l3.fast.npy"), np.load(f"{w}/l3.generic.npy")
except OSError as e:
    print("parity: missing logits:", e); raise SystemExit(0)
rel = np.abs(f - g).max() / np.abs(g).max()
print(f"Llama-3-8B shape, fast vs generic, {f.shape[0]} tokens x {f.shape[1]} vocab: max|d|/max|ref| {rel:.3e} "
      f"NMSE {((f - g) ** 2).sum() / (g ** 2).sum():.3e} top-1 {(f.argmax(1) == g.argmax(1)).mean() * 100:.1f}% "
      f"finite {bool(np.isfinite(f).all() and np.isfinite(g).all())} -> {'PASS' if rel <= 1e-3 else 'FAIL'} (1e-3)")
PY

[[ $LLAMA_CUDA == ON ]] && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit \
  --format=csv,noheader >"$out/gpu.txt"
ngl=99; [[ $LLAMA_CUDA == ON ]] || ngl=0
for i in $(seq 1 "$PAIRS"); do
  log "pair $i/$PAIRS: llama-bench"
  "$LB" -m "$q4km" -p "$TESTS" -n "$GEN" -r "$REPS" -fa 1 -ngl $ngl -o json >"$out/llama-$i.json" 2>"$out/llama-$i.err" ||
    log "llama-bench failed"
  log "pair $i/$PAIRS: prefill bench"
  "$prefill" bench --model "$q4km" -p "$TESTS" -n "$GEN" -r "$REPS" --json "$@" >"$out/ours-$i.json" \
    2>"$out/ours-$i.err" || log "prefill bench failed"
done
python3 - "$out" "$PAIRS" <<'PY' | tee "$out/summary.txt"
import json, sys
out, pairs = sys.argv[1], int(sys.argv[2])
def ours(f):
    return {r["test"]: r["mean_tps"] for r in json.load(open(f))["results"]}
def llama(f):
    return {(f"pp{r['n_prompt']}" if r["n_prompt"] else f"tg{r['n_gen']}"): r["avg_ts"] for r in json.load(open(f))}
print(f"{'pair':>4} {'test':>7} {'llama.cpp tok/s':>16} {'ours tok/s':>11} {'ratio':>6}")
for i in range(1, pairs + 1):
    try:
        o, l = ours(f"{out}/ours-{i}.json"), llama(f"{out}/llama-{i}.json")
    except Exception as e:
        print(f"{i:>4} missing results: {e}")
        continue
    for t in sorted(set(o) & set(l), key=lambda t: (t[:2], int(t[2:]))):
        print(f"{i:>4} {t:>7} {l[t]:16.1f} {o[t]:11.1f} {o[t] / l[t]:5.2f}x")
PY
# The device tool brings back at most 8 files: everything but the summary goes into one archive.
( cd "$out" && tar czf logs.tar.gz --exclude=logs.tar.gz --exclude=summary.txt --exclude=parity.txt -- * &&
  find . -maxdepth 1 -type f ! -name logs.tar.gz ! -name summary.txt ! -name parity.txt -delete )
