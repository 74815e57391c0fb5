#!/usr/bin/env bash
# One H200 call for a prefill kernel change: the side by side with llama.cpp started first in the
# background (its llama.cpp build takes ~4 minutes of CPU), the candidate's correctness checks on
# the GPU meanwhile (GEMM tests, sanitizers, the 7B bitwise against the old build and the generic
# path: overlap_check.sh's e2e stage), then, once the side by side is done, the two builds' benches
# interleaved (bench_interleaved.sh) and the old build's pp512/pp2048 traces read for idle time
# between kernels (prefill_gaps.py). Builds carried from a machine without a GPU:
#   scripts/gpu/check_and_side_by_side.sh NEW_BUILD OLD_BUILD PEER_DIR OUT
# PEER_DIR "-" skips the side by side (a ~4-minute call for a change that needs the checks and the
# A/B only). Last, both builds' decode steps traced and diffed per role (`kerneltrace diff`).
# Env: PAIRS / REPS for side_by_side.sh (2 / 3), ROUNDS for bench_interleaved.sh (4).
set -uo pipefail
new=$(cd "$1" && pwd); old=$(cd "$2" && pwd); out=$4
peer=-; [[ $3 != - ]] && peer=$(cd "$3" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"; out=$(cd "$out" && pwd)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
sum=$out/summary.txt; : >"$sum"
note() { echo "$*" | tee -a "$sum"; }

sbs=
if [[ $peer != - ]]; then
  PAIRS=${PAIRS:-2} REPS=${REPS:-3} bash "$peer/side_by_side.sh" "$peer" "$new/engine/cli/prefill" "$out/sbs" \
    >"$out/sbs.log" 2>&1 &
  sbs=$!
fi

t0=$SECONDS
"$new/tests/kernels/gemm/test_gemm_fast" --gtest_filter='GemvFast.*:GemvSeq.*:GemmWs.*' >"$out/tests.log" 2>&1
note "test_gemm_fast (GemvFast, GemvSeq, GemmWs): rc=$? ($((SECONDS - t0)) s)"
grep -E '^\[  (PASSED|FAILED)  \]' "$out/tests.log" | sort -u | tee -a "$sum"
for tool in memcheck racecheck; do
  compute-sanitizer --tool "$tool" --error-exitcode 9 "$new/tests/kernels/gemm/test_gemm_fast" \
    --gtest_filter='GemmWs.SmallCaseForSanitizers:GemmWs.SplitChainsSmallCaseForSanitizers:GemmWs.HeadStoreSmallCaseForSanitizers:GemmWs.SplitChainsOnTwoStreamsAreOrderedAndNotCaptured' \
    >"$out/sanitize-$tool.log" 2>&1
  note "compute-sanitizer $tool: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize-$tool.log" | head -1)"
done
bash "$here/overlap_check.sh" "$new" "$old" "$out/e2e" e2e >/dev/null 2>&1
note "e2e (overlap_check.sh):"; grep -v '^stage' "$out/e2e/summary.txt" | tee -a "$sum"

if [[ $sbs ]]; then
  wait "$sbs"; note "side by side: rc=$?"
  cat "$out/sbs/summary.txt" >>"$sum" 2>/dev/null
fi

ROUNDS=${ROUNDS:-4} bash "$here/bench_interleaved.sh" "$out/bench" old="$old/engine/cli/prefill" new="$new/engine/cli/prefill" \
  >"$out/bench.txt" 2>&1
note "interleaved bench, old vs new:"; tee -a "$sum" <"$out/bench.txt"

kt=$new/gates/trace/kerneltrace
for n in 512 2048; do
  "$kt" -o "$out/trace-old-$n.json" --range prefill --skip 1 --quiet -- \
    "$old/engine/cli/prefill" bench --model /tmp/pfx-7b-q4km.gguf -p "$n" -r 3 --path fast --json >/dev/null
done
note "idle time between kernels, old build:"
python3 "$here/prefill_gaps.py" "$out/trace-old-512.json" "$out/trace-old-2048.json" | tee -a "$sum"
for b in old new; do
  bin=$new/engine/cli/prefill; [[ $b == old ]] && bin=$old/engine/cli/prefill
  "$kt" -o "$out/trace-decode-$b.json" --range prefill --skip 4 --quiet -- \
    "$bin" bench --model /tmp/pfx-7b-q4km.gguf -p 1 -n 64 -r 1 --path fast --decode-graph off --json >/dev/null
done
note "decode steps (graph off), old vs new, own time per role:"
"$kt" diff "$out/trace-decode-old.json" "$out/trace-decode-new.json" --top 16 | tee -a "$sum"
