#!/usr/bin/env bash
# The README's main command: the whole job on the embedded default, nothing downloaded.
#  1. install what is missing, build;
#  2. write the tiny synthetic model (profiles/models/tiny.yaml) and run it: info, greedy, logits;
#  3. land the working tree against HEAD with the tiny gate profile (GPU gates SKIPPED where
#     there is no GPU, so the verdict is INCOMPLETE there, never PASS).
# Usage: scripts/main.sh [build-dir]     Exit: landing's verdict code (landing --help), except INCOMPLETE on a
# machine without a GPU, which is the expected outcome there and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
build=${1:-build}
cmake -S . -B "$build" -G Ninja >/dev/null
cmake --build "$build" -j "$(nproc)"
prefill="$build/engine/cli/prefill"

mkdir -p "$build/models"
model="$build/models/tiny.gguf"
[ -f "$model" ] || "$prefill" synth --profile profiles/models/tiny.yaml --out "$model"
echo "== prefill info"; "$prefill" info --model "$model"
echo "== prefill greedy (cpu reference)"; "$prefill" greedy --model "$model" --tokens 1,300,301,302 -n 16 --json
echo "== prefill logits (cpu reference)"
"$prefill" logits --model "$model" --tokens 1,300,301,302 --out "$build/models/tiny.logits.npy" --force

echo "== landing: the working tree against HEAD on the tiny model (profiles/gates/tiny.yaml)"
set +e
"$build/gates/landing/landing" run --baseline HEAD --candidate WORKTREE --gates profiles/gates/tiny.yaml
verdict=$?
"$prefill" bench --model "$model" -p 16 -r 1 --warmup 0 >/dev/null 2>&1
gpu=$?
set -e
# 2 = INCOMPLETE: what a machine without a GPU must say (GPU gates SKIPPED, never PASS).
if [ "$verdict" -eq 2 ] && [ "$gpu" -eq 3 ]; then
  echo "main: verdict INCOMPLETE, as expected on a machine without a GPU (see reports/index.md)"
  exit 0
fi
exit "$verdict"
