"""Regenerates this folder: a small BPE in the tokenizer.json layout of
SentencePiece models converted by Hugging Face (Llama 2, Mistral,
TinyLlama), trained by Hugging Face `tokenizers` (the version used is written
into cases.jsonl), and the ids that library gives for a set of strings, which
tests/unit/DataTokenizerTest.cpp compares with kiln's.

tokenizer.json has Llama 2's layout: a normalizer that puts "▁" first and
replaces spaces with it (Prepend + Replace), no pre-tokenizer, BPE over
characters with byte_fallback (<0x00>..<0xFF> are tokens 3..258) and
fuse_unk, <unk> <s> </s> as tokens 0-2, a post-processor that puts <s> first
and a decoder that undoes the normalizer. tokenizer-metaspace.json is the
same vocabulary in the newer layout: no normalizer and a Metaspace
pre-tokenizer (prepend_scheme "first", split false).

Run from this folder:  python3 generate.py /path/to/shared/data
(which holds wikitext-2/{valid,test}.txt and sst2/{train,dev}.tsv).
"""
import json
import os
import sys

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors, trainers

# tokenizer_cases.py, which the folders' generate.py share, is one folder up.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from tokenizer_cases import (WIKITEXT_CASES, data_cases, training_sentences,
                             wikitext, write_cases)

data = sys.argv[1]
extra = ("naïve café Привет мир 日本語テキスト x² ٣٤ 👋🏽 e\u0301 "
         "I'm don't 12345 3.14159")
corpus = training_sentences(data) + [extra] * 50
with open(wikitext(data, "valid"), encoding="utf-8") as f:
    corpus += f.read().splitlines()

# Trained on words, as SentencePiece trains: "▁" starts a word.
trainee = Tokenizer(models.BPE(unk_token="<unk>"))
trainee.pre_tokenizer = pre_tokenizers.Metaspace(
    replacement="▁", prepend_scheme="always", split=True)
trainee.train_from_iterator(corpus, trainers.BpeTrainer(
    vocab_size=1500, min_frequency=2, limit_alphabet=120,
    show_progress=False))
trained = json.loads(trainee.to_str())["model"]

# As in Llama 2: <unk> <s> </s>, then the 256 byte tokens, then the rest.
vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
for b in range(256):
    vocab["<0x%02X>" % b] = 3 + b
for token, _ in sorted(trained["vocab"].items(), key=lambda kv: kv[1]):
    vocab.setdefault(token, len(vocab))
merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" "))
          for m in trained["merges"]]


def build(layout):
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>",
                               fuse_unk=True, byte_fallback=True))
    if layout == "legacy":
        tok.normalizer = normalizers.Sequence([
            normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
        tok.pre_tokenizer = None
        tok.decoder = decoders.Sequence([
            decoders.Replace("▁", " "), decoders.ByteFallback(),
            decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    else:
        tok.normalizer = None
        tok.pre_tokenizer = pre_tokenizers.Metaspace(
            replacement="▁", prepend_scheme="first", split=False)
        tok.decoder = decoders.Sequence([
            decoders.Metaspace(replacement="▁", prepend_scheme="first",
                               split=False),
            decoders.ByteFallback(), decoders.Fuse()])
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True)
                            for t in ("<unk>", "<s>", "</s>")])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B:1", special_tokens=[("<s>", 1)])
    return tok


legacy, metaspace = build("legacy"), build("metaspace")
legacy.save("tokenizer.json")
metaspace.save("tokenizer-metaspace.json")
# What transformers' AutoTokenizer and kiln read for the special tokens.
with open("tokenizer_config.json", "w", encoding="utf-8") as f:
    json.dump({"tokenizer_class": "LlamaTokenizerFast", "bos_token": "<s>",
               "eos_token": "</s>", "unk_token": "<unk>"}, f, indent=2)
    f.write("\n")

cases = [
    "Hello world", "hello  world", "  leading", "trailing   ", " ", "",
    "a\n\nb", "tab\tseparated", "I'm don't they're", "abc123 456 3.14",
    "naïve café", "Привет мир", "日本語テキスト", "x² ٣٤٥٦ Ⅻ", "e\u0301t",
    "hi 👋🏽!", "no\u00a0break\u3000ideographic", "\u2581already marked",
    "ǅ rare ǅǅ letters ǅ", "<s>text</s>more", "a</s> b", "x<s>y",
    "</s>  two spaces", "<unk> is a token", "<s>",
] + WIKITEXT_CASES
# SST-2's whole dev split, and the start of WikiText-2's test split.
cases += data_cases(data)


# One JSON array a line: [text, ids, decoded] with tokenizer.json, then the
# same with tokenizer-metaspace.json (ids without special tokens, decoded
# keeping them); null stands for the text itself (decoded) or the first
# layout's ids. The first line says which library made them.
def both_layouts(text):
    row = [text]
    for tok in (legacy, metaspace):
        ids = tok.encode(text, add_special_tokens=False).ids
        decoded = tok.decode(ids, skip_special_tokens=False)
        row += [None if len(row) == 3 and ids == row[1] else ids,
                None if decoded == text else decoded]
    return row


write_cases(cases, both_layouts, bos=1)
print(len(cases), "cases, vocabulary", legacy.get_vocab_size())
