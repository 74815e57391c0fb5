#!/usr/bin/env bash
# ci/landing-step.sh — the landing gate as one step of a CI pipeline: lands the pushed commit
# against its parent with `landing run`, puts the Markdown report where the CI shows step
# summaries, and exits with the verdict.
#
# usage: ci/landing-step.sh [--require-gpu] [--commit REV] [--baseline REV] [--gates PROFILE]
#                           [--out DIR] [--summary PATH] [--landing BIN] [--build-dir DIR]
#   --commit REV     the commit to land (default $GITHUB_SHA, else HEAD)
#   --baseline REV   what it is compared with (default: its first parent)
#   --gates PROFILE  gate profile (default profiles/gates/default.yaml)
#   --out DIR        reports folder (default reports)
#   --summary PATH   where the Markdown goes (default $GITHUB_STEP_SUMMARY; else stdout)
#   --landing BIN    a built `landing` (default: build it into --build-dir, default build-landing)
#   --require-gpu    INCOMPLETE (a GPU gate skipped: no GPU here) fails the step
#
# exit codes (the project's one table, base/contract/exit_codes.h): 0 PASS; 1 FAIL (or INCOMPLETE
# with --require-gpu); 2 INCOMPLETE; 4 bad arguments to this step; 5 tool error (landing could not
# run: git, the build of landing itself, a bad gate profile).
set -uo pipefail

require_gpu=0
commit="${GITHUB_SHA:-HEAD}"
baseline=""
gates="profiles/gates/default.yaml"
out="reports"
summary="${GITHUB_STEP_SUMMARY:-}"
landing="${LANDING:-}"
build_dir="build-landing"

die() { echo "landing-step: $*" >&2; exit 5; }
usage() { echo "landing-step: $* (see --help)" >&2; exit 4; }
while (($#)); do
  case "$1" in
    --require-gpu) require_gpu=1; shift ;;
    --commit|--baseline|--gates|--out|--summary|--landing|--build-dir)
      (($# >= 2)) || usage "$1 needs a value"
      case "$1" in
        --commit) commit=$2 ;; --baseline) baseline=$2 ;; --gates) gates=$2 ;; --out) out=$2 ;;
        --summary) summary=$2 ;; --landing) landing=$2 ;; --build-dir) build_dir=$2 ;;
      esac
      shift 2 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage "unknown argument '$1'" ;;
  esac
done

git rev-parse --verify --quiet "${commit}^{commit}" >/dev/null || die "'$commit' is not a commit"
if [[ -z "$baseline" ]]; then
  baseline="$(git rev-parse --verify --quiet "${commit}^1")" || die "'$commit' has no parent: pass --baseline"
fi

if [[ -z "$landing" ]]; then
  echo "landing-step: building landing in $build_dir" >&2
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPFX_ENABLE_TESTS=OFF >&2 || die "configuring landing failed"
  cmake --build "$build_dir" --target landing >&2 || die "building landing failed"
  landing="$build_dir/gates/landing/landing"
fi
[[ -x "$landing" ]] || die "no landing binary at $landing"

echo "landing-step: landing $commit against $baseline (gates $gates)" >&2
result="$("$landing" run --baseline "$baseline" --candidate "$commit" --gates "$gates" --out "$out")"
code=$?
echo "$result"
report="$(printf '%s\n' "$result" | sed -n 's/^report: //p' | head -n1)"

if [[ -n "$report" && -f "$report/landing.md" ]]; then
  if [[ -n "$summary" ]]; then
    cat "$report/landing.md" >> "$summary"
    echo "landing-step: report summary written to $summary" >&2
  else
    cat "$report/landing.md"
  fi
fi

case "$code" in
  0) exit 0 ;;
  1) exit 1 ;;
  2) if ((require_gpu)); then echo "landing-step: INCOMPLETE fails the step (--require-gpu)" >&2; exit 1; fi; exit 2 ;;
  *) echo "landing-step: landing exited $code (tool error)" >&2; exit 5 ;;
esac
