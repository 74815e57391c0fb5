#!/usr/bin/env bash
# ci/landing-step.sh — the landing gate as one step of a CI pipeline: lands the pushed commit
# against its parent with `landing run` (or publishes a report made by earlier jobs, after
# importing GPU results into it), puts the Markdown report where the CI shows step summaries,
# annotates failing and inconclusive gates, and exits with the verdict. Workflows that use it:
# ci/github/landing.yml, ci/gitlab/landing.gitlab-ci.yml (ci/README.md).
#
# usage: ci/landing-step.sh [--commit REV] [--baseline REV] [--gates PROFILE] [--out DIR]
#                           [--carry ARCHIVE] [--defer-verdict] [--require-gpu]
#                           [--summary PATH] [--landing BIN] [--build-dir DIR]
#        ci/landing-step.sh --publish DIR [--import RESULTS]... [--require-gpu] [--summary PATH]
#   --commit REV      the commit to land (default $GITHUB_SHA, $CI_COMMIT_SHA, else HEAD)
#   --baseline REV    what it is compared with (default: its first parent)
#   --gates PROFILE   gate profile (default profiles/gates/default.yaml)
#   --out DIR         reports folder (default build/reports; the committed ledger is reports/)
#   --carry ARCHIVE   also pack both builds for the GPU job (ci/gpu-gates.sh runs the GPU gates)
#   --defer-verdict   exit 0 on any verdict (a later job publishes the final one); tool errors still fail
#   --publish DIR     no landing: publish the report in DIR (a report folder, or the reports
#                     folder: its newest report), after `landing import` of every --import folder
#   --summary PATH    where the Markdown goes (default $GITHUB_STEP_SUMMARY; else stdout)
#   --landing BIN     a built `landing` that judges (default $LANDING, else build the BASELINE
#                     commit's landing into --build-dir, default build-landing: the candidate never
#                     judges itself, gates/landing/harness.h)
#   --require-gpu     INCOMPLETE (a GPU gate skipped: no GPU here) fails the step
# Writes verdict=… and report=… (relative to the repository) to $GITHUB_OUTPUT when it is set,
# and ::error / ::warning annotations for FAIL / INCONCLUSIVE gates (GitHub's workflow commands;
# GitLab shows them as log lines).
#
# exit codes (the project's one table, base/contract/exit_codes.h): 0 PASS; 1 FAIL (or INCOMPLETE
# with --require-gpu); 2 INCOMPLETE; 4 bad arguments to this step; 5 tool error (landing could not
# run: git, the build of landing itself, a bad gate profile).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

require_gpu=0
defer=0
commit="${GITHUB_SHA:-${CI_COMMIT_SHA:-HEAD}}"
baseline=""
gates="profiles/gates/default.yaml"
out="build/reports"
summary="${GITHUB_STEP_SUMMARY:-}"
landing="${LANDING:-}"
build_dir="build-landing"
carry=""
publish=""
imports=()

die() { echo "landing-step: $*" >&2; exit 5; }
usage() { echo "landing-step: $* (see --help)" >&2; exit 4; }
while (($#)); do
  case "$1" in
    --require-gpu) require_gpu=1; shift ;;
    --defer-verdict) defer=1; shift ;;
    --commit|--baseline|--gates|--out|--summary|--landing|--build-dir|--carry|--publish|--import)
      (($# >= 2)) || usage "$1 needs a value"
      case "$1" in
        --commit) commit=$2 ;; --baseline) baseline=$2 ;; --gates) gates=$2 ;; --out) out=$2 ;;
        --summary) summary=$2 ;; --landing) landing=$2 ;; --build-dir) build_dir=$2 ;;
        --carry) carry=$2 ;; --publish) publish=$2 ;; --import) imports+=("$2") ;;
      esac
      shift 2 ;;
    -h|--help) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage "unknown argument '$1'" ;;
  esac
done
((${#imports[@]} == 0)) || [[ -n "$publish" ]] || usage "--import goes with --publish"

if [[ -z "$landing" ]]; then
  # The harness is built from the baseline commit (a worktree of it) when there is one to land,
  # never from the checkout being landed.
  harness_src="."
  if [[ -z "$publish" ]]; then
    git rev-parse --verify --quiet "${commit}^{commit}" >/dev/null || die "'$commit' is not a commit"
    base_rev="${baseline:-$(git rev-parse --verify --quiet "${commit}^1")}" || die "'$commit' has no parent: pass --baseline"
    base_sha="$(git rev-parse --verify "${base_rev}^{commit}")" || die "'$base_rev' is not a commit"
    harness_src=".landing/harness-src"
    git worktree remove --force "$harness_src" >/dev/null 2>&1 || true
    git worktree add --detach --force "$harness_src" "$base_sha" >&2 || die "cannot check out the baseline for the harness"
  fi
  echo "landing-step: building landing from $harness_src in $build_dir" >&2
  if [[ -f "$harness_src/CMakePresets.json" ]]; then
    cmake -S "$harness_src" --preset release -B "$build_dir" >&2 || die "configuring landing failed (CMake preset release)"
  else  # a baseline older than the presets: the same settings spelled out
    cmake -S "$harness_src" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPFX_ENABLE_TESTS=OFF >&2 ||
      die "configuring landing failed"
  fi
  cmake --build "$build_dir" --target landing >&2 || die "building landing failed"
  landing="$build_dir/gates/landing/landing"
fi
[[ -x "$landing" ]] || die "no landing binary at $landing"

# The report folder `landing` printed ("report: DIR") in its output $1.
report_of() { printf '%s\n' "$1" | sed -n 's/^report: //p' | head -n1; }

if [[ -n "$publish" ]]; then
  [[ -d "$publish" ]] || die "--publish $publish: no such folder"
  report="$(python3 "$here/report_info.py" resolve "$publish")" || die "--publish $publish: no landing report there"
  reports_dir="$(dirname "$report")"
  for r in "${imports[@]}"; do
    [[ -d "$r" ]] || { echo "landing-step: --import $r: no such folder (did that job run?)" >&2; continue; }
    result="$("$landing" import "$r" --out "$reports_dir" --into "$(basename "$report")")"
    code=$?
    echo "$result"
    ((code <= 2)) || die "landing import $r exited $code"
  done
  code=$(python3 "$here/report_info.py" exit-code "$report") || die "$report/landing.json does not load"
else
  git rev-parse --verify --quiet "${commit}^{commit}" >/dev/null || die "'$commit' is not a commit"
  if [[ -z "$baseline" ]]; then
    baseline="$(git rev-parse --verify --quiet "${commit}^1")" || die "'$commit' has no parent: pass --baseline"
  fi
  echo "landing-step: landing $commit against $baseline (gates $gates)" >&2
  result="$("$landing" run --baseline "$baseline" --candidate "$commit" --gates "$gates" --out "$out" --harness "$landing")"
  code=$?
  echo "$result"
  report="$(report_of "$result")"
  if [[ -n "$carry" && -n "$report" ]]; then
    "$here/carry-builds.sh" "$report" "$carry"
    case $? in
      0) ;;
      3) echo "landing-step: no builds carried (a build failed; the report says FAIL)" >&2 ;;
      *) die "packing the builds for the GPU job failed" ;;
    esac
  fi
fi

if [[ -n "$report" && -f "$report/landing.md" ]]; then
  python3 "$here/report_info.py" annotate "$report" || echo "landing-step: could not annotate from $report/landing.json" >&2
  # summary.md: landing.md without the links into the ledger folder (reports before it: landing.md).
  page="$report/summary.md"
  [[ -f "$page" ]] || page="$report/landing.md"
  if [[ -n "$summary" ]]; then
    cat "$page" >> "$summary"
    echo "landing-step: report summary written to $summary" >&2
  else
    cat "$page"
  fi
fi

case "$code" in
  0|1|2) ;;
  *) echo "landing-step: landing exited $code (tool error)" >&2; exit 5 ;;
esac
if ((defer)); then
  echo "landing-step: verdict deferred to a later job (exit $code → 0)" >&2
  exit 0
fi
if ((code == 2 && require_gpu)); then echo "landing-step: INCOMPLETE fails the step (--require-gpu)" >&2; exit 1; fi
exit "$code"
