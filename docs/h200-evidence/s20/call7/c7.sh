#!/bin/bash
# Session 20 call 7: the q4_K decode mat-vec (T = 1) capped at 88 registers (__maxnreg__, no
# spills: 20 resident warps per SM instead of 16) against the shipped 115-register kernel (new =
# 2b4034f's code). gemv_bench --ws-only q4_K T = 1 twice each; prefill bench interleaved.
set -u
root=$(pwd); c=$root/.carry
cd $c && tar xJf p10.tar.xz && cd $root
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
p=$c/p10; R=$OUT/r; mkdir -p $R; S=$R/summary.txt; : > $S
for r in 1 2; do for v in new exp; do
  timeout 60 $p/$v-gemv_bench --ws-only --types q4_K --T 1 --reps 10 --csv $R/gemv-$v-$r.csv > /dev/null 2>&1 || echo "gemv_bench $v rc $?" >> $S
done; done
python3 - $R <<'PY' | tee -a $S
import csv, sys, collections, statistics
d = sys.argv[1]; rows = collections.defaultdict(lambda: collections.defaultdict(list))
for v in ("new", "exp"):
    for r in (1, 2):
        for x in csv.DictReader(open(f"{d}/gemv-{v}-{r}.csv")):
            rows[(x["N"], x["K"], x["kernel"])][v].append(float(x["gbs"]))
for k, m in rows.items():
    if k[2] in ("ws_w4", "ws_w8", "ws_auto"):
        a, b = statistics.median(m["new"]), statistics.median(m["exp"])
        print(f"q4_K {k[0]}x{k[1]} {k[2]:8} new {a:6.0f} exp {b:6.0f}  {b/a:6.3f}")
PY
ROUNDS=4 BENCH_ARGS="-p 512 -n 128 -r 3" timeout 200 bash scripts/gpu/bench_interleaved.sh $R/ab new=$p/new-prefill exp=$p/exp-prefill > $R/ab.txt 2>&1
cat $R/ab.txt | tee -a $S
cd $OUT && tar czf r.tgz r && rm -rf r/ab
# Carried: .carry/p10.tar.xz = prefill and gemv_bench of this tree (new) and of it with the q4_K
# T = 1 kernel as a __maxnreg__(88) copy (exp; not committed), stripped.
