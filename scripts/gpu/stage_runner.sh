# Sourced by the one-call H200 scripts that run named stages over a carried static build
# (gemm_ws_run.sh, gemv_check.sh, decode_graph_check.sh). Expects $build (the build folder), $top (the output folder) and
# $out (where each stage's log goes); sets the CUDA paths, the fixtures default, the usual binary
# paths, OUT/summary.txt and:
#   note TEXT...                 print TEXT and append it to the summary
#   stage_limit NAME [DEFAULT]   a stage's time limit ($PFX_STAGE_LIMIT_<NAME>, limit[NAME], DEFAULT)
#   run_stage NAME SECONDS CMD   run CMD under a time limit into $out/NAME.log; its rc, time and
#                                gtest PASSED/FAILED lines go into the summary
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
export PFX_FIXTURES=${PFX_FIXTURES:-$PWD/.carry/gemm/fixtures}  # the backend test's fixtures
prefill=$build/engine/cli/prefill
tests=$build/tests/kernels/gemm
model7b=/tmp/pfx-7b-q4km.gguf
summary=$top/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

run_stage() {  # NAME SECONDS CMD...
  local name=$1 secs=$2; shift 2
  local t0=$SECONDS
  timeout "$secs" bash -c "$*" >"$out/$name.log" 2>&1
  local rc=$?
  note "stage $name: rc=$rc ($((SECONDS - t0)) s)"
  grep -E '^\[  (PASSED|FAILED)  \]' "$out/$name.log" | sed 's/^/    /' | sort -u | head -12 | tee -a "$summary" >/dev/null
  return $rc
}

# stage_limit NAME [DEFAULT]: the time limit of stage NAME in seconds: $PFX_STAGE_LIMIT_<NAME>,
# else the caller's limit[NAME] (an associative array), else DEFAULT (120).
stage_limit() {
  local v=PFX_STAGE_LIMIT_$1
  echo "${!v:-${limit[$1]:-${2:-120}}}"
}
