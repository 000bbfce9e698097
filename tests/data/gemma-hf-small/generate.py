"""Regenerates this folder: a small BPE in the tokenizer.json layouts
Hugging Face writes for Gemma's SentencePiece models, and the ids that the
`tokenizers` library and transformers' AutoTokenizer give for a set of
strings, which tests/unit/DataSentencePieceTest.cpp compares with kiln's.

The vocabulary and merges are ../llama2-hf-small's (trained on SST-2 and
WikiText-2 words), renumbered as Gemma numbers its ids: <pad> <eos> <bos>
<unk> <mask>, then two chat tokens (<start_of_turn> <end_of_turn>), the 256
byte tokens <0x00>..<0xFF>, then the trained tokens.

tokenizer.json has Gemma's layout: a Replace(" " -> "▁") normalizer and
nothing put first (no Prepend), no pre-tokenizer, BPE over characters with
byte_fallback and fuse_unk, a post-processor that puts <bos> first and a
decoder that undoes the normalizer without dropping a first space.
tokenizer-split.json is the same with the Split(" ", MergedWithPrevious)
pre-tokenizer of Gemma 3's files and of transformers 5's GemmaTokenizer,
which splits nothing (the normalizer has replaced every space).

Run from this folder, with a Python that has tokenizers and (to check the
ids AutoTokenizer gives) transformers:  python3 generate.py
"""
import json
import os
import shutil
import sys
import tempfile

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors

# tokenizer_cases.py, which the folders' generate.py share, is one folder up.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from tokenizer_cases import write_cases

SPECIAL = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>",
           "<end_of_turn>"]

with open("../llama2-hf-small/tokenizer.json", encoding="utf-8") as f:
    llama = json.load(f)["model"]
vocab = {token: i for i, token in enumerate(SPECIAL)}
for b in range(256):
    vocab["<0x%02X>" % b] = len(vocab)
for token, _ in sorted(llama["vocab"].items(), key=lambda kv: kv[1]):
    if token not in ("<unk>", "<s>", "</s>"):
        vocab.setdefault(token, len(vocab))
merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" "))
          for m in llama["merges"]]


def build(split):
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>",
                               fuse_unk=True, byte_fallback=True))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.pre_tokenizer = (pre_tokenizers.Split(" ", "merged_with_previous")
                         if split else None)
    tok.decoder = decoders.Sequence([
        decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True)
                            for t in SPECIAL])
    tok.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A <bos> $B:1",
        special_tokens=[("<bos>", 2)])
    return tok


plain, split = build(False), build(True)
plain.save("tokenizer.json")
split.save("tokenizer-split.json")
with open("tokenizer_config.json", "w", encoding="utf-8") as f:
    json.dump({"tokenizer_class": "GemmaTokenizer", "bos_token": "<bos>",
               "eos_token": "<eos>", "pad_token": "<pad>",
               "unk_token": "<unk>", "add_bos_token": True}, f, indent=2)
    f.write("\n")

# The texts of ../llama2-hf-small's cases, and Gemma's special tokens.
with open("../llama2-hf-small/cases.jsonl", encoding="utf-8") as f:
    next(f)
    cases = [json.loads(line)[0] for line in f]
cases += ["<bos>text<eos>more", "<start_of_turn>user\nhi<end_of_turn>\n",
          " <eos>  two spaces", "<pad><mask>"]

# What transformers' AutoTokenizer makes of the folder (with a Gemma
# config.json beside it): GemmaTokenizer, whose ids must be the files'.
auto, transformers_version = None, None
try:
    import transformers
    folder = tempfile.mkdtemp()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(name, folder)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump({"model_type": "gemma"}, f)
    auto = transformers.AutoTokenizer.from_pretrained(folder)
    transformers_version = transformers.__version__
    shutil.rmtree(folder)
except ImportError:
    pass



# One JSON array a line: [text, ids, decoded] (ids without special tokens,
# decoded keeping them; null for the text itself). The first line says which
# libraries made them.
def row(text):
    ids = plain.encode(text, add_special_tokens=False).ids
    assert split.encode(text, add_special_tokens=False).ids == ids, text
    if auto is not None:
        assert auto(text, add_special_tokens=False)["input_ids"] == ids, text
        assert auto(text)["input_ids"] == [2] + ids, text
    decoded = plain.decode(ids, skip_special_tokens=False)
    return [text, ids, None if decoded == text else decoded]


write_cases(cases, row, transformers=transformers_version,
            auto_tokenizer=type(auto).__name__ if auto else None, bos=2, eos=1)
print(len(cases), "cases, vocabulary", plain.get_vocab_size(),
      "AutoTokenizer:", type(auto).__name__ if auto else None)
