#!/usr/bin/env python3
"""Trains a GPT-2-style byte-level BPE on local text with Hugging Face
`tokenizers` (pip-installed when missing) and writes vocab.json + merges.txt,
the folder kiln-train's --tokenizer_name reads.

No pretrained tokenizer can be downloaded on the machines kiln is developed
on, and the 600-id tokenizer under tests/data is too small to learn from (an
SST-2 sentence is ~2.5x as many tokens with it as with an 8k vocabulary), so
workflows that train a base model first train its vocabulary here, as a
run_clm user training from scratch does.

  scripts/train_tokenizer.py --vocab_size 8192 --output_dir tok FILE...

A .tsv file contributes its "sentence" (or "content") column; a .jsonl file
the string fields of each record; any other file its lines.
"""
import argparse
import csv
import json
import os
import subprocess
import sys


def ensure_tokenizers():
    try:
        import tokenizers  # noqa: F401
    except ImportError:
        subprocess.check_call([sys.executable, "-m", "pip", "install",
                               "--quiet", "tokenizers"])


def texts(path):
    if path.endswith(".tsv"):
        with open(path, encoding="utf-8", newline="") as f:
            rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
            header = next(rows)
            names = [n for n in ("sentence", "content", "text") if n in header]
            if not names:
                sys.exit(f"{path}: no sentence/content/text column in the header")
            column = header.index(names[0])
            for row in rows:
                if column < len(row):
                    yield row[column]
    elif path.endswith(".jsonl"):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    record = json.loads(line)
                    yield " ".join(v for v in record.values()
                                   if isinstance(v, str))
    else:
        with open(path, encoding="utf-8") as f:
            yield from f


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--vocab_size", type=int, default=8192)
    parser.add_argument("--min_frequency", type=int, default=2)
    parser.add_argument("--output_dir", required=True)
    args = parser.parse_args()
    for path in args.files:
        if not os.path.isfile(path):
            sys.exit(f"{path}: no such file")
    ensure_tokenizers()
    from tokenizers import ByteLevelBPETokenizer

    def corpus():
        for path in args.files:
            yield from texts(path)

    tokenizer = ByteLevelBPETokenizer()
    tokenizer.train_from_iterator(corpus(), vocab_size=args.vocab_size,
                                  min_frequency=args.min_frequency,
                                  special_tokens=["<|endoftext|>"],
                                  show_progress=False)
    os.makedirs(args.output_dir, exist_ok=True)
    tokenizer.save_model(args.output_dir)
    print(f"{args.output_dir}: {tokenizer.get_vocab_size()} ids "
          f"(vocab.json, merges.txt)")


if __name__ == "__main__":
    main()
