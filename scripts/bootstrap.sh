#!/usr/bin/env bash
# Installs what the build and tests need from Debian's packages and PyPI; idempotent, quiet when
# everything is present. Usage: scripts/bootstrap.sh
set -euo pipefail
pkgs=(cmake ninja-build g++ git python3 python3-pip libboost-program-options-dev libyaml-cpp-dev
      nlohmann-json3-dev libgtest-dev libicu-dev libpugixml-dev libssl-dev chromium python3-yaml
      clang libclang-rt-dev  # clang + its sanitizer/libFuzzer runtimes: scripts/fuzz.sh
      python3-markdown-it libxml2-utils)  # the report tests: a CommonMark reader, xmllint for the JUnit schema
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Python: the gguf package (llama.cpp's own reader) checks our writer; numpy for fixtures.
if ! python3 -c 'import gguf, numpy' 2>/dev/null; then
  echo "bootstrap: installing Python packages gguf numpy" >&2
  python3 -m pip install -q gguf numpy 2>/dev/null || python3 -m pip install -q --break-system-packages gguf numpy
fi
