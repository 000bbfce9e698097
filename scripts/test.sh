#!/usr/bin/env bash
# Installs what is missing, builds kiln, and runs every test: the lit suite
# (lit) and the GoogleTest unit tests (ctest), printing both summaries, then
# each fuzz target for 30 s.
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

# The fuzz targets for 30 s each (fuzz/, scripts/fuzz.sh; a crash, hang or
# out-of-memory fails the run and leaves its input in build-fuzz/findings/).
KILNC="$build/bin/kilnc" "$root/scripts/fuzz.sh" --seconds "${FUZZ_SECONDS:-30}"
