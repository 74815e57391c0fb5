#!/usr/bin/env bash
# Makes a "build folder" whose prefill is a real build's binary forced onto the fused GEMMs
# (PFX_FAST_GEMM=fused: same arithmetic, ~33% slower prefill on the H200) — a planted slow-down
# that only the ab and timing gates should catch:
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
PFX_FAST_GEMM=fused exec "$here/prefill.real" "$@"
SH
chmod +x "$out/engine/cli/prefill"
