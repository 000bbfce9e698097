"""Regenerates this folder: a small GPT-2-style byte-level BPE trained by
Hugging Face `tokenizers` (pip install tokenizers; the version used is written
into cases.tsv), and the ids that library gives for a set of strings, which
tests/unit/DataTokenizerTest.cpp compares with kiln's tokenizer.

Run from this folder:  python3 generate.py /path/to/wikitext-2/valid.txt
"""
import sys
import tokenizers
from tokenizers import ByteLevelBPETokenizer

corpus = sys.argv[1]
extra = "extra-corpus.txt"
with open(extra, "w", encoding="utf-8") as f:
    f.write("naïve café Привет мир 日本語テキスト x² ٣٤ 👋🏽 e\u0301 "
            "I'm don't they're we've you'll he'd it's\n" * 50)
tok = ByteLevelBPETokenizer()
tok.train([corpus, extra], vocab_size=600, min_frequency=2,
          special_tokens=["<|endoftext|>"])
tok.save_model(".")

cases = [
    "Hello world", "hello  world", "  leading", "trailing   ", "a\n\nb",
    "a\n\n", "tab\tseparated", "I'm don't they're we've you'll he'd it's",
    "IT'S ''s", "abc123 456 3.14", "wow!!! ?!", "x=(y+1);", "naïve café",
    "Привет мир", "日本語テキスト", "x² ٣٤ Ⅻ", "e\u0301t", "hi 👋🏽!",
    "no\u00a0break\u3000ideographic", "line\u2028separator",
    "text<|endoftext|>more<|endoftext|>", " = Valkyria Chronicles III = \n",
    "The game 's battle system , the <unk> , is carried over .\n",
]
with open(sys.argv[1].replace("valid.txt", "test.txt"), encoding="utf-8") as f:
    lines = [line for line in f if 40 < len(line) < 400][:40]
cases += lines
with open("cases.tsv", "w", encoding="utf-8") as f:
    f.write(f"# tokenizers {tokenizers.__version__}: hex(utf-8 text) TAB ids\n")
    for text in cases:
        ids = tok.encode(text).ids
        f.write(text.encode("utf-8").hex() + "\t" + " ".join(map(str, ids)) + "\n")
