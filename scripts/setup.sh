#!/usr/bin/env bash
# Installs what kiln needs to build and test, and only what is missing: Debian
# packages with apt-get, and cudnn-frontend's headers from its pip wheel
# (below). Idempotent; takes seconds when everything is there.
set -euo pipefail

packages=(
  cmake ninja-build ccache g++ python3
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools liblld-22-dev
  clang-22 libclang-rt-22-dev
  libabsl-dev libdnnl-dev libopenblas-dev libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev libutf8proc-dev
  valgrind openmpi-bin libopenmpi-dev
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

# cudnn-frontend's headers (header-only C++, MIT), for the CUDA runtime's
# cuDNN attention (runtime/cuda/CudnnAttention.cpp): NVIDIA ships them in
# the nvidia-cudnn-frontend wheel, whose include/ folder is unpacked into
# .deps/. Optional: without them (no network) kiln builds without cuDNN
# attention and says so when asked for it.
frontend_version=1.32.0
frontend_dir="$(cd "$(dirname "$0")/.." && pwd)/.deps/cudnn-frontend-$frontend_version"
if [[ -f "$frontend_dir/include/cudnn_frontend.h" ]]; then
  echo "setup: cudnn-frontend $frontend_version present"
else
  echo "setup: fetching cudnn-frontend $frontend_version's headers"
  wheel_dir=$(mktemp -d)
  if python3 -m pip download -q --no-deps --only-binary=:all: \
       -d "$wheel_dir" "nvidia-cudnn-frontend==$frontend_version" &&
     python3 - "$wheel_dir" "$frontend_dir" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("include/")])
PY
  then
    echo "setup: cudnn-frontend headers in $frontend_dir/include"
  else
    echo "setup: warning: could not fetch cudnn-frontend; building without cuDNN attention" >&2
  fi
  rm -rf "$wheel_dir"
fi
