#!/usr/bin/env bash
# Builds kiln's libFuzzer targets (fuzz/: clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, in build-fuzz/) and runs each for a while:
#   scripts/fuzz.sh [--seconds N] [TARGET...]     (default: 30 s, every target)
# A target starts from its seeds (fuzz/corpus/<target>/, plus seeds made
# here from real files: the kiln-dialect modules under tests/, executables
# and cache entries kilnc compiles from tests/models, a checkpoint a tiny
# kiln-train run saves) and
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
all_targets=(KilnModuleFuzzer ExecutableFuzzer CacheEntryFuzzer
  SafetensorsFuzzer ModelConfigFuzzer TokenizerFilesFuzzer DataFilesFuzzer
  CheckpointFuzzer JobFilesFuzzer)
((${#targets[@]})) || targets=("${all_targets[@]}")

"$root/scripts/setup.sh"
if [[ ! -f $build/build.ninja ]]; then
  cmake -G Ninja -S "$root/fuzz" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++ >/dev/null
fi
ninja -C "$build" -j"${JOBS:-2}" "${targets[@]}"

# Seeds from real files, made once (mode bytes as each target reads them);
# a missing stamp (an older layout, a run without kilnc) makes them again.
bin=$(dirname "${KILNC:-$root/build/bin/kilnc}")
seeds=$build/seeds
if [[ ! -f $seeds/made && -x $bin/kilnc && -x $bin/kiln-train ]]; then
  rm -rf "$seeds"
  mkdir -p "$seeds"/{KilnModuleFuzzer,ExecutableFuzzer,CacheEntryFuzzer,CheckpointFuzzer}
  # Modules: every test input, split where lit splits it.
  n=0
  for f in "$root"/tests/models/*.mlir "$root"/tests/ir/*.mlir "$root"/tests/passes/*.mlir; do
    awk -v dir="$seeds/KilnModuleFuzzer" -v base="$((n++))" '
      /^\/\/ -----/ { part++; next }
      { print > (dir "/" base "-" part+0 ".mlir") }' "$f"
  done
  if [[ -x $bin/kilnc ]]; then
    for model in "$root"/tests/models/*.mlir; do
      name=$(basename "$model" .mlir)
      if "$bin/kilnc" compile "$model" -o "$build/$name.kexe" \
          --cache "$build/seed-cache" >/dev/null 2>&1; then
        # The payload after the 24-byte header, as mode 1 takes it.
        { printf '\001'; tail -c +25 "$build/$name.kexe"; } > "$seeds/ExecutableFuzzer/$name"
      fi
    done
    for entry in "$build"/seed-cache/*; do
      if [[ -f $entry ]]; then
        { printf '\000'; cat "$entry"; } > "$seeds/CacheEntryFuzzer/$(basename "$entry" | cut -c1-16)"
      fi
    done
  fi
  if [[ -x $bin/kiln-train ]]; then
    rm -rf "$build/seed-train"
    if "$bin/kiln-train" --n_layer 1 --n_embd 16 --n_head 2 --n_positions 16 \
        --block_size 8 --per_device_train_batch_size 2 --default_corpus_lines 20 \
        --max_steps 1 --save_steps 1 --output_dir "$build/seed-train" >/dev/null 2>&1; then
      { printf '\000'; cat "$build"/seed-train/checkpoint-1/checkpoint.safetensors; } \
        > "$seeds/CheckpointFuzzer/checkpoint-1"
    fi
  fi
  touch "$seeds/made"
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
