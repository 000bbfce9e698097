"""Regenerates this folder: a small byte-level BPE with Llama 3's
tokenizer.json layout, trained by Hugging Face `tokenizers` (the version used
is written into cases.tsv), and the ids that library gives for a set of
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

import tokenizers
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from tokenizers import processors, trainers

LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIAL = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
           "<|end_header_id|>", "<|eot_id|>"]

data = sys.argv[1]
wiki = os.path.join(data, "wikitext-2")
sst2 = os.path.join(data, "sst2")


def sentences(path):
    with open(path, encoding="utf-8") as f:
        next(f)  # label TAB content
        return [line.rstrip("\n").split("\t", 1)[1] for line in f]


extra = "extra-corpus.txt"
with open(extra, "w", encoding="utf-8") as f:
    f.write("naïve café Привет мир 日本語テキスト x² ٣٤ 👋🏽 e\u0301 "
            "I'm don't THEY'RE We'Ve you'll he'd it's 12345 3.14159\n" * 50)
train_sst2 = "sst2-train.txt"
with open(train_sst2, "w", encoding="utf-8") as f:
    f.write("\n".join(sentences(os.path.join(sst2, "train.tsv"))[:20000]))

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
tok.train([os.path.join(wiki, "valid.txt"), train_sst2, extra], trainer)
os.remove(extra)
os.remove(train_sst2)
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

cases = [
    "Hello world", "hello  world", "  leading", "trailing   ", "a\n\nb",
    "a\n\n", "a \n b", "x  \n\n  y", "\r\n\r\nz", "tab\tseparated",
    "I'm don't they're we've you'll he'd it's", "IT'S ''s 'LL 'Ve",
    "abc123 456 3.14 1234567", "wow!!! ?!", "x=(y+1);\n", "(hello) 'quoted'",
    "naïve café", "Привет мир", "日本語テキスト", "x² ٣٤٥٦ Ⅻ", "e\u0301t",
    "hi 👋🏽!", "no\u00a0break\u3000ideographic", "line\u2028separator",
    "<|begin_of_text|>text<|eot_id|>more<|end_of_text|>",
    "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
    " = Valkyria Chronicles III = \n",
    "The game 's battle system , the <unk> , is carried over .\n",
]
# SST-2's whole dev split, and the start of WikiText-2's test split.
cases += sentences(os.path.join(sst2, "dev.tsv"))
with open(os.path.join(wiki, "test.txt"), encoding="utf-8") as f:
    cases += [line for line in f if line.strip()][:100]
# One JSON array a line: [text, ids without special tokens]; the first line
# says which library made them and the post-processor's first token.
with open("cases.jsonl", "w", encoding="utf-8") as f:
    f.write(json.dumps({"tokenizers": tokenizers.__version__, "bos": bos,
                        "cases": len(cases)}) + "\n")
    for text in cases:
        ids = tok.encode(text, add_special_tokens=False).ids
        f.write(json.dumps([text, ids], ensure_ascii=False, separators=(",", ":")) + "\n")
print(len(cases), "cases, vocabulary", tok.get_vocab_size(), "bos", bos)
