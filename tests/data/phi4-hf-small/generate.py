"""Regenerates this folder: a small byte-level BPE with Phi-4-mini's
tokenizer.json layout (microsoft/Phi-4-mini-instruct, model_type phi3, an
o200k-style vocabulary), trained by Hugging Face `tokenizers` (the version
used is written into cases.jsonl), and the ids that library gives for a set
of strings (cases.jsonl), which tests/unit/DataTokenizerTest.cpp compares
with kiln's.

Phi-4-mini's layout: no normalizer; a Sequence pre-tokenizer of a Split on
tiktoken's o200k regex (Isolated) and a ByteLevel without a regex (and with
trim_offsets, which changes offsets only); BPE without ignore_merges; special
tokens appended after the vocabulary, <|endoftext|> first; a ByteLevel
post-processor, so no BOS. The o200k regex differs from cl100k's (Llama 3's)
in its words: an optional run of upper- or titlecase letters then lowercase
ones (modifier and other letters and combining marks count as both), or an
upper-case run then lowercase ones, each with an optional contraction
attached in any case; no standalone contractions; and '/' may follow a run
of punctuation with the newlines.

The vocabulary is trained on a coarser split than o200k's (words of any
case, marks included, that may start with a newline), and on o200k's cases
repeated, so that it holds tokens across o200k's boundaries: a splitter that
splits less, or more, than o200k's then gives other ids for the hand-picked
cases. Trained on o200k's own split, no token crosses its boundaries, and a
cl100k splitter would have changed none of them.

Run from this folder:  python3 generate.py /path/to/shared/data
(which holds wikitext-2/{valid,test}.txt and sst2/{train,dev}.tsv).
"""
import json
import os
import sys

from tokenizers import Regex, Tokenizer, decoders, models
from tokenizers import pre_tokenizers, processors, trainers

# tokenizer_cases.py, which the folders' generate.py share, is one folder up.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from tokenizer_cases import (QWEN2_CASES, added_tokens_decoder, data_cases,
                             ids_row, training_sentences, wikitext,
                             write_cases)

# tiktoken's o200k_base pattern, as Phi-4-mini's tokenizer.json spells it.
O200K_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*"
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# <|endoftext|> first, then some of Phi-4-mini's chat tokens (which it has at
# 199999 and 200019-200022, <|assistant|> first).
SPECIAL = ["<|endoftext|>", "<|system|>", "<|end|>", "<|user|>",
           "<|assistant|>"]

data = sys.argv[1]

# The vocabulary's split: o200k's with its words case-blind and allowed to
# start with a newline, so never finer than o200k's.
TRAIN_PATTERN = (
    r"[^\p{L}\p{N}]?[\p{L}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# o200k's cases, each alone and after a space, repeated: their tokens then
# cross the boundaries a wrong splitter would move.
EXTRA = """naïve café Привет мир 日本語テキスト x² ٣٤ 👋🏽 e\u0301 I'm don't
THEY'RE We'Ve you'll he'd it's 12345 3.14159 नमस्ते हिन्दी שָׁלוֹם fooBAR
HTTPServer camelCaseWord XMLHttpRequest iPhone McDonald's ABCdef aBC NASA's
DON'T I'M they'Re \u01c5emal a\u01c5b \u01c8ubljana \u1f88 t\u02b0a A\u02b0
人\u3005 時\u3005X a\u02c6b 日本Xy x日本Y A\u0301B a\u0301B .\u0301a abc/
/path/to/file a/b//c ?/ ΑθήναΑθήνα МоскваMOSCOW ПРИВЕТмир ภาษาไทย ที่
العربية 한국어""".split()
EXTRA += [" " + text for text in EXTRA]
EXTRA += ["x;\n/y", "end.\n/path", "}\n//c", "?\r\n/", "a\nb", "x\r\nFoo"]


def lines(path):
    with open(path, encoding="utf-8") as f:
        yield from f


def corpus():
    yield from lines(wikitext(data, "valid"))
    yield from (text + "\n" for text in training_sentences(data))
    for _ in range(200):
        yield from EXTRA


tok = Tokenizer(models.BPE(ignore_merges=False))
byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False,
                                      trim_offsets=True, use_regex=False)
tok.pre_tokenizer = pre_tokenizers.Sequence([
    pre_tokenizers.Split(Regex(TRAIN_PATTERN), behavior="isolated",
                         invert=False),
    byte_level,
])
# The decoder and post-processor as tiktoken conversions write them: the
# ByteLevel defaults (add_prefix_space and use_regex true, which neither
# step uses to make or read ids), the post-processor without trim_offsets.
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(
    vocab_size=1500, min_frequency=2, show_progress=False,
    initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
tok.train_from_iterator(corpus(), trainer)
# As in Phi-4-mini, the special tokens come after the trained vocabulary.
tok.add_special_tokens(SPECIAL)
# Then Phi-4-mini's own split.
tok.pre_tokenizer = pre_tokenizers.Sequence([
    pre_tokenizers.Split(Regex(O200K_PATTERN), behavior="isolated",
                         invert=False),
    byte_level,
])
tok.post_processor = processors.ByteLevel(trim_offsets=False)
tok.save("tokenizer.json")
ids = {token: tok.token_to_id(token) for token in SPECIAL}
# What transformers' AutoTokenizer and kiln read: Phi-4-mini-instruct's
# tokenizer_config (without its chat template), keys sorted as transformers
# writes them.
with open("tokenizer_config.json", "w", encoding="utf-8") as f:
    json.dump({
        "add_bos_token": False,
        "add_eos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": added_tokens_decoder(ids),
        "bos_token": "<|endoftext|>",
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|endoftext|>",
        "model_max_length": 131072,
        "pad_token": "<|endoftext|>",
        "tokenizer_class": "GPT2Tokenizer",
        "unk_token": "<|endoftext|>",
    }, f, indent=2, ensure_ascii=False)
    f.write("\n")

# Where o200k's split differs from cl100k's.
O200K_CASES = [
    # Case transitions inside words: a lowercase run ends a word, an
    # uppercase run before lowercase letters starts one.
    "fooBAR", "HTTPServer", "camelCaseWord", "XMLHttpRequest", "iPhone",
    "McDonald", "ABCdef", "ABC def", "aBC", "getHTTPResponseCode",
    "PascalCase", "ALLCAPS", "X", "Xy", "xY", "XyZ", "snake_case_Word",
    " fooBar", ".fooBar", "_HTTPServer", "\nCamelCase",
    # Contractions attach to the word before them, in any case.
    "don't", "DON'T", "NASA's", "I'M", "they'Re", "it's'", "don'T",
    "can't've", "y'all", "rock'n'roll", "O'Neil's", "McDonald's",
    "iPhone's", "ABC's", "NASA'S", "abc'S'd", "'s", "'S", "''s", "'tis",
    "we'VE you'LL he'D", "it\u2019s", "x 'll", "(it's)",
    # A word, then a contraction after punctuation.
    "word.'s", "foo-'ll", "end!'re", "ok,'ve", "he said 'hello'",
    "word's.'s", "A.'M",
    # Titlecase letters (Lt): upper-case in the first class only.
    "\u01c5", "\u01c5emal", "\u01c8ubljana", "\u1f88", "a\u01c5b", "\u01c5A",
    "A\u01c5", "\u01c5\u01c8", "ab\u1f88cd",
    # Modifier letters (Lm): in both classes.
    "\u02b0", "t\u02b0a", "A\u02b0", "\u02b0A", "\u3005", "人\u3005",
    "時\u3005X", "\u02c6", "a\u02c6b", "A\u02c6", "\u02c6B",
    # Other letters (Lo), and scripts with combining vowel signs (M).
    "日本語", "עברית", "שָׁלוֹם", "العربية", "مرحبا بالعالم", "ภาษาไทย", "ที่",
    "हिन्दी", "नमस्ते", "नमस्ते दुनिया", "한국어", "カタカナ", "ひらがな",
    "中文English混合", "Ελληνικά", "ქართული",
    # Combining marks after letters, at the start, after a space or
    # punctuation.
    "e\u0301", " \u0301x", "\u0301", ".\u0301a", "A\u0301B", "a\u0301B",
    "\u0301\u0301", "x \u0301", "\u0301A", "1\u0301", "A\u0301",
    "ab\u0301cD\u0301e", "\u0301 ", "!\u0301",
    # Runs of other letters followed by upper-case ones.
    "日本X", "日本Xy", "X日本", "x日本Y", "日本XY", "日本xY", "Xy日本",
    # Slashes and newlines after punctuation.
    "abc/\nfoo", " /path/to/file", "a/b//c\n\n", "?/\r\n",
    "http://example.com/a/b", "./run.sh\n", "//\n", "a /\n", "/ \n",
    "...///\r\n\r\n", "x;/\n/\ny", "<a href=\"/x\">/</a>", ";\n/", "a.\n/b",
    "?\r\n/path", "}\n//comment", "x;\n/y",
    # A newline never starts a word.
    "a\nb", "\nfoo", "x\r\nFoo", "\r\nword", "\n\u0301",
    " NASA's GPT-OSS /path/to/file abc/\nfooBAR 123",
    # Digits, up to three a piece.
    "12345 3.14159 2024", "abc123def", "٣٤٥", "１２３ ½ ①", "1234567890",
    "v1.2.3", "ABC123def", "x²³", "Ⅻ", "0x1F", "2024-01-31",
    # Whitespace runs.
    "a  \n\n  b", "\t\tx", "end   ", "   ", "\n", " \n ", "a\r\n\r\n  b",
    "x \t y", "\n\n\n", " \t\n", "a \n\n", "  \tword",
    # Unusual spaces.
    "a\u00a0b", "\u00a0x", "a\u3000b", "a\u2028b", "x\u2029y", "a\u200bb",
    "\u2003em", "a\u0085b", "a \u00a0 b",
    # Emoji and their modifiers.
    "👍🏽", "👨\u200d👩\u200d👧", "🇯🇵", "❤\ufe0f", "a👍b", "#\ufe0f\u20e3",
    "hi 👋🏽!",
    # Greek and Cyrillic, upper and lower case.
    "ΑθήναΑθήνα", "МоскваMOSCOW", "ΑΘΗΝΑ", "Σίσυφος", "ПРИВЕТмир", "мирМИР",
    # Special tokens inside text.
    "hello<|endoftext|>world", "<|user|>\nhi<|end|>\n<|assistant|>",
    "<|system|>You are helpful.<|end|><|user|>Hi<|end|><|assistant|>",
    "<|im_start|>x",
    # A little of everything.
    "The U.S.A. isn't", "JSONParser.parseJSON(x)", "e.g. i.e.", "$100.00",
    "50%", "C++ & C#", "foo_bar BAZ_qux", "<html><body>", "tl;dr",
    "email@example.com", "Hello, World!",
]
# qwen2-hf-small's cases (its NFC ones are just more text here), then these.
cases = list(dict.fromkeys(QWEN2_CASES + O200K_CASES))
HAND_PICKED = len(cases)
# SST-2's whole dev split, and the start of WikiText-2's test split.
cases += data_cases(data)
# One JSON array a line: [text, ids without special tokens]; the first line
# says which library made them and the post-processor's first token (none).
write_cases(cases, ids_row(tok), bos=None, eos=ids["<|endoftext|>"])
print(len(cases), "cases,", HAND_PICKED, "hand-picked, vocabulary",
      tok.get_vocab_size(), "specials", ids)
