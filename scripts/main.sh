#!/usr/bin/env bash
# The README's main command: the whole job on the embedded default, nothing downloaded.
#  1. install what is missing, build (CMake preset "default");
#  2. write the tiny synthetic model (profiles/models/tiny.yaml) and run it: info, greedy, logits;
#  3. land the working tree against HEAD with the tiny gate profile (GPU gates SKIPPED where
#     there is no GPU, so the verdict is INCOMPLETE there, never PASS). The report goes to
#     build/reports/ (not the committed ledger reports/) unless --out says otherwise.
# Usage: scripts/main.sh [--out DIR] [build-dir]
# Exit: landing's verdict code (the exit-code table in README.md), except INCOMPLETE on a machine
# without a GPU, which is the expected outcome there and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
out=""
while (($#)); do
  case "$1" in
    --out) (($# >= 2)) || { echo "main: --out needs a folder" >&2; exit 4; }; out=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "main: unknown option '$1' (see --help)" >&2; exit 4 ;;
    *) break ;;
  esac
done
build=${1:-build}
out=${out:-$build/reports}
scripts/bootstrap.sh
cmake --preset default -B "$build" >/dev/null
cmake --build "$build" -j "$(nproc)"
prefill="$build/engine/cli/prefill"

mkdir -p "$build/models"
model="$build/models/tiny.gguf"
[ -f "$model" ] || "$prefill" synth --profile profiles/models/tiny.yaml --out "$model"
echo "== prefill info"; "$prefill" info --model "$model"
echo "== prefill greedy (cpu reference)"; "$prefill" greedy --model "$model" --tokens 1,300,301,302 -n 16 --json
echo "== prefill logits (cpu reference)"
"$prefill" logits --model "$model" --tokens 1,300,301,302 --out "$build/models/tiny.logits.npy" --force
echo "== prefill bench (cpu reference)"; "$prefill" bench --model "$model" --backend cpu -p 16 -r 2

echo "== landing: the working tree against HEAD on the tiny model (profiles/gates/tiny.yaml), report in $out"
# What landing counts as the change: tracked edits and untracked files, not the (ignored) build
# folder and not the reports folder it writes itself.
exclude=(); case "$out" in /*) ;; *) exclude=(":(exclude)$out") ;; esac
if [ -z "$(git status --porcelain --untracked-files=normal -- . "${exclude[@]}")" ]; then
  echo "main: the working tree has no uncommitted change: this lands HEAD against itself (an A/A run: it" \
       "checks the gates work and measures noise; leave a change uncommitted to land it)"
fi
set +e
"$build/gates/landing/landing" run --baseline HEAD --candidate WORKTREE --gates profiles/gates/tiny.yaml --out "$out"
verdict=$?
"$prefill" bench --model "$model" -p 16 -r 1 --warmup 0 >/dev/null 2>&1
gpu=$?
set -e
# 2 = INCOMPLETE: what a machine without a GPU must say (GPU gates SKIPPED, never PASS).
if [ "$verdict" -eq 2 ] && [ "$gpu" -eq 3 ]; then
  echo "main: verdict INCOMPLETE, as expected on a machine without a GPU (see $out/index.md)"
  exit 0
fi
exit "$verdict"
