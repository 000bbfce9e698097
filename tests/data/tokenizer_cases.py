"""What the generate.py scripts of tests/data/*-hf-small share: hand-picked
strings to tokenize, the strings and training text they read from the shared
data folder (their argument, which holds wikitext-2/{valid,test}.txt and
sst2/{train,dev}.tsv), and the cases.jsonl writer. Each script keeps its own
choices (its split, layout, training text and extra strings).
"""
import contextlib
import json
import os

import tokenizers

# Hand-picked strings of the byte-level folders (llama3, qwen2, phi4):
# spaces and newlines, contractions, digits and punctuation, other scripts,
# combining marks, emoji and unusual spaces.
BYTE_LEVEL_CASES = [
    "Hello world", "hello  world", "  leading", "trailing   ", "a\n\nb",
    "a\n\n", "a \n b", "x  \n\n  y", "\r\n\r\nz", "tab\tseparated",
    "I'm don't they're we've you'll he'd it's", "IT'S ''s 'LL 'Ve",
    "abc123 456 3.14 1234567", "wow!!! ?!", "x=(y+1);\n", "(hello) 'quoted'",
    "naïve café", "Привет мир", "日本語テキスト", "x² ٣٤٥٦ Ⅻ", "e\u0301t",
    "hi 👋🏽!", "no\u00a0break\u3000ideographic", "line\u2028separator",
]

# Two WikiText-2 lines as its files have them, which end every folder's
# hand-picked strings.
WIKITEXT_CASES = [
    " = Valkyria Chronicles III = \n",
    "The game 's battle system , the <unk> , is carried over .\n",
]

# qwen2-hf-small's hand-picked strings, which phi4-hf-small tokenizes too.
QWEN2_CASES = BYTE_LEVEL_CASES + [
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
] + WIKITEXT_CASES


def sentences(data, split):
    """The sentences of SST-2's split ("train" or "dev") in the data folder."""
    with open(os.path.join(data, "sst2", split + ".tsv"),
              encoding="utf-8") as f:
        next(f)  # label TAB content
        return [line.rstrip("\n").split("\t", 1)[1] for line in f]


def training_sentences(data):
    """The SST-2 sentences every vocabulary here is trained on (the first
    20,000 of its train split)."""
    return sentences(data, "train")[:20000]


def wikitext(data, split):
    """The path of WikiText-2's split ("valid" or "test")."""
    return os.path.join(data, "wikitext-2", split + ".txt")


def data_cases(data):
    """The strings that follow the hand-picked ones: SST-2's whole dev split
    and the first 100 non-empty lines of WikiText-2's test split."""
    cases = sentences(data, "dev")
    with open(wikitext(data, "test"), encoding="utf-8") as f:
        cases += [line for line in f if line.strip()][:100]
    return cases


@contextlib.contextmanager
def training_files(data, extra):
    """The files Tokenizer.train reads: WikiText-2's valid split, the
    training sentences (a line each) and the text extra, the last two
    written into this folder for the while and removed afterwards."""
    written = {"sst2-train.txt": "\n".join(training_sentences(data)),
               "extra-corpus.txt": extra}
    try:
        for name, text in written.items():
            with open(name, "w", encoding="utf-8") as f:
                f.write(text)
        yield [wikitext(data, "valid")] + list(written)
    finally:
        for name in written:
            if os.path.exists(name):
                os.remove(name)


def added_tokens_decoder(ids):
    """tokenizer_config.json's added_tokens_decoder as transformers writes it
    for special tokens ({token: id})."""
    return {str(i): {"content": token, "lstrip": False, "normalized": False,
                     "rstrip": False, "single_word": False, "special": True}
            for token, i in ids.items()}


def ids_row(tok):
    """The row of write_cases that the byte-level folders write:
    [text, ids without special tokens]."""
    return lambda text: [text, tok.encode(text, add_special_tokens=False).ids]


def write_cases(cases, row, **header):
    """Writes cases.jsonl: a first line {"tokenizers": version, **header,
    "cases": count} (header: bos, eos, ... in the order given), then row(text)
    for each case, one compact JSON array a line."""
    with open("cases.jsonl", "w", encoding="utf-8") as f:
        f.write(json.dumps({"tokenizers": tokenizers.__version__, **header,
                            "cases": len(cases)}) + "\n")
        for text in cases:
            f.write(json.dumps(row(text), ensure_ascii=False,
                               separators=(",", ":")) + "\n")
