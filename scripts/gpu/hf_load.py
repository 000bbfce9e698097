#!/usr/bin/env python3
"""Loads a model folder kiln-train wrote into transformers' GPT2LMHeadModel
and checks it is the model kiln trained.

  hf_load.py MODEL_DIR DEV_TSV KILN_LOG --block_size 128 [--json OUT]

Passes when from_pretrained reports no missing, unexpected or mismatched
weights, and transformers' mean next-token loss on the validation data
matches the eval_loss kiln-train printed (KILN_LOG) within 1e-4 relative.
The data are rebuilt as kiln-train builds them for `--dataset sst2` with
the byte-level tokenizer (docs/DATA.md): the TSV's text column, each
sentence's UTF-8 bytes, concatenated 1,000 examples at a time (run_clm's
group_texts) and cut into blocks, the remainder of each group dropped.
"""
import argparse
import ast
import json
import math
import sys


def sst2_blocks(path, block_size):
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    header = lines[0].rstrip(b"\r").split(b"\t")
    column = next(header.index(name) for name in (b"sentence", b"content", b"text")
                  if name in header)
    texts = [line.rstrip(b"\r").split(b"\t")[column] for line in lines[1:] if line.strip()]
    blocks = []
    for start in range(0, len(texts), 1000):
        ids = list(b"".join(texts[start:start + 1000]))
        usable = len(ids) // block_size * block_size
        blocks += [ids[i:i + block_size] for i in range(0, usable, block_size)]
    return blocks


def kiln_eval_loss(log_path):
    for line in open(log_path, errors="replace"):
        if line.startswith("{'eval_loss'"):
            return ast.literal_eval(line.strip())["eval_loss"]
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir")
    parser.add_argument("dev_tsv")
    parser.add_argument("kiln_log")
    parser.add_argument("--block_size", type=int, default=128)
    parser.add_argument("--json")
    args = parser.parse_args()

    import torch
    from transformers import GPT2LMHeadModel

    model, info = GPT2LMHeadModel.from_pretrained(args.model_dir, output_loading_info=True)
    problems = {k: v for k, v in info.items() if v}
    model.eval()
    blocks = sst2_blocks(args.dev_tsv, args.block_size)
    total, rows = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(blocks), 32):
            ids = torch.tensor(blocks[i:i + 32], dtype=torch.long)
            total += model(input_ids=ids, labels=ids).loss.item() * len(ids)
            rows += len(ids)
    hf_loss = total / rows if rows else float("nan")
    kiln_loss = kiln_eval_loss(args.kiln_log)
    rel = abs(hf_loss - kiln_loss) / abs(kiln_loss) if kiln_loss else float("inf")
    ok = not problems and kiln_loss is not None and math.isfinite(hf_loss) and rel <= 1e-4
    result = {"loading_problems": {k: list(map(str, v)) for k, v in problems.items()},
              "blocks": rows, "transformers_eval_loss": hf_loss,
              "kiln_eval_loss": kiln_loss, "relative_difference": rel, "ok": ok}
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
