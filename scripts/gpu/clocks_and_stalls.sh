#!/usr/bin/env bash
# Two questions the traces cannot answer, in one H200 call over a carried build:
#  1. clocks: the SM clock and board power while the 7B prefill and decode run (nvidia-smi sampled
#     every 20 ms beside `prefill bench` phases long enough to cover several samples). Whether the
#     GEMMs run under the 700 W cap at a lower clock decides whether fewer instructions per FLOP or
#     shorter latency chains are the lever (docs/gemm-fast.md, session 11: "the clock under the cap",
#     never measured).
#  2. stalls: Nsight Compute's per-SASS-instruction warp-stall samples of decode-step GEMVs
#     (k_gemv_direct, decode graph off), with the SASS text: where the instructions per weight go.
# Usage: scripts/gpu/clocks_and_stalls.sh BUILD_DIR OUT [stage ...]  (stages: clocks ncu trace;
# default all). Writes OUT/summary.txt (printed last) and raw files beside it.
set -uo pipefail
build=$(cd "$1" && pwd); out=$2; shift 2
mkdir -p "$out"; out=$(cd "$out" && pwd)
stages=("$@"); [[ ${#stages[@]} -eq 0 ]] && stages=(clocks ncu trace)
prefill=$build/engine/cli/prefill
model=${MODEL:-/tmp/pfx-7b-q4km.gguf}
sum=$out/summary.txt
note() { echo "$*" | tee -a "$sum"; }
[[ -f $model ]] || "$prefill" synth --profile profiles/models/llama-7b-q4km.yaml --out "$model" --force >/dev/null ||
  { note "synth failed"; exit 1; }

stamp() { date '+%Y/%m/%d %H:%M:%S.%3N'; }
stage_clocks() {
  nvidia-smi -q -d CLOCK,POWER,PERFORMANCE >"$out/smi-q.txt" 2>&1
  local reasons=clocks_event_reasons.active  # the older drivers' name: clocks_throttle_reasons.active
  nvidia-smi --query-gpu=$reasons --format=csv,noheader >/dev/null 2>&1 || reasons=clocks_throttle_reasons.active
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,$reasons \
    --format=csv,noheader,nounits -lms 20 >"$out/smi.csv" 2>"$out/smi.err" &
  local smi=$! phase
  sleep 1
  for phase in "pp512:-p 512 -r 200" "pp2048:-p 2048 -r 50" "tg:-p 1 -n 128 -r 4" "idle:"; do
    echo "${phase%%:*} $(stamp)" >>"$out/phases.txt"
    if [[ ${phase#*:} ]]; then
      # shellcheck disable=SC2086
      "$prefill" bench --model "$model" ${phase#*:} --path fast --json >"$out/bench-${phase%%:*}.json" 2>>"$out/bench.err"
    else
      sleep 1
    fi
  done
  echo "end $(stamp)" >>"$out/phases.txt"
  kill "$smi"; wait "$smi" 2>/dev/null
  python3 - "$out/phases.txt" "$out/smi.csv" <<'PY' | tee -a "$sum"
import sys, statistics as st
from datetime import datetime
fmt = "%Y/%m/%d %H:%M:%S.%f"
ph = [l.split(" ", 1) for l in open(sys.argv[1]).read().split("\n") if l.strip()]
ph = [(n, datetime.strptime(t.strip(), fmt)) for n, t in ph]
rows = []
for l in open(sys.argv[2]):
    f = [x.strip() for x in l.split(",")]
    try: rows.append((datetime.strptime(f[0], fmt), float(f[1]), float(f[3]), f[5]))
    except Exception: pass
print("phase    samples  SM MHz median [min..max]   power W median [max]   event reasons (most common)")
for (n, t0), (_, t1) in zip(ph, ph[1:]):
    r = [x for x in rows if t0 <= x[0] < t1]
    if not r: print(f"{n:8} 0"); continue
    c = [x[1] for x in r]; p = [x[2] for x in r]
    reasons = {}
    for x in r: reasons[x[3]] = reasons.get(x[3], 0) + 1
    top = ", ".join(f"{k}:{v}" for k, v in sorted(reasons.items(), key=lambda kv: -kv[1])[:3])
    print(f"{n:8} {len(r):7}  {st.median(c):6.0f} [{min(c):.0f}..{max(c):.0f}]      {st.median(p):6.0f} [{max(p):.0f}]        {top}")
PY
}

# Six consecutive decode-step GEMV launches (a layer's Q/K/V groups, attn_output, gate+up, down).
stage_ncu() {
  ncu --set full --import-source no --kernel-name regex:k_gemv_direct --launch-skip 200 --launch-count 6 \
    -o "$out/gemv" -f "$prefill" bench --model "$model" -p 1 -n 8 -r 1 --path fast --decode-graph off --json \
    >"$out/ncu-run.log" 2>&1 || { note "ncu failed: $(tail -3 "$out/ncu-run.log")"; return 1; }
  ncu -i "$out/gemv.ncu-rep" --page source --csv --print-source sass >"$out/gemv-sass.csv" 2>"$out/ncu-src.err"
  ncu -i "$out/gemv.ncu-rep" --page details >"$out/gemv-details.txt" 2>&1
  note "ncu: $(grep -c '' "$out/gemv-sass.csv") source rows; details $(wc -l <"$out/gemv-details.txt") lines"
}

# The current per-role split of a pp2048 pass (the last one in the evidence is session 13's).
stage_trace() {
  local kt=$build/gates/trace/kerneltrace
  "$kt" -o "$out/trace-pp2048.json" --range prefill --skip 1 --quiet -- \
    "$prefill" bench --model "$model" -p 2048 -r 3 --path fast --json >/dev/null || { note "trace failed"; return 1; }
  "$kt" summarize "$out/trace-pp2048.json" --top 12 >"$out/trace-pp2048.txt"
  note "pp2048 trace: $(grep -m1 'kernel time' "$out/trace-pp2048.txt")"
}

for s in "${stages[@]}"; do
  t0=$(date +%s); "stage_$s"; rc=$?; note "stage $s: rc=$rc ($(($(date +%s) - t0)) s)"
done
cat "$sum"
