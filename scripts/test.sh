#!/usr/bin/env bash
# Installs what is missing, builds kiln, and runs every test: the lit suite
# (lit) and the GoogleTest unit tests (ctest), printing both summaries.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
start=$(date +%s)
"$root/scripts/build.sh"
echo "build: $(( $(date +%s) - start )) s"

# lit first, on its own, so its summary is printed; then every other test
# (the GoogleTest cases) through ctest, whose summary closes the run.
/usr/lib/llvm-22/bin/lit -sv "$build/tests"
cd "$build"
ctest --output-on-failure -j"${JOBS:-$(nproc)}" -E '^lit$'
