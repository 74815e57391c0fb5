#!/usr/bin/env bash
# One H200 call for a candidate build before its landing: llama.cpp and the random 7B Q4_K_M file are
# made in the background (side_by_side.sh with PAIRS=0) while the candidate's GPU tests,
# sanitizers and 7B correctness checks against the old build run (scripts/gpu/overlap_check.sh
# stages); then, alone on the machine: side_by_side.sh (llama-bench and `prefill bench`
# interleaved on llama.cpp's own file) and the old/new bench of overlap_check.sh.
#   scripts/gpu/final_check.sh BUILD OLD_BUILD PEER_DIR OUT
#     BUILD, OLD_BUILD  static builds (stage_build.sh), unpacked; PEER_DIR a copy of ../shared/peer
#                       with ../fixtures/vocab beside it (side_by_side.sh's vocabulary)
# Env: PAIRS (side by side, default 2), REPS (default 3), CHECK_STAGES (default "info tests
# sanitize e2e attn"). Writes OUT/summary.txt (printed last) and OUT/check-logs.tar.gz (every log,
# the side by side's raw JSON).
set -uo pipefail
build=$(cd "$1" && pwd); old=$(cd "$2" && pwd); peer=$(cd "$3" && pwd); out=$4
mkdir -p "$out"; out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
export KEEP=${KEEP:-/tmp/peer-sbs} LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
summary=$out/summary.txt; : >"$summary"
note() { echo "$(date +%T) $*" | tee -a "$summary"; }
t0=$SECONDS

PAIRS=0 bash "$peer/side_by_side.sh" "$peer" "$build/engine/cli/prefill" "$out/prep" >"$out/prep.log" 2>&1 &
prep=$!
bash "$here/overlap_check.sh" "$build" "$old" "$out/check" ${CHECK_STAGES:-info tests sanitize e2e attn} >"$out/check.log" 2>&1
note "checks: rc=$?"; sed 's/^/    /' "$out/check/summary.txt" | tee -a "$summary"
wait $prep; note "llama.cpp + 7B Q4_K_M ready: rc=$? (after $((SECONDS - t0)) s)"

PAIRS=${PAIRS:-2} REPS=${REPS:-3} bash "$peer/side_by_side.sh" "$peer" "$build/engine/cli/prefill" "$out/sbs" >"$out/sbs.log" 2>&1
note "side by side (rc=$?):"; sed 's/^/    /' "$out/sbs/summary.txt" | tee -a "$summary"
bash "$here/overlap_check.sh" "$build" "$old" "$out/ab" bench >"$out/ab.log" 2>&1
note "old vs new build, interleaved (rc=$?):"; sed -n '/== 7B/,$p' "$out/ab/summary.txt" | sed 's/^/    /' | tee -a "$summary"
note "elapsed $((SECONDS - t0)) s"
tar -C "$out" -czf "$out/check-logs.tar.gz" check ab sbs prep.log check.log sbs.log 2>/dev/null  # the tool returns 8 files
rm -rf "$out/check" "$out/ab" "$out/prep" "$out/sbs" "$out"/*.log
cat "$summary"
