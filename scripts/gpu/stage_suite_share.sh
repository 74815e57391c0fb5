#!/usr/bin/env bash
# Packs, from a build made here, what the GPU host's share of the suite gate runs (`landing gate
# suite --suite-labels gpu`, scripts/gpu/final_gates.sh suite): the build's CTest files, the
# executables of the tests labelled gpu (as `ctest --show-only=json-v1` names them), and what the
# other gates run (prefill, its kernel records, the tracer, landing), into one archive that fits
# the device tool's carry:
#   scripts/gpu/stage_suite_share.sh BUILD_DIR ARCHIVE
# CTest's files name the build by its absolute path here: the archive records it in
# BUILD_PATH.txt, and the GPU host links that path to the unpacked folder.
set -euo pipefail
build=$(cd "${1:?BUILD_DIR}" && pwd); archive=${2:?ARCHIVE}
[[ $archive = /* ]] || archive=$PWD/$archive
list=$(mktemp)
trap 'rm -f "$list"' EXIT
ctest --test-dir "$build" -L '^gpu$' --show-only=json-v1 | python3 -c '
import json, os, sys
build = sys.argv[1]
exes = set()
for t in json.load(sys.stdin).get("tests", []):
    cmd = t.get("command") or []
    if cmd and cmd[0].startswith(build + "/"):
        exes.add(os.path.relpath(cmd[0], build))
print("\n".join(sorted(exes)))
' "$build" > "$list"
[[ -s $list ]] || { echo "stage_suite_share: no test labelled gpu in $build" >&2; exit 1; }
echo "$build" > "$build/BUILD_PATH.txt"
# CTest's files: each folder's CTestTestfile.cmake and the gtest_discover_tests lists it includes
# (<test>[1]_include.cmake, <test>[1]_tests.cmake).
(cd "$build" && find . \( -name CTestTestfile.cmake -o -name '*\[1\]_include.cmake' -o -name '*\[1\]_tests.cmake' \) -printf '%P\n') >> "$list"
# Helpers the GPU tests start themselves (the tracer's test programs) travel too.
for f in BUILD_PATH.txt tests/gates/trace/trace_gpu_program tests/gates/trace/trace_plain_cuda_program engine/cli/prefill engine/cli/kernel-resources.json engine/cli/kernel-sass.json gates/trace/kerneltrace \
         gates/trace/libkerneltrace.so gates/landing/landing; do
  [[ -e $build/$f ]] && echo "$f" >> "$list"
done
top=$(basename "$build")
sed "s|^|$top/|" "$list" > "$list.top"
tar cJf "$archive" -C "$(dirname "$build")" -T "$list.top"
rm -f "$list.top"
echo "stage_suite_share: $(grep -c . "$list") files, $(grep -vc '\.cmake$' "$list") binaries and records" >&2
ls -la "$archive"
