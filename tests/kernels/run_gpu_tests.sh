#!/usr/bin/env bash
# Runs every kernel test binary of a build directly (not through ctest, whose files hold absolute
# paths of the machine that configured the build), so a build directory carried to a GPU machine
# at another path still runs. Usage:
#   tests/kernels/run_gpu_tests.sh BUILD_DIR OUTDIR
# Writes OUTDIR/logs/<binary>.log, OUTDIR/junit/<binary>.xml, OUTDIR/summary.txt (and copies the
# build's kernel-resources.json/.ptxas.txt when present).
# Exit: 0 all passed, none skipped; 1 a failure, a crash or no test binary at all; 3 nothing
# failed but tests were skipped (e.g. no usable GPU here) — never a silent pass.
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR OUTDIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || { echo "$0: no build directory $1" >&2; exit 1; }
out=$2
mkdir -p "$out/logs" "$out/junit"
out=$(cd "$out" && pwd)
tests_dir="$build/tests/kernels"
summary="$out/summary.txt"
: >"$summary"

say() { echo "$*" | tee -a "$summary"; }

mapfile -t bins < <(find "$tests_dir" -path '*/CMakeFiles' -prune -o -type f -perm -u+x -name 'test_*' -print 2>/dev/null | sort)
if [[ ${#bins[@]} -eq 0 ]]; then
  say "FAIL: no test binaries under $tests_dir (build the tests/kernels targets first)"
  exit 1
fi

# A binary built here may meet a machine whose cuBLAS is not on the loader path: look in the
# usual CUDA and pip locations for whatever ldd cannot find.
extra_dirs=()
for bin in "${bins[@]}"; do
  while read -r lib; do
    [[ -z "$lib" ]] && continue
    found=""
    for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
             /usr/lib/x86_64-linux-gnu /opt/torch/.venv/lib/python3*/site-packages/nvidia/*/lib \
             /usr/local/lib/python3*/dist-packages/nvidia/*/lib /usr/lib/python3/dist-packages/nvidia/*/lib; do
      if [[ -e "$d/$lib" ]]; then found=$d; break; fi
    done
    if [[ -z "$found" ]]; then  # last resort: a bounded search of the usual prefixes
      hit=$(find /usr /opt -maxdepth 8 -name "$lib" 2>/dev/null | head -1)
      [[ -n "$hit" ]] && found=$(dirname "$hit")
    fi
    if [[ -n "$found" ]]; then extra_dirs+=("$found"); else echo "warning: $lib not found for $(basename "$bin")" >&2; fi
  done < <(ldd "$bin" 2>/dev/null | awk '/not found/ {print $1}')
done
if [[ ${#extra_dirs[@]} -gt 0 ]]; then
  uniq_dirs=$(printf '%s\n' "${extra_dirs[@]}" | sort -u | paste -sd:)
  export LD_LIBRARY_PATH="${uniq_dirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  say "note: LD_LIBRARY_PATH += $uniq_dirs"
fi

if command -v nvidia-smi >/dev/null; then
  nvidia-smi -L 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"
else
  say "gpu: nvidia-smi not found"
fi

failed=0
skipped_total=0
for bin in "${bins[@]}"; do
  name=$(basename "$bin")
  log="$out/logs/$name.log"
  start=$(date +%s)
  timeout 900 "$bin" --gtest_color=no --gtest_output="xml:$out/junit/$name.xml" >"$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  passed=$(grep -oP '^\[  PASSED  \] \K[0-9]+' "$log" | tail -1)
  nskip=$(grep -oP '^\[  SKIPPED \] \K[0-9]+(?= test)' "$log" | tail -1)
  nfail=$(grep -oP '^\[  FAILED  \] \K[0-9]+(?= test)' "$log" | tail -1)
  skipped_total=$(( skipped_total + ${nskip:-0} ))
  if [[ $rc -ne 0 ]]; then
    failed=1
    status="FAIL (exit $rc${nfail:+, $nfail failed})"
    [[ $rc -eq 124 ]] && status="FAIL (timeout)"
  else
    status="ok"
  fi
  say "$(printf '%-32s %-28s passed=%-4s skipped=%-4s %4ss' "$name" "$status" "${passed:-0}" "${nskip:-0}" "$secs")"
  if [[ $rc -ne 0 ]]; then
    grep -E '^\[  FAILED  \]' "$log" | sort -u | sed 's/^/    /' | tee -a "$summary"
  fi
done

for f in kernel-resources.json kernel-resources.ptxas.txt; do
  src=$(find "$build/engine/cli" -maxdepth 1 -name "$f" 2>/dev/null | head -1)
  [[ -n "$src" ]] && cp "$src" "$out/"
done

if [[ $failed -ne 0 ]]; then
  say "RESULT: FAIL"
  exit 1
fi
if [[ $skipped_total -gt 0 ]]; then
  say "RESULT: INCOMPLETE ($skipped_total tests skipped; see logs for the reason)"
  exit 3
fi
say "RESULT: PASS"
exit 0
