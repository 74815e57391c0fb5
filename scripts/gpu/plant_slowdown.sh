#!/usr/bin/env bash
# Makes a "build folder" whose prefill is a real build's binary forced onto the fused GEMMs
# (--gemm fused: same arithmetic, ~33% slower prefill on the H200 as of 2026-11) — a planted
# slow-down that only the ab and timing gates should catch. A build older than the --gemm flag
# (no capabilities.gemm_variants) gets the environment variable it read then:
#   scripts/gpu/plant_slowdown.sh REAL_BUILD OUT_DIR
#   landing gate ab timing --baseline-build REAL_BUILD --candidate-build OUT_DIR --candidate-id planted-slowdown …
set -euo pipefail
real=$(cd "$1" && pwd); out=$2
mkdir -p "$out/engine/cli"
cp "$real/engine/cli/prefill" "$out/engine/cli/prefill.real"
cp "$real/engine/cli/kernel-resources.json" "$out/engine/cli/" 2>/dev/null || true
cat >"$out/engine/cli/prefill" <<'SH'
#!/usr/bin/env bash
here=$(cd "$(dirname "$0")" && pwd)
real="$here/prefill.real"
if "$real" --version --json | grep -q '"gemm_variants"'; then
  # --gemm applies to the cuda fast path only (bench: cuda always; logits/greedy: --backend cuda).
  cuda=0; generic=0
  [[ ${1:-} == bench ]] && cuda=1
  prev=""
  for a in "$@"; do
    [[ $prev == --backend && $a == cuda ]] && cuda=1
    [[ $a == --backend=cuda ]] && cuda=1
    [[ ($prev == --path && $a == generic) || $a == --path=generic ]] && generic=1
    prev=$a
  done
  case "${1:-}" in
    logits|greedy|bench) if [[ $cuda == 1 && $generic == 0 ]]; then sub=$1; shift; exec "$real" "$sub" --gemm fused "$@"; fi ;;
  esac
  exec "$real" "$@"
fi
PFX_FAST_GEMM=fused exec "$real" "$@"
SH
chmod +x "$out/engine/cli/prefill"
