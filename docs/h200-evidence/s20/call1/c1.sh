#!/bin/bash
# Session 20 call 1: fewer instructions per weight in the split decode mat-vec (k_gemv_ws, T = 1).
# old = f329476 (session 19's final); v1 = 08273d7 (scales converted once per group, unconditional
# B loads); v2 = b9d35b6 (+ scale shares through shared memory); v3 = 7bf0e05 (+ T = 1 activations
# staged through shared memory). GemvWs GPU tests and sanitizers (v3); gemv_bench --ws-only T = 1
# of each; SASS of k_gemv_ws<q4_K, 1, 2>; the 7B greedy ids of each; prefill bench interleaved;
# ncu of one decode step's kernels (v3).
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p1.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
p=$c/p1; R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
note() { echo "$*" | tee -a $S; }
timeout 240 $p/test_gemm_fast --gtest_filter='GemvWs.*' > $R/t-gemvws.txt 2>&1
note "GemvWs tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/t-gemvws.txt | tr '\n' ' ')"
grep -E "Failure|FAILED" -A4 $R/t-gemvws.txt | head -20 | tee -a $S
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $p/test_gemm_fast --gtest_filter='GemvWs.SmallCaseForSanitizers' > $R/san-gemvws-$tool.txt 2>&1
  note "$tool GemvWs small rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-gemvws-$tool.txt | tail -1)"
done
for v in old v3; do
  cuobjdump -sass -fun '_ZN3pfx7kernels3dev43_GLOBAL__N__b11cb8b6_10_gemv_ws_cu_bf5cb6429k_gemv_wsILi12ELi1ELi2EEEvNS1_7GemvJobE' $p/$v-gemv_bench > $R/sass-$v.txt 2>&1 || \
    cuobjdump -sass $p/$v-gemv_bench 2>/dev/null | awk '/Function : .*k_gemv_wsILi12ELi1ELi2E/{f=1} f{print} /Function : / && !/k_gemv_wsILi12ELi1ELi2E/{if(f>1)exit; if(f)f++}' > $R/sass-$v.txt
  note "sass $v: $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' $R/sass-$v.txt) instructions"
done
for round in 1 2; do
  for v in old v1 v2 v3; do
    timeout 120 $p/$v-gemv_bench --ws-only --types q4_K,q6_K --T 1 --reps 10 --csv $R/gemv-$v-$round.csv > $R/bench-$v-$round.txt 2>&1 || note "gemv_bench $v rc $?"
  done
done
python3 - $R <<'PY' | tee -a $S
import csv, sys, collections, statistics
d = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for v in ("old", "v1", "v2", "v3"):
    for r in (1, 2):
        try:
            for x in csv.DictReader(open(f"{d}/gemv-{v}-{r}.csv")):
                rows[(x["type"], x["N"], x["K"], x["kernel"])][v].append(float(x["gbs"]))
        except FileNotFoundError:
            pass
print("gemv_bench T=1 GB/s (median of 2 runs)     old      v1      v2      v3   v3/old")
for k, m in rows.items():
    if k[3] not in ("ws_w2", "ws_w4", "ws_w8", "ws_auto", "ws_chain8"): continue
    med = {v: statistics.median(m[v]) if m[v] else float("nan") for v in ("old", "v1", "v2", "v3")}
    print(f"{k[0]} {k[1]}x{k[2]} {k[3]:9}" + "".join(f"{med[v]:8.0f}" for v in ("old", "v1", "v2", "v3")) + f"  {med['v3']/med['old']:6.3f}")
PY
M=/tmp/pfx-7b-q4km.gguf
$p/v3-prefill synth --profile profiles/models/llama-7b-q4km.yaml --out $M --force > /dev/null || note "synth failed"
ids=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(3, 32000)) for _ in range(40)))")
for v in old v1 v2 v3; do
  timeout 60 $p/$v-prefill greedy --backend cuda --path fast --model $M --tokens "$ids" -n 120 --json > $R/greedy-$v.json
done
timeout 60 $p/v3-prefill greedy --backend cuda --path fast --decode-graph off --model $M --tokens "$ids" -n 120 --json > $R/greedy-v3-off.json
python3 - $R <<'PY' | tee -a $S
import json, sys
d = sys.argv[1]
def ids(k):
    s = open(f"{d}/greedy-{k}.json").read(); return json.loads(s[s.index("{"):])["generated_ids"]
r = {k: ids(k) for k in ("old", "v1", "v2", "v3", "v3-off")}
print("greedy 40+120 equal to old:", {k: v == r["old"] for k, v in r.items()})
PY
ROUNDS=4 BENCH_ARGS="-p 512 -n 128 -r 3" timeout 300 bash scripts/gpu/bench_interleaved.sh $R/ab old=$p/old-prefill v1=$p/v1-prefill v2=$p/v2-prefill v3=$p/v3-prefill > $R/ab.txt 2>&1
note "A/B (4 rounds of -p 512 -n 128 -r 3):"; cat $R/ab.txt | tee -a $S
st=smsp__average_warps_issue_stalled
METRICS=gpu__time_duration.sum,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size,smsp__inst_executed.sum,${st}_long_scoreboard_per_issue_active.ratio,${st}_short_scoreboard_per_issue_active.ratio,${st}_wait_per_issue_active.ratio,${st}_math_pipe_throttle_per_issue_active.ratio,${st}_mio_throttle_per_issue_active.ratio,${st}_not_selected_per_issue_active.ratio,${st}_barrier_per_issue_active.ratio,${st}_lg_throttle_per_issue_active.ratio
for v in old v3; do
  timeout 100 ncu --clock-control none --kernel-name-base function --kernel-name regex:'^k_gemv_ws$' \
    --launch-skip 200 --launch-count 8 --metrics $METRICS --csv --page raw \
    $p/$v-prefill greedy --backend cuda --path fast --decode-graph off --model $M --tokens 1 -n 4 > $R/ncu-$v.csv 2> $R/ncu-$v.err
  note "ncu $v rc $?"
done
python3 - $R <<'PY' | tee -a $S
import csv, sys, io
d = sys.argv[1]
st = "smsp__average_warps_issue_stalled_"
num = lambda s: float(str(s).replace(",", "") or 0)
for v in ("old", "v3"):
    txt = open(f"{d}/ncu-{v}.csv").read(); i = txt.find('"ID"')
    if i < 0: print(v, "no ncu rows"); continue
    rs = [x for x in list(csv.DictReader(io.StringIO(txt[i:])))[1:] if x.get("Kernel Name")]
    for x in rs:
        stalls = sorted(((num(val), k[len(st):-len("_per_issue_active.ratio")]) for k, val in x.items() if k.startswith(st)), reverse=True)[:4]
        print(f'{v:3} grid {x["launch__grid_size"]:>6}x{x["launch__block_size"]:>4} regs {x["launch__registers_per_thread"]:>3} {num(x["gpu__time_duration.sum"]):8.2f} us '
              f'rd {num(x["dram__bytes_read.sum"]):7.2f} MB inst {num(x["smsp__inst_executed.sum"])/1e6:6.2f}M occ {num(x["sm__warps_active.avg.pct_of_peak_sustained_active"]):5.1f}% '
              f'issue {num(x["smsp__issue_active.avg.pct_of_peak_sustained_active"]):5.1f}% ' + " ".join(f"{n}={val:.2f}" for val, n in stalls))
PY
cd $OUT && tar czf r.tgz r && rm -rf r/ab
# Carried: .carry/p1.tar.xz = stripped static builds of this tree with kernels/gemv_ws.cu and
# gemv_ws_lane.cuh at the commit each name stands for (old/v1/v2/v3-prefill, -gemv_bench), and
# test_gemm_fast of v3.
