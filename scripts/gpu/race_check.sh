#!/usr/bin/env bash
# The race gate's evidence on the H200, over the builds scripts/gpu/plant_race.sh made here:
#   scripts/gpu/race_check.sh PLANTED RESULTS [PROFILE]
# For each race-stress build (stress, flash-nobarrier, gemm-nobarrier): `landing gate parity`
# (the stress build's own harness is not used: PLANTED/stress's landing, or $LANDING, judges) on
# PROFILE (default profiles/gates/race.yaml: flash at T that takes many tiles, every GEMM shape),
# then compute-sanitizer racecheck, synccheck and memcheck on one prompt, limited to the kernels
# whose SASS differs from the stress build's (kernel-sass.json) — all kernels for stress itself.
# Expected: stress PASS and clean; each planted build FAIL in parity or in a sanitizer.
# Prints one line per build and tool; exit 1 when a planted build passes everything.
set -uo pipefail
planted=$(cd "${1:?PLANTED folder from plant_race.sh}" && pwd); results=${2:?RESULTS folder}; profile=${3:-profiles/gates/race.yaml}
mkdir -p "$results"; results=$(cd "$results" && pwd)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PFX_FIXTURES=${PFX_FIXTURES:-$PWD/.carry/fixtures}
landing=${LANDING:?LANDING: the landing binary that judges (the baseline build\'s gates/landing/landing)}
stress=$planted/stress
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["commit"][:12])' "$stress/version.json")
tiny=/tmp/pfx-race-tiny.gguf
[[ -f $tiny ]] || "$stress/engine/cli/prefill" synth --profile profiles/models/tiny.yaml --out "$tiny" --seed 1 >/dev/null || exit 1
# 1,536 tokens on tiny: 24 key tiles of 64 per flash block; the prompt the sanitizers run.
ids=$(python3 -c "import random; random.seed(9); print(','.join(str(random.randrange(3, 256)) for _ in range(1536)))")
planted_passed=0
changed_kernels() {  # kernels whose SASS differs from the stress build's, as a sanitizer regex
  python3 - "$stress/engine/cli/kernel-sass.json" "$1/engine/cli/kernel-sass.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
if not (a.get("available") and b.get("available")):
    print("")  # no hashes: every kernel
else:
    print("|".join(sorted(k for k, h in b["kernels"].items() if a["kernels"].get(k) != h)))
PY
}
for name in stress flash-nobarrier gemm-nobarrier; do
  b=$planted/$name
  [[ -x $b/engine/cli/prefill ]] || { echo "$name: missing" ; continue; }
  verdict=PASS
  "$landing" gate parity --baseline-build "$stress" --candidate-build "$b" --baseline-id "$id" --candidate-id "$id" \
    --gates "$profile" --out "$results/$name" --harness "$landing" --quiet > "$results/$name.parity.log" 2>&1
  parity=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["status"], "-", r["reason"][:160])' "$results/$name/gates/parity.json" 2>/dev/null || echo "ERROR (see $name.parity.log)")
  echo "$name parity: $parity"
  [[ $parity == PASS* ]] || verdict=FAIL
  regex=$([[ $name == stress ]] && echo "" || changed_kernels "$b")
  for tool in racecheck synccheck memcheck; do
    filter=()
    [[ -n $regex ]] && filter=(--kernel-regex "kns=($regex)")
    compute-sanitizer --tool $tool --error-exitcode 9 "${filter[@]}" "$b/engine/cli/prefill" logits --backend cuda --path fast \
      --model "$tiny" --tokens "$ids" --out "/tmp/race-$name.npy" --force > "$results/$name.$tool.log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard" "$results/$name.$tool.log" | tail -1)
    echo "$name $tool: rc=$rc ${summary:-}${regex:+ (kernels: $regex)}"
    [[ $rc == 0 ]] || verdict=FAIL
  done
  echo "$name: $verdict"
  [[ $name != stress && $verdict == PASS ]] && planted_passed=1
done
exit $planted_passed
