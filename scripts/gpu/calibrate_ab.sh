#!/usr/bin/env bash
# Calibrates the A/B gate on the GPU: how often it cries wolf, how often it catches a slowdown.
#
#   here (no GPU):  scripts/gpu/calibrate_ab.sh build OUT [PASS_US]
#       Three static-runtime builds of HEAD as carried folders: OUT/real, and OUT/slow2, OUT/slow5
#       with a planted spin in every fast RMSNorm launch (kernels/plant_spin.cuh) aimed at +2% and
#       +5% of a PASS_US µs pp512 pass of the calibration model (default 3300: 2 layers at 7B width,
#       9 norm launches... see below), then OUT.tar.xz for the device's carry.
#   on the H200:    scripts/gpu/calibrate_ab.sh run OUT RESULTS
#       `landing gate ab` (the baseline build's landing judges) N_AA times real vs real (A/A) and
#       N_PLANT times each real vs slow2 and real vs slow5, on a 2-layer model of 7B width
#       (profiles/models/llama-7b-q4km.yaml with n_layer 2: real shapes, a load of ~0.3 GB), then one
#       long A/B per planted build (TRUTH_PAIRS pairs) measuring its real Δ. Prints the table:
#       false alarms (A/A runs that FAIL; goal ≤ 1 of ≥ 20), detection rate per planted size (goal
#       ≥ 95% at 5%), inconclusive counts, and the seconds each gate run took. Stops starting runs
#       after CAP_S seconds (default 330) so the whole call stays within ~6 minutes.
# Environment: N_AA (20), N_PLANT (10), TRUTH_PAIRS (24), CAP_S (330), PFX_FIXTURES.
set -uo pipefail
mode=${1:?usage: calibrate_ab.sh build OUT [PASS_US] | run OUT RESULTS}
out=${2:?OUT folder}

layers=2
norms=$((2 * layers + 1))  # attn_norm + ffn_norm per layer, output_norm

if [[ $mode == build ]]; then
  pass_us=${3:-3300}
  repo=$(git rev-parse --show-toplevel)
  mkdir -p "$out"; out=$(cd "$out" && pwd)
  # One tree, three build folders differing in one define: with ccache as the compiler launcher
  # and no build-dir hash, the second and third builds compile one file each.
  export CCACHE_BASEDIR=$repo CCACHE_NOHASHDIR=1
  for variant in real:0 slow2:2 slow5:5; do
    name=${variant%%:*} pct=${variant##*:}
    spin_ns=$((pct * pass_us * 1000 / 100 / norms))
    b=$out/build-$name
    cmake -S "$repo" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPFX_WERROR=OFF -DPFX_STATIC_RUNTIME=ON -DPFX_ENABLE_TESTS=OFF \
      -DPFX_PLANT_SPIN_NS=$spin_ns ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} \
      ${CMAKE_CUDA_COMPILER_LAUNCHER:+-DCMAKE_CUDA_COMPILER_LAUNCHER=$CMAKE_CUDA_COMPILER_LAUNCHER} >&2 || exit 1
    targets=(prefill)
    [[ $name == real ]] && targets+=(landing)
    cmake --build "$b" -j "${JOBS:-2}" --target "${targets[@]}" >&2 || exit 1
    mkdir -p "$out/$name/engine/cli"
    cp "$b/engine/cli/prefill" "$b/engine/cli/kernel-resources.json" "$out/$name/engine/cli/"
    [[ $name == real ]] && mkdir -p "$out/real/gates/landing" && cp "$b/gates/landing/landing" "$out/real/gates/landing/"
    echo "$name: planted $spin_ns ns per fast RMSNorm launch (aimed at +$pct% of a $pass_us µs pass)" | tee -a "$out/PLANTED.txt"
    rm -rf "$b"
  done
  tar -C "$(dirname "$out")" -cJf "$out.tar.xz" "$(basename "$out")/real" "$(basename "$out")/slow2" "$(basename "$out")/slow5" \
    "$(basename "$out")/PLANTED.txt"
  ls -la "$out.tar.xz"
  exit 0
fi

[[ $mode == run ]] || { echo "calibrate_ab: mode is build or run" >&2; exit 4; }
results=${3:?RESULTS folder}
mkdir -p "$results"; results=$(cd "$results" && pwd); out=$(cd "$out" && pwd)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
N_AA=${N_AA:-20} N_PLANT=${N_PLANT:-10} TRUTH_PAIRS=${TRUTH_PAIRS:-24} CAP_S=${CAP_S:-330}
landing=$out/real/gates/landing/landing
model=/tmp/pfx-calib-${layers}l.gguf
if [[ ! -f $model ]]; then
  sed "s/^  n_layer: .*/  n_layer: $layers/" profiles/models/llama-7b-q4km.yaml > /tmp/pfx-calib-model.yaml
  "$out/real/engine/cli/prefill" synth --profile /tmp/pfx-calib-model.yaml --out "$model" --seed 1 || exit 1
fi
# The A/B settings of profiles/gates/default.yaml (budget 2%, 95%, 6..24 pairs) with a 1-pair A/A
# floor (reported, never part of the decision) and a cap of 12 pairs, to fit the device time.
profile() {  # profile MAX_PAIRS > file
  cat <<EOF
schema: gate-profile/1
models:
  calib: {path: $model}
gates:
  ab:
    timeout_s: 300
    model: calib
    prompt_tokens: 512
    reps: 3
    warmup: 1
    aa_pairs: 1
    min_pairs: 6
    max_pairs: $1
    step_pairs: 3
    max_regression_pct: 2.0
    confidence: 0.95
waivers: []
EOF
}
profile 12 > "$results/calib.yaml"
profile "$TRUTH_PAIRS" > "$results/truth.yaml"
id=$("$out/real/engine/cli/prefill" --version --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["commit"][:12])')
t_start=$SECONDS
one() {  # one LABEL CANDIDATE PROFILE N: N gate runs, one line each in RESULTS/LABEL.tsv
  local label=$1 cand=$2 prof=$3 n=$4
  for ((i = 1; i <= n; ++i)); do
    if ((SECONDS - t_start > CAP_S)); then echo "calibrate_ab: time cap reached before $label run $i" >&2; break; fi
    local t0=$SECONDS dir=$results/$label-$i
    "$landing" gate ab --baseline-build "$out/real" --candidate-build "$out/$cand" --baseline-id "$id" --candidate-id "$id" \
      --gates "$prof" --out "$dir" --harness "$landing" --quiet > "$dir.log" 2>&1
    python3 - "$dir/gates/ab.json" "$label" "$((SECONDS - t0))" >> "$results/$label.tsv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d = r.get("details", {})
print("\t".join([sys.argv[2], r["status"], "%.3f" % d.get("median_delta_pct", float("nan")), str(d.get("pairs_run", 0)), sys.argv[3]]))
PY
  done
}
one aa real "$results/calib.yaml" "$N_AA"
one slow5 slow5 "$results/calib.yaml" "$N_PLANT"
one slow2 slow2 "$results/calib.yaml" "$N_PLANT"
for s in slow5 slow2; do one "truth-$s" "$s" "$results/truth.yaml" 1; done
python3 - "$results" <<'PY'
import glob, os, statistics, sys
res = sys.argv[1]
rows = {}
for f in glob.glob(os.path.join(res, "*.tsv")):
    for line in open(f):
        label, status, delta, pairs, secs = line.rstrip("\n").split("\t")
        rows.setdefault(label, []).append((status, float(delta), int(pairs), int(secs)))
truth = {k[6:]: v[0][1] for k, v in rows.items() if k.startswith("truth-")}
print("| runs | n | FAIL | PASS | INCONCLUSIVE | median Δ (gate) | true Δ (long A/B) | s per run |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for label in ("aa", "slow2", "slow5"):
    r = rows.get(label, [])
    if not r:
        print("| %s | 0 | | | | | | |" % label)
        continue
    n = len(r)
    count = lambda s: sum(1 for x in r if x[0] == s)
    print("| %s | %d | %d | %d | %d | %+.2f%% | %s | %.1f |" % (
        {"aa": "A/A (real vs real)", "slow2": "planted +2%", "slow5": "planted +5%"}[label], n, count("FAIL"), count("PASS"),
        count("INCONCLUSIVE"), statistics.median(x[1] for x in r),
        "%+.2f%%" % truth[label] if label in truth else "–", statistics.mean(x[3] for x in r)))
aa = rows.get("aa", [])
print("\nfalse alarms: %d of %d A/A runs FAIL (goal ≤ 1)" % (sum(1 for x in aa if x[0] == "FAIL"), len(aa)))
for s in ("slow5", "slow2"):
    r = rows.get(s, [])
    if r:
        print("detection %s: %d of %d FAIL = %.0f%%%s" % (s, sum(1 for x in r if x[0] == "FAIL"), len(r),
              100.0 * sum(1 for x in r if x[0] == "FAIL") / len(r), " (goal ≥ 95%)" if s == "slow5" else ""))
PY
echo "calibrate_ab: $((SECONDS - t_start)) s of gate runs"
