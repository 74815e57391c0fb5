#!/usr/bin/env bash
# `prefill bench` of several builds interleaved on one H200 (round robin, ROUNDS rounds), on the
# synthesized 7B Q4_K_M: what a change did, against machine drift (docs/perf-h200.md). Prints each
# test's median tok/s per build (over every sample of every round) and its ratio to the first.
#   scripts/gpu/bench_interleaved.sh OUT NAME=PREFILL [NAME=PREFILL ...]
# Env: ROUNDS (3), BENCH_ARGS ("-p 512,2048 -n 128 -r 3").
set -uo pipefail
out=$1; shift
mkdir -p "$out"
model7b=/tmp/pfx-7b-q4km.gguf
first=${1#*=}
[[ -f $model7b ]] || "$first" synth --profile profiles/models/llama-7b-q4km.yaml --out "$model7b" --force >/dev/null || exit 1
rc=0
for r in $(seq 1 "${ROUNDS:-3}"); do
  for nb in "$@"; do
    name=${nb%%=*} bin=${nb#*=}
    # shellcheck disable=SC2086
    "$bin" bench --model "$model7b" ${BENCH_ARGS:--p 512,2048 -n 128 -r 3} --path fast --json >"$out/bench-$r-$name.json" || rc=1
  done
done
python3 - "$out" "$@" <<'PY'
import glob, json, statistics, sys
out, names = sys.argv[1], [a.split("=", 1)[0] for a in sys.argv[2:]]
def samples(name):
    by = {}
    for path in sorted(glob.glob(f"{out}/bench-*-{name}.json")):
        s = open(path).read()
        for row in json.loads(s[s.index("{"):])["results"]:
            by.setdefault(row["test"], []).extend(row["samples_tps"])
    return by
data = {n: samples(n) for n in names}
tests = list(data[names[0]])
print("test      " + "".join(f"{n:>14}" for n in names) + "".join(f"{n + '/' + names[0]:>18}" for n in names[1:]))
for t in tests:
    med = [statistics.median(data[n].get(t, [float("nan")])) for n in names]
    print(f"{t:<10}" + "".join(f"{m:14.1f}" for m in med) + "".join(f"{m / med[0]:18.4f}" for m in med[1:]))
print("(medians over every sample: " + ", ".join(f"{n} {len(data[n][tests[0]])}" for n in names) + f" per test)")
PY
exit $rc
