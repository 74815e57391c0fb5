#!/usr/bin/env bash
# The 7B-class shapes of the architectures issue 13 added, on the GPU host: Qwen2.5-7B (qwen2:
# biases, neox RoPE, GQA 7:1, 152k vocab) and Mistral-7B (llama, SentencePiece, GQA 4:1), each
# synthesized in its Q4_K_M mix, loaded, run on both CUDA paths (fast vs generic logits on 64
# random tokens: the parity bound 1e-3) and timed (pp512, tg32).
#   scripts/gpu/new_models_check.sh PREFILL OUTDIR
#   env: PFX_FIXTURES (the vocabularies; else synthetic ones of the same sizes), KEEP (model dir)
# About 2.5 minutes on the H200 host (synth ~40 s per model on 16 cores).
set -uo pipefail
prefill=$(realpath "$1"); out=$2
mkdir -p "$out"; out=$(cd "$out" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
W=${KEEP:-/tmp/pfx-new-models}; mkdir -p "$W"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
failed=0
exec > >(tee "$out/summary.txt") 2>&1
for name in qwen2.5-7b-q4km mistral-7b-q4km; do
  m=$W/$name.gguf
  if [[ ! -f $m ]]; then
    "$prefill" synth --profile "$repo/profiles/models/$name.yaml" --out "$m" >"$out/$name.synth.log" 2>&1 ||
      { echo "$name: synth failed"; failed=1; continue; }
  fi
  "$prefill" info --model "$m" >"$out/$name.info.txt" 2>&1 || { echo "$name: info failed"; failed=1; continue; }
  vocab=$(awk '/^vocab/ {print $2}' "$out/$name.info.txt")
  ids=$(python3 -c "import random; r=random.Random(9); print(','.join(str(r.randrange(3, $vocab - 1000)) for _ in range(64)))")
  for p in fast generic; do
    "$prefill" logits --backend cuda --path $p --model "$m" --tokens "$ids" --out "$W/$name.$p.npy" --force \
      >"$out/$name.logits-$p.log" 2>&1 || { echo "$name: logits --path $p failed"; failed=1; }
  done
  python3 - "$W/$name" "$name" <<'PY' || failed=1
import sys, numpy as np
base, name = sys.argv[1], sys.argv[2]
f, g = np.load(base + ".fast.npy"), np.load(base + ".generic.npy")
rel = np.abs(f - g).max() / np.abs(g).max()
ok = rel <= 1e-3 and np.isfinite(f).all() and np.isfinite(g).all()
print(f"{name}: fast vs generic, {f.shape[0]} tokens x {f.shape[1]} vocab: max|d|/max|ref| {rel:.3e} "
      f"top-1 {(f.argmax(1) == g.argmax(1)).mean() * 100:.1f}% -> {'PASS' if ok else 'FAIL'} (1e-3)")
raise SystemExit(0 if ok else 1)
PY
  "$prefill" bench --model "$m" -p 512 -n 32 -r 3 --json >"$out/$name.bench.json" 2>"$out/$name.bench.err" ||
    { echo "$name: bench failed"; failed=1; continue; }
  python3 -c "import json,sys; [print(f\"$name {r['test']}: {r['mean_tps']:.1f} tok/s\") for r in json.load(open(sys.argv[1]))['results']]" \
    "$out/$name.bench.json"
done
exit $failed
