"""Regenerates this folder: a small byte-level BPE with Qwen2's
tokenizer.json layout (also Qwen2.5's and Qwen3's), trained by Hugging Face
`tokenizers` (the version used is written into cases.jsonl), and the ids that
library gives for a set of strings (cases.jsonl), which
tests/unit/DataTokenizerTest.cpp compares with kiln's.

Qwen2's layout: an NFC normalizer; a Sequence pre-tokenizer of a Split on
Qwen's regex (cl100k's, but one digit a piece: \\p{N} where Llama 3 has
\\p{N}{1,3}; Isolated) and a ByteLevel without a regex; BPE without
ignore_merges; special tokens appended after the vocabulary, <|endoftext|>
first; a ByteLevel post-processor, so no BOS. The vocabulary is trained on
cl100k's split, as Qwen's extends cl100k's.

Run from this folder:  python3 generate.py /path/to/shared/data
(which holds wikitext-2/{valid,test}.txt and sst2/{train,dev}.tsv).
"""
import json
import os
import sys

from tokenizers import Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors, trainers

# tokenizer_cases.py, which the folders' generate.py share, is one folder up.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from tokenizer_cases import (QWEN2_CASES, added_tokens_decoder, data_cases,
                             ids_row, training_files, write_cases)

QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# Trained on cl100k's split (Llama 3's: digits in threes), as Qwen's vocabulary
# extends cl100k's and so holds numbers of up to three digits that Qwen's own
# split never reaches; a tokenizer that kept cl100k's split would differ.
TRAIN_PATTERN = QWEN2_PATTERN.replace(r"\p{N}|", r"\p{N}{1,3}|")
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Qwen's ByteLevel steps: the same settings in the pre-tokenizer, the
# post-processor and the decoder.
BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False,
              "trim_offsets": False, "use_regex": False}

data = sys.argv[1]
EXTRA = ("naïve café Привет мир 日本語テキスト x² ٣٤ 👋🏽 e\u0301 "
         "I'm don't THEY'RE We'Ve you'll he'd it's 12345 3.14159\n" * 50)


def pre_tokenizer(pattern):
    return pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated",
                             invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False,
                                 use_regex=False),
    ])


tok = Tokenizer(models.BPE(ignore_merges=False))
tok.normalizer = normalizers.NFC()
tok.pre_tokenizer = pre_tokenizer(TRAIN_PATTERN)
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(
    vocab_size=1500, min_frequency=2, show_progress=False,
    initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
with training_files(data, EXTRA) as files:
    tok.train(files, trainer)
# As in Qwen2, the special tokens come after the trained vocabulary.
tok.add_special_tokens(SPECIAL)
# Then Qwen's own split, one digit a piece.
tok.pre_tokenizer = pre_tokenizer(QWEN2_PATTERN)
tok.post_processor = processors.ByteLevel(
    add_prefix_space=False, trim_offsets=False, use_regex=False)
# The rest of Qwen's settings, which the Python API does not reach: the
# decoder's flags and the model's empty affixes (as Qwen's file has them).
layout = json.loads(tok.to_str())
layout["decoder"] = BYTE_LEVEL
layout["model"].update(continuing_subword_prefix="", end_of_word_suffix="",
                       fuse_unk=False, byte_fallback=False,
                       ignore_merges=False, unk_token=None)
tok = Tokenizer.from_str(json.dumps(layout))
tok.save("tokenizer.json")
ids = {token: tok.token_to_id(token) for token in SPECIAL}
# What transformers' AutoTokenizer and kiln read: Qwen2's tokenizer_config,
# keys sorted as transformers writes them.
with open("tokenizer_config.json", "w", encoding="utf-8") as f:
    json.dump({
        "add_prefix_space": False,
        "added_tokens_decoder": added_tokens_decoder(ids),
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
        "bos_token": None,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|endoftext|>",
        "errors": "replace",
        "model_max_length": 32768,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }, f, indent=2, ensure_ascii=False)
    f.write("\n")

# The hand-picked strings (tokenizer_cases.py's QWEN2_CASES, which
# phi4-hf-small shares): Qwen's special tokens inside text, NFC, one digit a
# piece. Then SST-2's whole dev split, and the start of WikiText-2's test
# split.
cases = QWEN2_CASES + data_cases(data)
# One JSON array a line: [text, ids without special tokens]; the first line
# says which library made them and the post-processor's first token (none).
write_cases(cases, ids_row(tok), bos=None, eos=ids["<|endoftext|>"])
print(len(cases), "cases, vocabulary", tok.get_vocab_size(), "specials", ids)
