#!/usr/bin/env bash
# ci/carry-builds.sh REPORT ARCHIVE — packs the two builds a landing report was made from (its
# landing.json names their folders and ids) into ARCHIVE (.tar.gz) for the GPU job, which runs the
# GPU gates on them with ci/gpu-gates.sh: baseline/ and candidate/ keep the build-tree layout of
# what the gates run (prefill and the JSON beside it, landing, the CUPTI tracer); carry.json says
# which ids and which gate profile. Builds of profiles/gates/default.yaml are static
# (PFX_STATIC_RUNTIME), so they run on a GPU host without this machine's libraries.
# Exit 0 packed; 3 nothing to carry (a build failed: the report says FAIL already); 5 error.
set -euo pipefail
report=$1 archive=$2
[[ -f "$report/landing.json" ]] || { echo "carry-builds: $report/landing.json: no report" >&2; exit 5; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
python3 - "$report/landing.json" "$stage" <<'PY' || exit $?
import json, os, shutil, sys
rec = json.load(open(sys.argv[1]))
stage = sys.argv[2]
profile = rec.get("profile", {})  # {path, candidate: the gate profile as the candidate has it, ...}
prefill = profile.get("candidate", {}).get("build", {}).get("prefill", "engine/cli/prefill")
if not profile.get("path"):
    sys.stderr.write("carry-builds: %s: profile.path: the report names no gate profile\n" % sys.argv[1])
    sys.exit(5)
carry = {"schema": "landing-carry/1", "profile": profile["path"], "candidate_id": rec.get("candidate_id", "")}
for side in ("baseline", "candidate"):
    b = rec.get(side, {})
    if not b.get("ok"):
        sys.stderr.write("carry-builds: the %s build %s failed: nothing to carry\n" % (side, b.get("id", "?")))
        sys.exit(3)
    src, dst = b["dir"], os.path.join(stage, side)
    carry[side + "_id"] = b["id"]
    # What the GPU gates run: prefill (and the JSON files beside it), landing and the tracer.
    wanted = [prefill, "gates/landing/landing", "gates/trace/kerneltrace", "gates/trace/libkerneltrace.so"]
    folder = os.path.dirname(prefill)
    if os.path.isdir(os.path.join(src, folder)):
        wanted += [os.path.join(folder, f) for f in os.listdir(os.path.join(src, folder)) if f.endswith(".json")]
    for rel in wanted:
        if os.path.isfile(os.path.join(src, rel)):
            os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
            shutil.copy2(os.path.join(src, rel), os.path.join(dst, rel))
    if not os.path.isfile(os.path.join(dst, prefill)):
        sys.stderr.write("carry-builds: %s: no %s in the %s build\n" % (src, prefill, side))
        sys.exit(5)
json.dump(carry, open(os.path.join(stage, "carry.json"), "w"), indent=1)
PY
mkdir -p "$(dirname "$archive")"
tar czf "$archive" -C "$stage" .
echo "carry-builds: $(du -h "$archive" | cut -f1) in $archive" >&2
