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

import tokenizers
from tokenizers import Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors, trainers

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
wiki = os.path.join(data, "wikitext-2")
sst2 = os.path.join(data, "sst2")


def sentences(path):
    with open(path, encoding="utf-8") as f:
        next(f)  # label TAB content
        return [line.rstrip("\n").split("\t", 1)[1] for line in f]


def pre_tokenizer(pattern):
    return pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated",
                             invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False,
                                 use_regex=False),
    ])


extra = "extra-corpus.txt"
with open(extra, "w", encoding="utf-8") as f:
    f.write("naïve café Привет мир 日本語テキスト x² ٣٤ 👋🏽 e\u0301 "
            "I'm don't THEY'RE We'Ve you'll he'd it's 12345 3.14159\n" * 50)
train_sst2 = "sst2-train.txt"
with open(train_sst2, "w", encoding="utf-8") as f:
    f.write("\n".join(sentences(os.path.join(sst2, "train.tsv"))[:20000]))

tok = Tokenizer(models.BPE(ignore_merges=False))
tok.normalizer = normalizers.NFC()
tok.pre_tokenizer = pre_tokenizer(TRAIN_PATTERN)
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(
    vocab_size=1500, min_frequency=2, show_progress=False,
    initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
tok.train([os.path.join(wiki, "valid.txt"), train_sst2, extra], trainer)
os.remove(extra)
os.remove(train_sst2)
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
        "added_tokens_decoder": {
            str(ids[token]): {"content": token, "lstrip": False,
                              "normalized": False, "rstrip": False,
                              "single_word": False, "special": True}
            for token in SPECIAL},
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

cases = [
    "Hello world", "hello  world", "  leading", "trailing   ", "a\n\nb",
    "a\n\n", "a \n b", "x  \n\n  y", "\r\n\r\nz", "tab\tseparated",
    "I'm don't they're we've you'll he'd it's", "IT'S ''s 'LL 'Ve",
    "abc123 456 3.14 1234567", "wow!!! ?!", "x=(y+1);\n", "(hello) 'quoted'",
    "naïve café", "Привет мир", "日本語テキスト", "x² ٣٤٥٦ Ⅻ", "e\u0301t",
    "hi 👋🏽!", "no\u00a0break\u3000ideographic", "line\u2028separator",
    # Qwen's special tokens inside text, and Llama 3's, which are text here.
    "hello<|endoftext|>world",
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    "<|begin_of_text|>text<|eot_id|>",
    # NFC: composition, singletons, Hangul jamo, reordering of marks.
    "e\u0301", "A\u030a", "\u1100\u1161\u11a8", "\u212b", "\u2126", "ﬁ",
    "x\u0323\u0307", "x\u0307\u0323", "s\u0307\u0323", "cafe\u0301",
    "\u0301start", "\uf900",
    # One digit a piece, in any script.
    "12345 3.14159 2024", "٣٤٥", "abc123def", "１２３ ½ ①",
    " = Valkyria Chronicles III = \n",
    "The game 's battle system , the <unk> , is carried over .\n",
]
# SST-2's whole dev split, and the start of WikiText-2's test split.
cases += sentences(os.path.join(sst2, "dev.tsv"))
with open(os.path.join(wiki, "test.txt"), encoding="utf-8") as f:
    cases += [line for line in f if line.strip()][:100]
# One JSON array a line: [text, ids without special tokens]; the first line
# says which library made them and the post-processor's first token (none).
with open("cases.jsonl", "w", encoding="utf-8") as f:
    f.write(json.dumps({"tokenizers": tokenizers.__version__, "bos": None,
                        "eos": ids["<|endoftext|>"],
                        "cases": len(cases)}) + "\n")
    for text in cases:
        ids_ = tok.encode(text, add_special_tokens=False).ids
        f.write(json.dumps([text, ids_], ensure_ascii=False,
                           separators=(",", ":")) + "\n")
print(len(cases), "cases, vocabulary", tok.get_vocab_size(), "specials", ids)
