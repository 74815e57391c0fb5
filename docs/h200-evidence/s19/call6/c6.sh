#!/bin/bash
# Session 19 call 6: what bounds the decode step's kernels (main's code, 664887a). ncu (boost clocks
# kept) on the 7B's second decode step with the step graph off: every k_gemv_ws launch of layers
# 0-3 and the head, the norm and attention kernels; and gemv_bench's chain (generic order) and split
# kernels at q4_K 4096 x 4096. Durations, DRAM share, occupancy, issue, warp stall breakdown.
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p3b.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
p=$c/p3b; R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
M=/tmp/pfx-7b-q4km.gguf
$p/prefill synth --profile profiles/models/llama-7b-q4km.yaml --out $M --force > /dev/null || echo "synth failed" >> $S
st=smsp__average_warps_issue_stalled
METRICS=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,launch__registers_per_thread,launch__grid_size,launch__block_size,smsp__inst_executed.sum,${st}_long_scoreboard_per_issue_active.ratio,${st}_short_scoreboard_per_issue_active.ratio,${st}_wait_per_issue_active.ratio,${st}_math_pipe_throttle_per_issue_active.ratio,${st}_mio_throttle_per_issue_active.ratio,${st}_barrier_per_issue_active.ratio,${st}_lg_throttle_per_issue_active.ratio,${st}_not_selected_per_issue_active.ratio,${st}_selected_per_issue_active.ratio,${st}_dispatch_stall_per_issue_active.ratio,${st}_no_instruction_per_issue_active.ratio,${st}_branch_resolving_per_issue_active.ratio,${st}_tex_throttle_per_issue_active.ratio,${st}_membar_per_issue_active.ratio,${st}_drain_per_issue_active.ratio,${st}_sleeping_per_issue_active.ratio,${st}_imc_miss_per_issue_active.ratio
# Prompt of 1 token, then 2 decode steps: the kernels of step 2 (skip the prompt's and step 1's).
timeout 150 ncu --clock-control none --kernel-name-base function --kernel-name regex:'^(k_gemv_ws|k_rmsnorm_row|k_attn_decode_split|k_attn_decode_combine)$' \
  --launch-skip 290 --launch-count 40 --metrics $METRICS --csv --page raw \
  $p/prefill greedy --backend cuda --path fast --decode-graph off --model $M --tokens 1 -n 3 > $R/ncu-step.csv 2> $R/ncu-step.err
echo "ncu step rc $?" >> $S
timeout 150 ncu --clock-control none --kernel-name-base function --kernel-name regex:'^(k_gemv_ws|k_gemv_ws_chain)$' \
  --launch-skip 20 --launch-count 6 --metrics $METRICS --csv --page raw \
  $p/gemv_bench --types q4_K --T 1 --reps 1 > $R/ncu-bench.csv 2> $R/ncu-bench.err
echo "ncu bench rc $?" >> $S
python3 - $R <<'PY' | tee -a $S
import csv, sys, io
d = sys.argv[1]
def rows(f):
    txt = open(f).read()
    i = txt.find('"ID"')
    if i < 0: return []
    r = list(csv.DictReader(io.StringIO(txt[i:])))
    print("units:", {k: r[0][k] for k in ("gpu__time_duration.sum", "dram__bytes_read.sum", "sm__cycles_elapsed.avg.per_second")})
    return [x for x in r[1:] if x.get("Kernel Name")]  # row 0: units
st = "smsp__average_warps_issue_stalled_"
for f in ("ncu-step.csv", "ncu-bench.csv"):
    print("==", f)
    for x in rows(f"{d}/{f}"):
        stalls = sorted(((float(v or 0), k[len(st):-len("_per_issue_active.ratio")]) for k, v in x.items() if k.startswith(st)), reverse=True)[:5]
        print(f'{x["Kernel Name"][:22]:22} grid {x["launch__grid_size"]:>5}x{x["launch__block_size"]:>4} regs {x["launch__registers_per_thread"]:>3} '
              f'{float(x["gpu__time_duration.sum"]):9.2f} t dram {float(x["dram__throughput.avg.pct_of_peak_sustained_elapsed"]):5.1f}% '
              f'rd {float(x["dram__bytes_read.sum"]):8.2f} occ {float(x["sm__warps_active.avg.pct_of_peak_sustained_active"]):5.1f}% '
              f'issue {float(x["smsp__issue_active.avg.pct_of_peak_sustained_active"]):5.1f}% clk {x["sm__cycles_elapsed.avg.per_second"]} '
              + " ".join(f"{n}={v:.2f}" for v, n in stalls))
PY
cd $OUT && tar czf r.tgz r
# Carried: p3b.tar.xz = prefill and gemv_bench of 664887a (stripped). The summary printer at the end failed on ncu's thousands separators; ncu-summary.txt is the same table printed here from the CSVs.
