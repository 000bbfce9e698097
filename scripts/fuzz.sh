#!/usr/bin/env bash
# Builds kiln's libFuzzer targets (fuzz/: clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, in build-fuzz/) and runs each for a while:
#   scripts/fuzz.sh [--seconds N] [TARGET...]     (default: 30 s, every target)
# A target starts from its seeds (fuzz/corpus/<target>/, plus seeds made
# here from real files: executables kilnc compiles from tests/models) and
# keeps what it finds in build-fuzz/corpus/<target>/ between runs. A crash,
# a hang (-timeout) or running out of memory (-rss_limit_mb) leaves its
# input in build-fuzz/findings/ and makes the script exit 1; the input then
# becomes a regression test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=30
targets=()
while (($#)); do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=(SafetensorsFuzzer ExecutableFuzzer)

"$root/scripts/setup.sh"
if [[ ! -f $build/build.ninja ]]; then
  cmake -G Ninja -S "$root/fuzz" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++ >/dev/null
fi
ninja -C "$build" -j"${JOBS:-2}" "${targets[@]}"

# Seeds from real files: the executables kilnc compiles from the test
# models, as the payload the target wraps in a valid header (mode byte 1).
kilnc=${KILNC:-$root/build/bin/kilnc}
seeds=$build/seeds/ExecutableFuzzer
if [[ -x $kilnc && ! -d $seeds ]]; then
  mkdir -p "$seeds"
  for model in "$root"/tests/models/*.mlir; do
    name=$(basename "$model" .mlir)
    if "$kilnc" compile "$model" -o "$build/$name.kexe" >/dev/null 2>&1; then
      { printf '\001'; tail -c +25 "$build/$name.kexe"; } > "$seeds/$name"
    fi
  done
fi

failed=0
mkdir -p "$build/findings"
for target in "${targets[@]}"; do
  corpus=$build/corpus/$target
  mkdir -p "$corpus"
  dirs=("$corpus")
  for d in "$root/fuzz/corpus/$target" "$build/seeds/$target"; do
    [[ -d $d ]] && dirs+=("$d")
  done
  log=$build/$target.log
  if "$build/$target" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$build/findings/$target-" "${dirs[@]}" >"$log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed=1
  fi
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo 0)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+' || echo 0)
  echo "fuzz: $target: $status, $runs runs in $seconds s, coverage $cov, corpus $(ls "$corpus" | wc -l) inputs (log: $log)"
done
exit $failed
