#!/usr/bin/env bash
# One H200 session for graph-launched decode steps (DecodeGraph, engine/cuda/step_graph.h; issue 14
# item 4): the decode-graph backend tests (graph on vs off, bitwise logits at every step across
# the decode attention's split boundaries), the existing backend, attention and RoPE kernel tests
# (the p0-from-device entry points among them), compute-sanitizer memcheck on the graph test,
# then the synthesized 7B: greedy ids with the graph on and off (must be equal), and
# `prefill bench -p 512 -n 128 -r 5 --path fast --json` with --decode-graph on and off
# interleaved (on, off, on, off); the short table (tg128 tok/s each, ratio) is printed last.
# Runs from the repository root over a build carried from a machine without a GPU
# (scripts/gpu/stage_build.sh packs test_cuda_decode_graph beside the others):
#   scripts/gpu/decode_graph_check.sh BUILD_DIR OUT [stage ...]
# Stages (default: info tests e2e bench sanitize). Writes OUT/summary.txt (printed last) and
# OUT/logs.tar.gz; every stage has a time limit ($PFX_STAGE_LIMIT_<stage> seconds); expected
# about 4 minutes in all on the H200 (the 7B synth, when /tmp/pfx-7b-q4km.gguf is absent, is most
# of the e2e stage).
set -uo pipefail
build=$(cd "$1" && pwd); top=$2; shift 2
mkdir -p "$top/logs"; top=$(cd "$top" && pwd); out=$top/logs
stages=("$@"); [[ ${#stages[@]} -eq 0 ]] && stages=(info tests e2e bench sanitize)
source "$(dirname "$0")/stage_runner.sh"  # paths, note, run_stage
export PFX_PROJECT_FIXTURES=${PFX_PROJECT_FIXTURES:-$PWD/tests/fixtures}  # llama3/qwen2 fixtures of this tree
graph_test=$build/tests/engine/cuda/test_cuda_decode_graph

stage_info() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  "$prefill" --version --json | python3 -c 'import json,sys; c=json.load(sys.stdin)["capabilities"]; print("decode_graph capability:", c.get("decode_graph"))'
}
stage_tests() {
  local rc=0
  "$graph_test" || rc=1
  "$build/tests/engine/cuda/test_cuda_backend" || rc=1
  "$build/tests/kernels/test_kernels_attention" || rc=1
  "$build/tests/kernels/test_kernels_rope" || rc=1
  return $rc
}
stage_sanitize() {
  compute-sanitizer --tool memcheck --error-exitcode 9 "$graph_test" \
    --gtest_filter='DecodeGraph.SmallCaseForSanitizers:DecodeGraph.FallsBackWithAReasonWhereAStepCannotBeOneGraph' 2>&1 |
    grep -v "^  "
  return "${PIPESTATUS[0]}"
}
# The 7B: greedy continuations with the graph on and off from the same prompt (contexts 41..160
# cross the decode attention's split boundaries at 64 and 128 keys); the ids must be equal.
stage_e2e() {
  [[ -f $model7b ]] || "$prefill" synth --profile profiles/models/llama-7b-q4km.yaml --out "$model7b" --force >/dev/null || return 1
  local ids rc=0 g
  ids=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(3, 32000)) for _ in range(40)))")
  for g in on off; do
    "$prefill" greedy --backend cuda --path fast --decode-graph "$g" --model "$model7b" --tokens "$ids" -n 120 --json \
      >"$out/greedy7b-$g.json" || rc=1
  done
  python3 - "$out/greedy7b-on.json" "$out/greedy7b-off.json" <<'PY' || rc=1
import json, sys
def load(p):  # the JSON object prefill prints (text before it is not part of it)
    s = open(p).read()
    return json.loads(s[s.index("{"):])
on, off = (load(p)["generated_ids"] for p in sys.argv[1:3])
same = on == off
print(f"7B greedy 40+120 tokens, decode graph on vs off: ids {'equal' if same else 'DIFFER'}"
      + ("" if same else f" (first difference at step {next(i for i, (a, b) in enumerate(zip(on, off)) if a != b)})"))
raise SystemExit(0 if same else 1)
PY
  return $rc
}
stage_bench() {
  [[ -f $model7b ]] || "$prefill" synth --profile profiles/models/llama-7b-q4km.yaml --out "$model7b" --force >/dev/null || return 1
  local rc=0 i=0 g
  for g in on off on off; do
    i=$((i + 1))
    "$prefill" bench --model "$model7b" -p 512 -n 128 -r 5 --path fast --decode-graph "$g" --json \
      >"$out/bench7b-$i-$g.json" || rc=1
  done
  return $rc
}

export build out prefill model7b graph_test
export -f stage_info stage_tests stage_sanitize stage_e2e stage_bench
declare -A limit=([info]=30 [tests]=180 [sanitize]=120 [e2e]=180 [bench]=150)
for s in "${stages[@]}"; do
  run_stage "$s" "$(stage_limit "$s")" "stage_$s"
  case $s in
    info) grep -h "decode_graph capability\|NVIDIA" "$out/info.log" | tee -a "$summary" ;;
    sanitize) grep -h "ERROR SUMMARY" "$out/sanitize.log" | tee -a "$summary" ;;
    e2e) grep -h "7B " "$out/e2e.log" | tee -a "$summary" ;;
  esac
done
echo
note "== 7B Q4_K_M fast path, --decode-graph on/off interleaved (tok/s: median of each run's 5 samples)"
python3 - "$out" <<'PY' | tee -a "$summary"
import glob, json, os, statistics, sys
runs = []
for p in sorted(glob.glob(os.path.join(sys.argv[1], "bench7b-*-*.json"))):
    i, g = os.path.basename(p)[:-5].split("-")[1:]
    try:
        s = open(p).read()
        j = json.loads(s[s.index("{"):])  # bench --json: one (indented) object
    except Exception as e:
        print(f"run {i} ({g}): no result ({e})"); continue
    t = {r["test"]: r["samples_tps"] for r in j["results"]}
    graph_fb = [f for f in j.get("fallbacks", []) if f.startswith("decode graph:")]
    runs.append((int(i), g, t, j.get("decode_graph_replays"), graph_fb))
print(f"{'run':>3} {'graph':>5} {'pp512':>10} {'tg128':>9} {'replays':>8}  graph fallbacks")
for i, g, t, rep, fb in runs:
    pp, tg = (statistics.median(t[k]) if k in t else float("nan") for k in ("pp512", "tg128"))
    print(f"{i:>3} {g:>5} {pp:>10.1f} {tg:>9.1f} {rep if rep is not None else '-':>8}  {'; '.join(fb) or '-'}")
pooled = {g: [s for _, gg, t, _, _ in runs if gg == g for s in t.get("tg128", [])] for g in ("on", "off")}
if pooled["on"] and pooled["off"]:
    on, off = statistics.median(pooled["on"]), statistics.median(pooled["off"])
    print(f"tg128 median of {len(pooled['on'])} / {len(pooled['off'])} samples: graph on {on:.1f} tok/s, off {off:.1f} tok/s, "
          f"on/off {on / off:.3f}")
    bad = [i for i, g, _, rep, fb in runs if g == "on" and (not rep or fb)]
    if bad: print(f"WARNING: runs {bad} asked for the graph but replayed none or fell back")
else:
    print("tg128: not enough results for the ratio")
PY
tar -C "$top" -czf "$top/logs.tar.gz" logs && rm -rf "$out"
