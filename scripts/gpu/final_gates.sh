#!/usr/bin/env bash
# The final H200 evidence of issue 9 in two device calls, over archives staged here (no git, no
# build on the device). Run from the repository root of the device's copy of the working tree.
#
#   call 1  scripts/gpu/final_gates.sh gates BASELINE.tar.xz CANDIDATE.tar.xz BASELINE_ID CANDIDATE_ID HARNESS
#       The GPU gates (default parity accuracy greedy timing ab; $GATES) of the candidate build vs
#       the baseline build, one `landing gate` per gate (each result is kept even when a later gate
#       runs out of time), judged by HARNESS: a landing binary (gates/landing/harness.h) that is
#       not the candidate's own — the baseline's, when it is new enough to pin (it must answer
#       `landing --version --json` with capabilities.judging "harness"), else one built from a
#       reviewed commit other than the candidate. Archives as scripts/gpu/stage_build.sh packs them
#       (one top folder, e.g. build-gpu/, holding engine/cli/prefill …). The profile ($PROFILE,
#       default profiles/gates/default.yaml) must be the very file the report here was made with:
#       results are bound to its sha256. Writes $OUT/results.tar.xz (for `landing import`),
#       $OUT/gates.log, $OUT/summary.txt.
#   suite   scripts/gpu/final_gates.sh suite BASELINE.tar.xz CANDIDATE_SHARE.tar.xz BASELINE_ID CANDIDATE_ID HARNESS
#       The GPU host's share of the suite gate: `landing gate suite --suite-labels gpu` over the
#       candidate build packed by scripts/gpu/stage_suite_share.sh. Its CTest files name the build
#       by its absolute path on the machine that built it (BUILD_PATH.txt): that path is linked to
#       the unpacked folder here, and the candidate's source folder beside it (its tests' fixture
#       paths) to this tree, which must be the candidate's. HARNESS must know --suite-labels.
#       Writes $OUT/results.tar.xz (import it here: joined with the local suite run), $OUT/gates.log.
#   call 2  scripts/gpu/final_gates.sh demos RACE.tar.xz CALIB.tar.xz
#       The planted-race demonstration (scripts/gpu/race_check.sh over plant_race.sh's builds: the
#       stress build must PASS, flash-nobarrier and gemm-nobarrier must FAIL) and the A/B
#       calibration (scripts/gpu/calibrate_ab.sh run: A/A false alarms, planted +2%/+5% detection,
#       seconds per run). RACE.tar.xz: plant_race.sh's OUT folder packed (`tar cJf RACE.tar.xz -C
#       OUT/.. NAME`); CALIB.tar.xz: calibrate_ab.sh build's OUT.tar.xz. Writes $OUT/race.log,
#       $OUT/calibration.log, $OUT/demos-results.tar.xz, $OUT/summary.txt.
#
# Time: each call stops starting work at CAP_S seconds (gates 540, demos: RACE_CAP_S 170 for the
# race part, CALIB_CAP_S 300 for the calibration) and always ends with its elapsed time and a short
# table. At most 4 files land in $OUT (the rest is inside the .tar.xz). Fixtures: $PFX_FIXTURES
# (default .carry/fixtures), or $FIXTURES_ARCHIVE (a .tar.xz of ../shared/fixtures' models/ and
# oracle/ under one top folder), unpacked first. Exit: 0 done (read the table), 4 usage, 5 a missing input.
set -uo pipefail
t0=$SECONDS
usage() { echo "final_gates: $*" >&2; sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 4; }
die() { echo "final_gates: $*" >&2; exit 5; }
mode=${1:-}
[[ $mode == gates || $mode == demos || $mode == suite ]] || usage "first argument: gates, suite or demos"
out=${OUT:-final-out}
mkdir -p "$out" && out=$(cd "$out" && pwd)
work=${FINAL_WORK:-/tmp/pfx-final}
export PFX_FIXTURES=${PFX_FIXTURES:-$PWD/.carry/fixtures}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
if [[ -n ${FIXTURES_ARCHIVE:-} ]]; then
  [[ -f $FIXTURES_ARCHIVE ]] || { echo "final_gates: FIXTURES_ARCHIVE=$FIXTURES_ARCHIVE: no such archive" >&2; exit 5; }
  rm -rf "$work/fixtures" && mkdir -p "$work/fixtures"
  tar xJf "$FIXTURES_ARCHIVE" -C "$work/fixtures" --strip-components=1 || { echo "final_gates: $FIXTURES_ARCHIVE does not unpack" >&2; exit 5; }
  export PFX_FIXTURES=$work/fixtures
fi
summary=$out/summary.txt
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

# unpack ARCHIVE DIR: the archive's one top folder becomes DIR.
unpack() {
  [[ -f $1 ]] || die "$1: no such archive"
  rm -rf "$2" && mkdir -p "$2"
  tar xJf "$1" -C "$2" --strip-components=1 || die "$1 does not unpack (expected a .tar.xz with one top folder)"
}

# harness_libs BINARY: the lib/ folder stage_build.sh packs beside a build (libraries the GPU host
# lacks) on LD_LIBRARY_PATH, for a landing binary at BUILD/gates/landing/landing.
harness_libs() {
  local lib
  lib=$(cd "$(dirname "$1")/../.." 2>/dev/null && pwd)/lib
  [[ -d $lib ]] && export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  return 0
}

# check_harness BINARY: a landing that can judge (pinning); prints its absolute path.
check_harness() {
  [[ -x $1 ]] || die "$1: no landing binary (the judging harness)"
  local h missing
  h=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
  harness_libs "$h"
  missing=$(ldd "$h" 2>/dev/null | awk '/not found/ {print $1}' | tr '\n' ' ')
  [[ -z $missing ]] || die "$h cannot start here: shared libraries not found: $missing(pack the build with scripts/gpu/stage_build.sh, which carries them in lib/)"
  "$h" --version --json > "$work/harness.json" 2>/dev/null && grep -q '"harness"' "$work/harness.json" ||
    die "$h predates harness pinning (no capabilities.judging \"harness\" in \`landing --version --json\`): pass a landing built from a reviewed commit that has it"
  echo "$h"
}

if [[ $mode == suite ]]; then
  (($# == 6)) || usage "suite takes BASELINE.tar.xz CANDIDATE_SHARE.tar.xz BASELINE_ID CANDIDATE_ID HARNESS"
  base_archive=$2 share_archive=$3 base_id=$4 cand_id=$5
  profile=${PROFILE:-profiles/gates/default.yaml}
  [[ -f $profile ]] || die "$profile: no gate profile (run from the repository root)"
  mkdir -p "$work"
  harness=$(check_harness "$6") || exit 5
  unpack "$base_archive" "$work/baseline"
  unpack "$share_archive" "$work/candidate"
  built_at=$(cat "$work/candidate/BUILD_PATH.txt" 2>/dev/null) || die "$share_archive: no BUILD_PATH.txt (pack it with scripts/gpu/stage_suite_share.sh)"
  [[ $built_at = /*/build/* && ! -e $built_at ]] || die "BUILD_PATH.txt says '$built_at': expected an absolute build path that does not exist here"
  mkdir -p "$(dirname "$built_at")" && ln -s "$work/candidate" "$built_at"
  # A landing build's sources sit at <cache>/src/<id> beside <cache>/build/<id>: this tree.
  src_at=$(dirname "$(dirname "$built_at")")/src/$(basename "$built_at")
  [[ -e $src_at ]] || { mkdir -p "$(dirname "$src_at")" && ln -s "$PWD" "$src_at"; }
  export PFX_PROJECT_FIXTURES=$PWD/tests/fixtures
  note "suite share: candidate $cand_id at $built_at, labels gpu, harness $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("commit", "?")[:12])' "$work/harness.json")"
  results=$work/results
  rm -rf "$results"
  timeout --signal=TERM --kill-after=10 "${CAP_S:-400}" "$harness" gate suite --suite-labels gpu --baseline-build "$work/baseline" \
    --candidate-build "$built_at" --baseline-id "$base_id" --candidate-id "$cand_id" --gates "$profile" \
    --fixtures "$PFX_FIXTURES" --out "$results" --harness "$harness" > "$out/gates.log" 2>&1
  rc=$?
  note "suite: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["status"], "-", (r.get("evidence") or r["reason"])[:200])' \
    "$results/gates/suite.json" 2>/dev/null || echo "no result (rc=$rc)")"
  [[ -d $results ]] && tar cJf "$out/results.tar.xz" -C "$work" results
  note "elapsed: $((SECONDS - t0)) s"
  exit 0
fi

if [[ $mode == gates ]]; then
  (($# == 6)) || usage "gates takes BASELINE.tar.xz CANDIDATE.tar.xz BASELINE_ID CANDIDATE_ID HARNESS"
  base_archive=$2 cand_archive=$3 base_id=$4 cand_id=$5 harness=$6
  profile=${PROFILE:-profiles/gates/default.yaml}
  cap=${CAP_S:-540}
  read -r -a gates <<< "${GATES:-parity accuracy greedy timing ab}"
  [[ -f $profile ]] || die "$profile: no gate profile (run from the repository root)"
  [[ -d $PFX_FIXTURES ]] || die "PFX_FIXTURES=$PFX_FIXTURES: no fixtures folder (carry ../shared/fixtures as .carry/fixtures)"
  unpack "$base_archive" "$work/baseline"
  unpack "$cand_archive" "$work/candidate"
  [[ -x $harness ]] || die "$harness: no landing binary (the judging harness)"
  harness=$(cd "$(dirname "$harness")" && pwd)/$(basename "$harness")
  harness_libs "$harness"
  missing=$(ldd "$harness" 2>/dev/null | awk '/not found/ {print $1}' | tr '\n' ' ')
  [[ -z $missing ]] || die "$harness cannot start here: shared libraries not found: $missing(pack the build with scripts/gpu/stage_build.sh, which carries them in lib/)"
  "$harness" --version --json > "$work/harness.json" 2>/dev/null && grep -q '"harness"' "$work/harness.json" ||
    die "$harness predates harness pinning (no capabilities.judging \"harness\" in \`landing --version --json\`): pass a landing built from a reviewed commit that has it"
  for side in baseline candidate; do
    [[ -x $work/$side/engine/cli/prefill ]] || die "$side archive holds no engine/cli/prefill"
  done
  note "final gates: baseline $base_id vs candidate $cand_id, profile $profile, harness $(python3 -c 'import json,sys; h=json.load(open(sys.argv[1])); print(h.get("commit", "?")[:12])' "$work/harness.json")"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader 2>&1 | head -1 | sed 's/^/gpu: /' | tee -a "$summary"
  results=$work/results
  rm -rf "$results"
  : > "$out/gates.log"
  for g in "${gates[@]}"; do
    left=$((cap - (SECONDS - t0)))
    if ((left < 30)); then note "$g: NOT RUN (time cap ${cap} s reached)"; continue; fi
    g0=$SECONDS
    echo "=== landing gate $g (up to $left s)" >> "$out/gates.log"
    # Killed at the cap, a gate leaves no result: the report keeps what it had (never a PASS).
    timeout --signal=TERM --kill-after=10 "$left" "$harness" gate "$g" --baseline-build "$work/baseline" \
      --candidate-build "$work/candidate" --baseline-id "$base_id" --candidate-id "$cand_id" --gates "$profile" \
      --fixtures "$PFX_FIXTURES" --out "$results" --harness "$harness" >> "$out/gates.log" 2>&1
    rc=$?
    line=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["status"], "-", (r.get("evidence") or r["reason"])[:150])' \
      "$results/gates/$g.json" 2>/dev/null || echo "no result (rc=$rc$( ((rc == 124)) && echo ', killed at the time cap'))")
    note "$g: $line ($((SECONDS - g0)) s)"
  done
  [[ -d $results ]] && tar cJf "$out/results.tar.xz" -C "$work" results
  note "import here: tar xJf results.tar.xz && landing import results --harness HARNESS (see scripts/gpu/final_gates.sh)"
else
  (($# == 3)) || usage "demos takes RACE.tar.xz CALIB.tar.xz"
  race_archive=$2 calib_archive=$3
  race_cap=${RACE_CAP_S:-170} calib_cap=${CALIB_CAP_S:-300}
  unpack "$race_archive" "$work/race"
  [[ -x $work/race/stress/engine/cli/prefill ]] || die "race archive: no stress/engine/cli/prefill (pack plant_race.sh's OUT folder)"
  rm -rf "$work/calib" && mkdir -p "$work/calib"
  [[ -f $calib_archive ]] || die "$calib_archive: no such archive"
  tar xJf "$calib_archive" -C "$work/calib" || die "$calib_archive does not unpack"
  calib=$(find "$work/calib" -mindepth 1 -maxdepth 1 -type d | head -1)
  [[ -x $calib/real/gates/landing/landing ]] || die "calibration archive: no real/gates/landing/landing (calibrate_ab.sh build makes it)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader 2>&1 | head -1 | sed 's/^/gpu: /' | tee -a "$summary"
  # The race gate's judge: the calibration tree's landing (built from the same commit as the
  # stress builds; neither planted build's own code judges itself).
  r0=$SECONDS
  LANDING=$calib/real/gates/landing/landing timeout --kill-after=10 "$race_cap" scripts/gpu/race_check.sh "$work/race" "$work/race-results" \
    > "$out/race.log" 2>&1
  rc=$?
  note "race: rc=$rc ($((SECONDS - r0)) s; 0 = every planted build FAILED, 1 = a planted build passed, 124 = time cap)"
  grep -E '^(stress|flash-nobarrier|gemm-nobarrier)[: ]' "$out/race.log" | sed 's/^/  /' | tee -a "$summary"
  c0=$SECONDS
  CAP_S=$calib_cap scripts/gpu/calibrate_ab.sh run "$calib" "$work/calib-results" > "$out/calibration.log" 2>&1
  note "calibration: rc=$? ($((SECONDS - c0)) s)"
  sed -n '/^| runs/,$p' "$out/calibration.log" | tee -a "$summary"
  tar cJf "$out/demos-results.tar.xz" -C "$work" race-results calib-results 2>/dev/null
fi
note "elapsed: $((SECONDS - t0)) s"
