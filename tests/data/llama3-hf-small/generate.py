"""Regenerates this folder: a small byte-level BPE with Llama 3's
tokenizer.json layout, trained by Hugging Face `tokenizers` (the version used
is written into cases.jsonl), and the ids that library gives for a set of
strings (cases.jsonl), which tests/unit/DataTokenizerTest.cpp compares with kiln's.

Llama 3's layout: no normalizer; a Sequence pre-tokenizer of a Split on
tiktoken's cl100k regex (Isolated) and a ByteLevel without a regex; BPE with
ignore_merges; special tokens appended after the vocabulary; a post-processor
that puts <|begin_of_text|> first.

Run from this folder:  python3 generate.py /path/to/shared/data
(which holds wikitext-2/{valid,test}.txt and sst2/{train,dev}.tsv).
"""
import json
import os
import sys

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from tokenizers import processors, trainers

# tokenizer_cases.py, which the folders' generate.py share, is one folder up.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from tokenizer_cases import (BYTE_LEVEL_CASES, WIKITEXT_CASES, data_cases,
                             ids_row, training_files, write_cases)

LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIAL = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
           "<|end_header_id|>", "<|eot_id|>"]

data = sys.argv[1]
EXTRA = ("naïve café Привет мир 日本語テキスト x² ٣٤ 👋🏽 e\u0301 "
         "I'm don't THEY'RE We'Ve you'll he'd it's 12345 3.14159\n" * 50)

tok = Tokenizer(models.BPE(ignore_merges=True))
tok.pre_tokenizer = pre_tokenizers.Sequence([
    pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated",
                         invert=False),
    pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True,
                             use_regex=False),
])
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(
    vocab_size=1500, min_frequency=2, show_progress=False,
    initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
with training_files(data, EXTRA) as files:
    tok.train(files, trainer)
# As in Llama 3, the special tokens come after the trained vocabulary.
tok.add_special_tokens(SPECIAL)
bos = tok.token_to_id("<|begin_of_text|>")
tok.post_processor = processors.Sequence([
    processors.ByteLevel(trim_offsets=False),
    processors.TemplateProcessing(
        single="<|begin_of_text|> $A",
        pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
        special_tokens=[("<|begin_of_text|>", bos)]),
])
tok.save("tokenizer.json")
# What transformers' AutoTokenizer and kiln read for the special tokens.
with open("tokenizer_config.json", "w", encoding="utf-8") as f:
    json.dump({"tokenizer_class": "PreTrainedTokenizerFast",
               "bos_token": "<|begin_of_text|>",
               "eos_token": "<|end_of_text|>"}, f, indent=2)
    f.write("\n")

cases = BYTE_LEVEL_CASES + [
    "<|begin_of_text|>text<|eot_id|>more<|end_of_text|>",
    "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
] + WIKITEXT_CASES
# SST-2's whole dev split, and the start of WikiText-2's test split.
cases += data_cases(data)
# One JSON array a line: [text, ids without special tokens]; the first line
# says which library made them and the post-processor's first token.
write_cases(cases, ids_row(tok), bos=bos)
print(len(cases), "cases, vocabulary", tok.get_vocab_size(), "bos", bos)
