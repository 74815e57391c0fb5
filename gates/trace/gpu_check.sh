#!/usr/bin/env bash
# The tracer's checks on a GPU machine (issue 5), from an existing build directory:
#   1. the tracer's test binaries (CPU and GPU tests; JUnit XML kept in the log)
#   2. trace_gpu_program (known kernels in known NVTX ranges) traced and summarized
#   3. foreign programs: a CUDA program without NVTX, and PyTorch (bf16 matmul + SiLU in
#      torch.cuda.nvtx ranges named like the engine's), traced and summarized
#   4. overhead: a PyTorch loop of many small kernels, timed inside the program (after warm-up),
#      untraced and traced in alternation (ABABAB), median of each
#   5. optional: EXTRA_CMD="..." (e.g. the engine's 7B prefill) traced with --range prefill
#      --skip 1 and summarized, plus wall-time overhead of that command, ABABAB
#
# usage: gates/trace/gpu_check.sh BUILD_DIR OUT_DIR
# Writes at most 7 files to OUT_DIR (the device tool returns 8): gpu_check.log (everything
# human-readable), trace_gpu_program.trace.json, plain_cuda.trace.json, torch.trace.json,
# overhead.json, and with EXTRA_CMD extra.trace.json + extra.summary.json.
# Exit status: 0 when every step passed, 1 otherwise (the log says which).
set -u

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR OUT_DIR" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd) || exit 2
OUT=$2
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 2
LOG=$OUT/gpu_check.log
KT=$BUILD/gates/trace/kerneltrace
TESTS=$BUILD/tests/gates/trace
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FAILED=()

log() { echo "$@" | tee -a "$LOG"; }
step() { log ""; log "=== $* ==="; }
# run NAME CMD...: runs CMD with its output in the log; records NAME as failed on non-zero exit.
run() {
  local name=$1
  shift
  log "\$ $*"
  "$@" >>"$LOG" 2>&1
  local rc=$?
  log "[$name: exit $rc]"
  [[ $rc -eq 0 ]] || FAILED+=("$name")
  return $rc
}

: >"$LOG"
# The CPU tests read data beside this script's repository; a carried build has other paths baked in.
export PFX_TRACE_TEST_DATA=$(cd "$(dirname "$0")/../../tests/gates/trace/data" && pwd)
# A build carried from another machine may not find libcupti.so.13 on the loader path: look in the
# usual CUDA and pip locations (the traced programs inherit LD_LIBRARY_PATH, and so does the
# driver's dlopen of the injection library).
if ldd "$BUILD/gates/trace/libkerneltrace.so" 2>/dev/null | grep -q "libcupti.*not found"; then
  for d in /usr/local/cuda/lib64 /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
           /opt/torch/.venv/lib/python3*/site-packages/nvidia/*/lib /usr/local/lib/python3*/dist-packages/nvidia/*/lib; do
    if [[ -e $d/libcupti.so.13 ]]; then
      export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      log "note: libcupti.so.13 found in $d (added to LD_LIBRARY_PATH)"
      break
    fi
  done
fi
step "environment"
{
  date -u
  uname -a
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1
  command -v nvcc && nvcc --version | tail -2
  echo "kerneltrace: $KT"
  "$KT" --version
  echo "injection library:"
  ls -la "$BUILD/gates/trace/libkerneltrace.so"
  ldd "$BUILD/gates/trace/libkerneltrace.so" | grep -i cupti
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))' 2>&1
} >>"$LOG" 2>&1

step "1. tracer test binaries"
for t in test_trace_format test_trace_attribution test_trace_reports test_trace_cli test_trace_nvtx_injection test_trace_gpu; do
  if [[ -x $TESTS/$t ]]; then
    run "$t" "$TESTS/$t" --gtest_output="xml:$WORK/$t.xml"
    if [[ $t == test_trace_gpu ]] && grep -q "<skipped" "$WORK/$t.xml" 2>/dev/null; then
      log "test_trace_gpu SKIPPED tests on a GPU machine: see the reasons above"
      FAILED+=("test_trace_gpu-skipped")
    fi
  else
    log "missing: $TESTS/$t (build it: cmake --build $BUILD --target $t)"
    FAILED+=("$t-missing")
  fi
done

step "2. trace_gpu_program"
if run trace_gpu_program "$KT" -o "$OUT/trace_gpu_program.trace.json" -- "$TESTS/trace_gpu_program"; then
  run summarize_gpu_program "$KT" summarize "$OUT/trace_gpu_program.trace.json"
fi

step "3a. a CUDA program without NVTX"
if run plain_cuda "$KT" -o "$OUT/plain_cuda.trace.json" -- "$TESTS/trace_plain_cuda_program"; then
  run summarize_plain "$KT" summarize "$OUT/plain_cuda.trace.json"
fi

step "3b. PyTorch (foreign binary; NVTX through torch.cuda.nvtx)"
cat >"$WORK/torch_prefill_like.py" <<'EOF'
# Three "prefill" passes of a bf16 matmul + SiLU, in NVTX ranges named like the engine's.
import torch
x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
w = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    torch.cuda.nvtx.range_push("prefill")
    torch.cuda.nvtx.range_push("blk.0.ffn_up")
    y = x @ w
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push("blk.0.ffn_act")
    z = torch.nn.functional.silu(y)
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print("torch_prefill_like: done", float(z.float().abs().mean()))
EOF
if run torch "$KT" -o "$OUT/torch.trace.json" --range prefill --skip 1 -- python3 "$WORK/torch_prefill_like.py"; then
  run summarize_torch "$KT" summarize "$OUT/torch.trace.json"
fi

step "4. overhead: PyTorch loop of small kernels, timed in the program, untraced vs traced (ABABAB)"
cat >"$WORK/torch_launch_loop.py" <<'EOF'
# 2,000 small elementwise kernels after warm-up; prints the loop's wall time in ms.
import time, torch
x = torch.randn(1 << 16, device="cuda")
for _ in range(200):
    x = x * 1.0001 + 0.0001
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(1000):
    x = x * 1.0001 + 0.0001
torch.cuda.synchronize()
print("loop_ms=%.3f" % ((time.perf_counter() - t0) * 1e3))
EOF
untraced=()
traced=()
for pair in 1 2 3; do
  u=$(python3 "$WORK/torch_launch_loop.py" 2>>"$LOG" | sed -n 's/^loop_ms=//p')
  t=$("$KT" --quiet -o "$WORK/loop.json" -- python3 "$WORK/torch_launch_loop.py" 2>>"$LOG" | sed -n 's/^loop_ms=//p')
  log "pair $pair: untraced ${u:-?} ms, traced ${t:-?} ms"
  untraced+=("${u:-nan}")
  traced+=("${t:-nan}")
done
python3 - "$OUT/overhead.json" "${untraced[*]}" "${traced[*]}" <<'EOF' 2>&1 | tee -a "$LOG"
import json, statistics, sys
u = [float(v) for v in sys.argv[2].split()]
t = [float(v) for v in sys.argv[3].split()]
mu, mt = statistics.median(u), statistics.median(t)
result = {"what": "torch loop of 2,000 elementwise kernels (1,000 iterations x 2 kernels), in-program timer",
          "untraced_ms": u, "traced_ms": t, "median_untraced_ms": mu, "median_traced_ms": mt,
          "overhead_percent": 100.0 * (mt - mu) / mu}
json.dump(result, open(sys.argv[1], "w"), indent=1)
print("median untraced %.3f ms, traced %.3f ms, overhead %+.2f%% (per kernel: %.2f us)"
      % (mu, mt, result["overhead_percent"], (mt - mu) * 1e3 / 2000))
EOF

if [[ -n ${EXTRA_CMD:-} ]]; then
  step "5. EXTRA_CMD: $EXTRA_CMD"
  # shellcheck disable=SC2086  # EXTRA_CMD is a command line, split on purpose
  if run extra "$KT" -o "$OUT/extra.trace.json" --range prefill --skip 1 -- $EXTRA_CMD; then
    run summarize_extra "$KT" summarize "$OUT/extra.trace.json"
    "$KT" summarize --json "$OUT/extra.trace.json" >"$OUT/extra.summary.json" 2>>"$LOG"
  fi
  now() { python3 -c 'import time; print(time.perf_counter_ns())'; }
  for pair in 1 2 3; do
    s=$(now); $EXTRA_CMD >/dev/null 2>&1; e=$(now)
    s2=$(now); "$KT" --quiet -o "$WORK/extra_ab.json" -- $EXTRA_CMD >/dev/null 2>&1; e2=$(now)
    log "pair $pair: untraced $(( (e - s) / 1000000 )) ms, traced $(( (e2 - s2) / 1000000 )) ms (whole command, wall clock)"
  done
fi

step "result"
if [[ ${#FAILED[@]} -eq 0 ]]; then
  log "gpu_check: all steps passed"
  exit 0
fi
log "gpu_check: FAILED: ${FAILED[*]}"
exit 1
