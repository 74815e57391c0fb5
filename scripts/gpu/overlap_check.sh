#!/usr/bin/env bash
# One H200 call comparing a candidate build with the build before its change (written for the
# launch-overlap changes of issue 14, reused for the streaming decode GEMV): the kernel tests and
# sanitizers, the 7B fast path against the generic path and against the old build (greedy ids byte
# for byte: the arithmetic must not move), then the two builds' benches interleaved (old, new, old,
# new), a per-role trace of pp512 and of decode steps, and both builds' gemv_bench. Runs from the
# repository root over two static builds
# carried from a machine without a GPU (scripts/gpu/stage_build.sh):
#   scripts/gpu/overlap_check.sh BUILD OLD_BUILD OUT [stage ...]
# Stages (default: info tests e2e bench sanitize trace gemv; also sass trace_ab gemv_old ncu gemm): each has a time limit
# ($PFX_STAGE_LIMIT_<stage>); together at most ~560 s. Writes OUT/summary.txt (printed last, the
# bench table at its end) and OUT/logs.tar.gz. Session 9's second call also ran a "knobs" stage over
# a build with two experiment switches (docs/h200-evidence/s9/call2-experiment-knobs.patch, its
# stage in call2-summary.txt): PDL on/off and the GEMV's L2 prefetch depth; both switches are gone.
set -uo pipefail
build=$(cd "$1" && pwd); old_build=$(cd "$2" && pwd); top=$3; shift 3
mkdir -p "$top/logs"; top=$(cd "$top" && pwd); out=$top/logs
stages=("$@"); [[ ${#stages[@]} -eq 0 ]] && stages=(info tests e2e bench sanitize trace gemv attn)
source "$(dirname "$0")/stage_runner.sh"  # paths, note, run_stage
export PFX_PROJECT_FIXTURES=${PFX_PROJECT_FIXTURES:-$PWD/tests/fixtures}
old_prefill=$old_build/engine/cli/prefill

stage_info() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  "$prefill" --version | head -2
  "$old_prefill" --version | head -2
}
stage_tests() {
  local rc=0
  "$tests/test_gemm_fast" --gtest_filter='GemvFast.*:GemvSeq.*:GemmWs.*' || rc=1
  "$build/tests/engine/cuda/test_cuda_decode_graph" || rc=1
  "$build/tests/kernels/test_kernels_norm_elementwise" || rc=1
  "$build/tests/kernels/test_kernels_attention" || rc=1
  "$build/tests/kernels/test_kernels_rope" || rc=1
  return $rc
}
# Flash attention variants (ATTN_BUILD: a build with attention_bench): bitwise test, then timings.
stage_attn() {
  local b=${ATTN_BUILD:-$build}/tests/kernels rc=0
  "$b/test_kernels_attention" --gtest_filter='FlashVariants*' 2>&1 | grep -E '^\[  (FAILED|PASSED)|FAILED' | head -20
  [[ ${PIPESTATUS[0]} -eq 0 ]] || rc=1
  "$b/attention_bench" --reps 30 --csv "$out/attn_bench.csv" || rc=1
  return $rc
}
stage_sanitize() {
  local rc=0 tool
  for tool in memcheck racecheck; do
    echo "== $tool"
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$tests/test_gemm_fast" \
      --gtest_filter='GemvFast.SmallCaseForSanitizers:GemvFast.StreamEqualsDirectBitwise:GemvFast.GroupEquals*:GemvFast.Swiglu*:GemmWs.SmallCaseForSanitizers:GemmWs.SplitChainsSmallCaseForSanitizers:GemmWs.HeadStoreSmallCaseForSanitizers' 2>&1 | grep -v "^  "
    [[ ${PIPESTATUS[0]} -eq 0 ]] || rc=1  # the sanitizer's status, not grep's
  done
  echo "== memcheck decode graph"
  compute-sanitizer --tool memcheck --error-exitcode 9 "$build/tests/engine/cuda/test_cuda_decode_graph" \
    --gtest_filter='DecodeGraph.SmallCaseForSanitizers' 2>&1 | grep -v "^  "
    [[ ${PIPESTATUS[0]} -eq 0 ]] || rc=1  # the sanitizer's status, not grep's
  return $rc
}
ids_of() { python3 -c "import random; random.seed($2); print(','.join(str(random.randrange(3, 32000)) for _ in range($1)))"; }
stage_e2e() {
  [[ -f $model7b ]] || "$prefill" synth --profile profiles/models/llama-7b-q4km.yaml --out "$model7b" --force >/dev/null || return 1
  local rc=0 n ids p
  for n in ${E2E_TOKENS:-1 7 128 512 2048}; do
    ids=$(ids_of "$n" 11)
    for p in generic fast; do
      "$prefill" logits --backend cuda --path "$p" --model "$model7b" --tokens "$ids" --out "/tmp/7b.T$n.$p.npy" --force >/dev/null || rc=1
    done
    "$old_prefill" logits --backend cuda --path fast --model "$model7b" --tokens "$ids" --out "/tmp/7b.T$n.old.npy" --force >/dev/null || rc=1
    python3 - "$n" <<'PY' || rc=1
import numpy as np, sys
n = sys.argv[1]
r, f, o = (np.load(f"/tmp/7b.T{n}.{k}.npy") for k in ("generic", "fast", "old"))
rel = np.abs(f - r).max() / np.abs(r).max()
print(f"7B T={n}: fast vs generic max|d|/max|ref| {rel:.3e} bitwise {np.array_equal(f, r)}; "
      f"fast new vs old bitwise {np.array_equal(f, o)}")
raise SystemExit(0 if np.isfinite(f).all() and rel <= 1e-3 and np.array_equal(f, o) else 1)
PY
  done
  ids=$(ids_of 40 7)
  "$prefill" greedy --backend cuda --path fast --model "$model7b" --tokens "$ids" -n 120 --json >"$out/greedy-new.json" || rc=1
  "$prefill" greedy --backend cuda --path fast --decode-graph off --model "$model7b" --tokens "$ids" -n 120 --json >"$out/greedy-new-off.json" || rc=1
  "$old_prefill" greedy --backend cuda --path fast --model "$model7b" --tokens "$ids" -n 120 --json >"$out/greedy-old.json" || rc=1
  python3 - "$out/greedy-new.json" "$out/greedy-new-off.json" "$out/greedy-old.json" <<'PY' || rc=1
import json, sys
def load(p):
    s = open(p).read()
    return json.loads(s[s.index("{"):])
new, off, old = (load(p) for p in sys.argv[1:4])
same = new["generated_ids"] == old["generated_ids"] == off["generated_ids"]
print(f"7B greedy 40+120 tokens, new (graph on) / new (graph off) / old: ids {'equal' if same else 'DIFFER'}; "
      f"new: replays {new.get('decode_graph_replays')}, fallbacks {new.get('fallbacks')}")
raise SystemExit(0 if same else 1)
PY
  return $rc
}
# The SM clock and board power are sampled every 100 ms meanwhile (nvidia-smi), each run's start and
# end noted: the summary gives each run's median clock and power. A run is mostly model loading and
# decode, so these medians do not show the prefill's own clock (session 12 read them as "no cap");
# clocks_and_stalls.sh times each phase alone (session 17: pp512 1710 MHz, pp2048 1605 MHz, capped).
stage_bench() {
  [[ -f $model7b ]] || "$prefill" synth --profile profiles/models/llama-7b-q4km.yaml --out "$model7b" --force >/dev/null || return 1
  local rc=0 i=0 b bin sampler
  nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits -lms 100 |
    while read -r line; do echo "$(date +%s.%N), $line"; done >"$out/clocks.csv" &
  sampler=$!
  : >"$out/bench-times.txt"
  for b in old new old new; do
    i=$((i + 1))
    bin=$prefill; [[ $b == old ]] && bin=$old_prefill
    echo "$i $b start $(date +%s.%N)" >>"$out/bench-times.txt"
    "$bin" bench --model "$model7b" -p 512,2048 -n 128 -r 3 --path fast --json >"$out/bench7b-$i-$b.json" || rc=1
    echo "$i $b end $(date +%s.%N)" >>"$out/bench-times.txt"
  done
  kill "$sampler" 2>/dev/null; pkill -f "nvidia-smi --query-gpu=clocks.sm" 2>/dev/null
  python3 - "$out/clocks.csv" "$out/bench-times.txt" <<'PY'
import statistics, sys
samples = []
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split(",")]
    try: samples.append((float(f[0]), float(f[1]), float(f[2]), float(f[3])))
    except (ValueError, IndexError): pass
runs = {}
for line in open(sys.argv[2]):
    i, b, what, t = line.split()
    runs.setdefault((int(i), b), {})[what] = float(t)
for (i, b), t in sorted(runs.items()):
    s = [x for x in samples if t.get("start", 0) <= x[0] <= t.get("end", 0)]
    if not s: print(f"run {i} ({b}): no clock samples"); continue
    print(f"run {i} ({b}): SM clock median {statistics.median(x[1] for x in s):.0f} MHz (min {min(x[1] for x in s):.0f}), "
          f"power median {statistics.median(x[2] for x in s):.0f} W (max {max(x[2] for x in s):.0f}), "
          f"temp max {max(x[3] for x in s):.0f} C, {len(s)} samples")
PY
  return $rc
}
# The SASS of every kernel both builds hold, instruction by instruction (cuobjdump, addresses and
# encodings stripped): which kernels a change touched and which it left as they were.
stage_sass() {
  cuobjdump -sass "$old_prefill" >/tmp/sass-old.txt || return 1
  cuobjdump -sass "$prefill" >/tmp/sass-new.txt || return 1
  python3 - /tmp/sass-old.txt /tmp/sass-new.txt <<'PY' | c++filt
import re, sys
def functions(path):
    out, name = {}, None
    for line in open(path):
        m = re.match(r"\s+Function : (\S+)", line)
        if m:
            name = m.group(1); out[name] = []; continue
        m = re.match(r"\s+/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)
        if name and m: out[name].append(m.group(1))
    return out
a, b = functions(sys.argv[1]), functions(sys.argv[2])
both = [k for k in a if k in b]
changed = [k for k in both if a[k] != b[k]]
print(f"sass: {len(both) - len(changed)} kernels identical in both builds, {len(changed)} changed, "
      f"{len(set(a) - set(b))} only in the old build, {len(set(b) - set(a))} only in the new")
for k in changed: print(f"  changed: {k} ({len(a[k])} -> {len(b[k])} instructions)")
for k in sorted(set(b) - set(a)): print(f"  new: {k} ({len(b[k])} instructions)")
for k in sorted(set(a) - set(b)): print(f"  gone: {k}")
PY
}
# One traced pp512 pass per role (3 passes) and decode steps (busy per token), new build.
stage_trace() {
  local kt=$build/gates/trace/kerneltrace
  "$kt" -o "$out/trace-pp512.json" --range prefill --skip 1 -- \
    "$prefill" bench --model "$model7b" -p 512 -r 3 --path fast --json >/dev/null || return 1
  "$kt" summarize "$out/trace-pp512.json" --top 30 | tee "$out/trace-pp512.txt"
  "$kt" -o "$out/trace-decode.json" --range prefill --skip 4 -- \
    "$prefill" bench --model "$model7b" -p 1 -n 64 -r 1 --path fast --decode-graph off --json >/dev/null || return 1
  "$kt" summarize "$out/trace-decode.json" --top 25 | tee "$out/trace-decode.txt"
}
# Old and new builds traced in one call, interleaved (old, new, old, new), pp512 and pp2048 (3 passes
# after a warm-up each), then `kerneltrace diff` of the second pair: per role and kernel, old vs new.
stage_trace_ab() {
  local kt=$build/gates/trace/kerneltrace b bin i=0 n
  [[ -f $model7b ]] || "$prefill" synth --profile profiles/models/llama-7b-q4km.yaml --out "$model7b" --force >/dev/null || return 1
  for b in old new old new; do
    i=$((i + 1)); bin=$prefill; [[ $b == old ]] && bin=$old_prefill
    for n in 512 2048; do
      "$kt" -o "$out/trace-ab-$n-$i-$b.json" --range prefill --skip 1 --quiet -- \
        "$bin" bench --model "$model7b" -p "$n" -r 3 --path fast --json >/dev/null || return 1
    done
  done
  for n in 512 2048; do
    echo "== pp$n: old (run 3) vs new (run 4), own time per role"
    "$kt" diff "$out/trace-ab-$n-3-old.json" "$out/trace-ab-$n-4-new.json" --top 24
    echo "== pp$n: old (run 1) vs new (run 2)"
    "$kt" diff "$out/trace-ab-$n-1-old.json" "$out/trace-ab-$n-2-new.json" --top 12
  done
}
stage_gemv() { "$tests/gemv_bench" --reps 25 --T 1 --types q4_K,q6_K --csv "$out/gemv_bench.csv"; }
# The old build's gemv_bench in the same call: its kernels' code beside the new build's.
stage_gemv_old() { "$old_build/tests/kernels/gemm/gemv_bench" --reps 25 --T 1 --types q4_K,q6_K --csv "$out/gemv_bench_old.csv"; }
# Nsight Compute on a few decode-step GEMVs of the 7B (decode graph off so that each is its own
# launch): throughput, occupancy, warp states (what the warps wait on).
stage_ncu() {
  [[ -f $model7b ]] || "$prefill" synth --profile profiles/models/llama-7b-q4km.yaml --out "$model7b" --force >/dev/null || return 1
  ncu --kernel-name "regex:${NCU_KERNEL:-k_gemv_direct}" --launch-skip 40 --launch-count ${NCU_COUNT:-4} \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SchedulerStats --section MemoryWorkloadAnalysis \
    "$prefill" bench --model "$model7b" -p 1 -n 4 -r 1 --path fast --decode-graph off --json
}
stage_gemm() { PFX_GEMM_VARIANTS=${GEMM_VARIANTS:-ws_n128,ws_n256,ws_sk_n128,ws_sk_n256} "$tests/gemm_bench" --reps 20 ${GEMM_QUICK---quick} --types ${GEMM_TYPES:-q4_K,q6_K} --csv "$out/gemm_bench.csv"; }

export build old_build out prefill old_prefill tests model7b
export -f stage_sass stage_trace_ab stage_info stage_tests stage_sanitize stage_e2e stage_bench stage_trace stage_gemv stage_gemv_old stage_attn stage_gemm stage_ncu ids_of
declare -A limit=([sass]=60 [trace_ab]=200 [info]=20 [tests]=150 [sanitize]=120 [e2e]=240 [bench]=120 [trace]=60 [gemv]=60 [gemv_old]=60 [ncu]=120 [attn]=90 [gemm]=150)
for s in "${stages[@]}"; do
  run_stage "$s" "$(stage_limit "$s")" "stage_$s"
  case $s in
    sanitize) grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|== " "$out/sanitize.log" | tee -a "$summary" ;;
    e2e) grep -h "7B " "$out/e2e.log" | tee -a "$summary" ;;
    trace) grep -h "busy in\|ffn_\|attn\|rope\|norm" "$out/trace-pp512.txt" 2>/dev/null | head -16 | tee -a "$summary" ;;
    trace_ab) grep -v "^  *blk\." "$out/trace_ab.log" | head -90 | tee -a "$summary" ;;
    gemv | gemv_old) sed -n '/== gemv summary/,$p' "$out/$s.log" | tee -a "$summary" ;;
    gemm) sed -n '/summary/,$p' "$out/gemm.log" | head -40 | tee -a "$summary" ;;
    bench) grep -h "^run .*SM clock" "$out/bench.log" | tee -a "$summary" ;;
    sass) grep -h "sass:\|changed:\|new:\|gone:" "$out/sass.log" | head -40 | tee -a "$summary" ;;
    attn) grep -E "MISMATCH|FAILED|PASSED" "$out/attn.log" | head -5 | tee -a "$summary"; tail -30 "$out/attn.log" | tee -a "$summary" ;;
  esac
done
echo
note "== 7B Q4_K_M fast path, old and new builds interleaved (tok/s: median of each run's samples)"
python3 - "$out" <<'PY' | tee -a "$summary"
import glob, json, os, statistics, sys
runs = []
for p in sorted(glob.glob(os.path.join(sys.argv[1], "bench7b-*-*.json"))):
    i, b = os.path.basename(p)[:-5].split("-")[1:]
    try:
        s = open(p).read()
        j = json.loads(s[s.index("{"):])
    except Exception as e:
        print(f"run {i} ({b}): no result ({e})"); continue
    runs.append((int(i), b, {r["test"]: r["samples_tps"] for r in j["results"]}))
tests = ("pp512", "pp2048", "tg128")
print(f"{'run':>3} {'build':>5} " + " ".join(f"{t:>9}" for t in tests))
for i, b, t in sorted(runs):
    print(f"{i:>3} {b:>5} " + " ".join(f"{statistics.median(t[k]) if k in t else float('nan'):>9.1f}" for k in tests))
for k in tests:
    pooled = {b: [s for _, bb, t in runs if bb == b for s in t.get(k, [])] for b in ("old", "new")}
    if pooled["old"] and pooled["new"]:
        o, n = statistics.median(pooled["old"]), statistics.median(pooled["new"])
        print(f"{k}: old {o:.1f}, new {n:.1f} tok/s (medians of {len(pooled['old'])}/{len(pooled['new'])} samples): new/old {n / o:.3f}")
PY
tar -C "$top" -czf "$top/logs.tar.gz" logs && rm -rf "$out"
