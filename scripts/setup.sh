#!/usr/bin/env bash
# Installs what kiln needs to build and test, and only what is missing: Debian
# packages with apt-get. Idempotent; takes seconds when everything is there.
set -euo pipefail

packages=(
  cmake ninja-build ccache g++ python3
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools liblld-22-dev
  clang-22 libclang-rt-22-dev
  libabsl-dev libdnnl-dev libopenblas-dev libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#packages[@]} packages present"
fi
