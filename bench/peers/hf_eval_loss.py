"""transformers' evaluation loss of a Hugging Face model folder on a text
file, as run_clm.py computes it: each line (with its line break) tokenized by
the folder's tokenizer (special tokens added), the lines concatenated in
groups of 1000 and cut into block_size blocks, the mean next-token loss.

  python hf_eval_loss.py MODEL_DIR TEXT_FILE BLOCK_SIZE [KILN_OUTPUT]

MODEL_DIR may be a PEFT adapter folder (adapter_config.json): peft's
AutoPeftModelForCausalLM loads it on the base its config names.

Prints {"eval_loss": ...}. With KILN_OUTPUT (kiln-train --do_eval's stdout),
also compares with kiln's eval_loss and exits 1 if they differ by more than
2e-6 (relative) — the check of tests/tools/kiln-train-*-transformers.test.
Folders that tokenize and compute alike agree to about 1e-7 (f32 sums in
another order); 1e-4 let a Mistral folder whose ids differed from
AutoTokenizer's in a few tokens pass at 6e-6 (2026-12-05).
"""
import ast
import json
import os
import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def blocks(tokenizer, path, block_size):
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines(keepends=True)
    ids = []
    for start in range(0, len(lines), 1000):
        group = []
        for line in lines[start:start + 1000]:
            group += tokenizer(line)["input_ids"]
        kept = len(group) // block_size * block_size
        ids += group[:kept]
    return torch.tensor(ids).view(-1, block_size)


def main():
    model_dir, text, block_size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tokenizer_dir = model_dir
    if os.path.exists(os.path.join(model_dir, "adapter_config.json")):
        from peft import AutoPeftModelForCausalLM
        model = AutoPeftModelForCausalLM.from_pretrained(model_dir).eval()
        # The base's folder has the config.json AutoTokenizer goes by.
        tokenizer_dir = model.peft_config["default"].base_model_name_or_path
    else:
        model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    data = blocks(tokenizer, text, block_size)
    with torch.no_grad():
        loss = model(data, labels=data).loss.item()
    print(json.dumps({"eval_loss": loss, "blocks": data.shape[0]}))
    if len(sys.argv) > 4:
        with open(sys.argv[4]) as f:
            dicts = [ast.literal_eval(line) for line in f
                     if line.startswith("{'eval_loss'")]
        kiln = dicts[-1]["eval_loss"]
        print(f"kiln eval_loss {kiln}, transformers {loss}")
        if abs(kiln - loss) > 2e-6 * abs(loss):
            sys.exit(1)


if __name__ == "__main__":
    main()
