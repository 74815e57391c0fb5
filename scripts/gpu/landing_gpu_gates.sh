#!/usr/bin/env bash
# The GPU half of a landing, on the GPU host over carried build folders (no git needed there):
#   scripts/gpu/landing_gpu_gates.sh BASELINE_BUILD BASELINE_ID CANDIDATE_BUILD CANDIDATE_ID OUTDIR [PROFILE]
# Runs the GPU gates (parity, accuracy, greedy, timing, ab) and writes their results to OUTDIR; back
# on the machine with the repository: `landing import OUTDIR` joins them to the report (a suite
# result from a host that ran the GPU tests is joined with the local suite run the same way).
# The judge is the BASELINE build's landing (gates/landing/harness.h), never the candidate's.
set -uo pipefail
bb=$1 bid=$2 cb=$3 cid=$4 out=$5 profile=${6:-profiles/gates/default.yaml}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
"$bb/gates/landing/landing" gate parity accuracy greedy timing ab \
  --baseline-build "$bb" --candidate-build "$cb" --baseline-id "$bid" --candidate-id "$cid" \
  --gates "$profile" --fixtures "${PFX_FIXTURES:-$PWD/.carry/fixtures}" --out "$out" --harness "$bb/gates/landing/landing"
