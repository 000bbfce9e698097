#!/usr/bin/env bash
# Installs what is missing, builds kiln, and runs the main job: kiln-train
# trains a GPT-2 (byte-level vocabulary) on the generated demo corpus, every
# step compiled by kiln into one graph, printing Hugging Face Trainer-style
# logs (the loss falls from ln 256 = 5.5 to about 1), the evaluation loss and
# perplexity, and kiln's metrics (one compilation for training, one for
# evaluation, every other step a cache hit). Then the same job runs a few
# steps compiled and eagerly (one kernel per op, the baseline without the
# compiler), side by side. About 1-3 minutes on 2 idle cores.
# KILN_BACKEND (reference | cpu) picks the backend (kiln-train's default:
# cpu); the reference evaluator is ~10x slower, so it gets a smaller job.
# Extra arguments go to the main kiln-train run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
"$root/scripts/build.sh"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [[ "${KILN_BACKEND:-}" == reference ]]; then
  job=(--logging_steps 10)
  steps=150
else
  job=(--n_layer 4 --n_embd 128 --n_head 4 --block_size 64
       --default_corpus_lines 2000 --warmup_steps 30 --logging_steps 10)
  steps=300
fi
echo "== kiln-train ${job[*]} --max_steps $steps (compiled; checkpoints in $out)"
"$build/bin/kiln-train" "${job[@]}" --max_steps "$steps" \
  --output_dir "$out/compiled" --save_steps 100 "$@"

# == compiled vs eager ==
# The same 30 steps (same model, data, seed) as compiled graphs and eagerly;
# the losses agree, the runtimes show what compilation buys.
echo
echo "== compiled vs eager: the same 30 steps"
for mode in compiled eager; do
  flags=()
  [[ $mode == eager ]] && flags=(--eager)
  "$build/bin/kiln-train" "${job[@]}" --max_steps 30 --max_eval_samples 8 \
    ${flags[@]+"${flags[@]}"} \
    2>/dev/null | grep -E "^\{'(loss|train_runtime)'" | tail -n 2 |
    sed "s/^/$mode: /" || echo "$mode: the run failed (rerun it without 2>/dev/null)"
done
