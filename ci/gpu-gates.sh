#!/usr/bin/env bash
# ci/gpu-gates.sh ARCHIVE OUT [GATE...] — the GPU job of a landing pipeline: unpacks the builds
# ci/carry-builds.sh packed, runs the GPU gates on them (default parity accuracy greedy timing ab)
# with `landing gate … --baseline-build … --candidate-build …`, and leaves the results in OUT for
# `ci/landing-step.sh --publish … --import OUT` (which runs `landing import`). Run it in a
# checkout of the candidate (the gate profile and model profiles are read from there); fixtures
# come from $PFX_FIXTURES (default ../shared/fixtures). The judge is the baseline build's
# `landing` (or $LANDING), never the candidate's own (gates/landing/harness.h).
# Exit: landing gate's (0 PASS, 1 FAIL, 2 skipped/inconclusive, 4 usage, 5 error).
set -uo pipefail
(($# >= 2)) || { echo "usage: ci/gpu-gates.sh ARCHIVE OUT [GATE...]" >&2; exit 4; }
archive=$1 out=$2; shift 2
gates=("$@"); ((${#gates[@]})) || gates=(parity accuracy greedy timing ab)
[[ -f "$archive" ]] || { echo "gpu-gates: $archive: no such archive" >&2; exit 5; }
# Unpacked inside the checkout, so the reproduce commands in the results name relative folders.
carried=${CARRY_DIR:-.landing/carried}
rm -rf "$carried" && mkdir -p "$carried"
tar xzf "$archive" -C "$carried" || { echo "gpu-gates: $archive does not unpack" >&2; exit 5; }
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$carried/carry.json" "$1"; }
landing=${LANDING:-$carried/baseline/gates/landing/landing}
[[ -x "$landing" ]] || { echo "gpu-gates: no landing at $landing" >&2; exit 5; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
"$landing" gate "${gates[@]}" --baseline-build "$carried/baseline" --candidate-build "$carried/candidate" \
  --baseline-id "$(field baseline_id)" --candidate-id "$(field candidate_id)" --gates "$(field profile)" --out "$out" \
  --harness "$landing"
