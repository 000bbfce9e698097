#!/usr/bin/env bash
# The fine-tuning workflow of docs/PERFORMANCE-LORA.md from nothing, on the
# CPU: a tokenizer and a base GPT-2 trained on SST-2's sentences, then full
# fine-tuning and LoRA from that base on SST-2 as instructions
# (../shared/data/sst2-instruct), each answering dev.jsonl's 872 prompts
# (eval_accuracy). Prints one line per run; each run's log is in OUT_DIR.
#
#   scripts/sst2-instruct.sh [OUT_DIR]      (about 30 minutes on 2 cores)
#
# DATA (../shared/data), KILN_TRAIN (build/bin/kiln-train) and the step
# counts BASE_STEPS, FULL_STEPS, LORA_STEPS may be set by the caller.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${DATA:-$root/../shared/data}
out=${1:-sst2-instruct-runs}
train=${KILN_TRAIN:-$root/build/bin/kiln-train}
for f in "$data/sst2/train.tsv" "$data/sst2-instruct/train.jsonl" \
         "$data/sst2-instruct/dev.jsonl" "$train"; do
  [[ -e "$f" ]] || { echo "sst2-instruct: $f is missing" >&2; exit 1; }
done
mkdir -p "$out"

# A byte-level BPE of 8,192 ids learned from SST-2's training sentences (not
# dev's): with it a prompt is about 28 tokens, so no prompt is cut at block 128.
python3 "$root/scripts/train_tokenizer.py" --vocab_size 8192 \
  --output_dir "$out/tokenizer" "$data/sst2/train.tsv"

common=(--block_size 128 --per_device_train_batch_size 32 --warmup_ratio 0.05
        --logging_steps 50 --disable_tqdm True --save_strategy no)
instruct=(--train_file "$data/sst2-instruct/train.jsonl"
          --validation_file "$data/sst2-instruct/dev.jsonl"
          --do_train True --do_eval True)

run() {  # NAME ARGS...: one run, its log kept, its time and last metrics printed
  local name=$1; shift
  local start=$SECONDS
  "$train" "$@" --output_dir "$out/$name" --overwrite_output_dir True \
    > "$out/$name.log" 2>&1 || { echo "$name failed: $out/$name.log" >&2; exit 1; }
  printf '%-6s %5d s  %s\n' "$name" $((SECONDS - start)) \
    "$(grep -o "'eval_[a-z]*': [0-9.e-]*\|'train_loss': [0-9.e-]*" "$out/$name.log" | tr '\n' ' ')"
}

# The base's corpus: SST-2's training sentences, each ended by <|endoftext|>
# as documents are in GPT-2's pretraining data. run_clm joins lines without
# a separator; a base that never predicted the end-of-text cannot end an
# answer when its embeddings (and the tied head) are frozen, as under LoRA.
PYTHONPATH="$root/scripts" python3 - "$data/sst2/train.tsv" "$out/base-corpus.txt" <<'PY'
import sys
from train_tokenizer import texts  # the sentence column, as the tokenizer read it
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for text in texts(sys.argv[1]):
        out.write(text.strip() + "<|endoftext|>\n")
PY
run base --tokenizer_name "$out/tokenizer" \
  --train_file "$out/base-corpus.txt" --n_positions 128 --n_layer 4 \
  --n_embd 256 --n_head 4 --max_steps "${BASE_STEPS:-800}" \
  --learning_rate 1e-3 "${common[@]}"
run full --model_name_or_path "$out/base" "${instruct[@]}" "${common[@]}" \
  --max_steps "${FULL_STEPS:-500}" --learning_rate 3e-4
# LoRA as PEFT configures it for this base: adapters on every projection
# and on the token embedding (PEFT's lora.Embedding: each token gets r
# trainable numbers, as full fine-tuning moves its row), with ln_f trained
# whole (modules_to_save). With ln_f frozen the frozen tied head caps how
# sure an answer can be; with the embedding frozen the adapters stall near
# chance (docs/PERFORMANCE-LORA.md).
run lora --model_name_or_path "$out/base" "${instruct[@]}" "${common[@]}" \
  --max_steps "${LORA_STEPS:-500}" --use_lora --lora_r 64 --lora_alpha 128 \
  --lora_target_modules c_attn,c_proj,c_fc,wte --lora_modules_to_save ln_f \
  --learning_rate 1e-3
