#!/usr/bin/env bash
# Configures (once) and builds kiln with Ninja and ccache. BUILD_DIR, JOBS and
# extra CMake flags (CMAKE_ARGS) may be set by the caller.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
jobs=${JOBS:-$(nproc)}
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
fi
ninja -C "$build" -j"$jobs"
