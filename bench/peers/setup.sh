#!/usr/bin/env bash
# Installs the peers kiln-bench compares against (PyTorch, JAX) as CPU
# builds from PyPI into a virtual environment at bench/peers/.venv, plus
# safetensors, numpy and matplotlib for loading kiln's files and plotting,
# and transformers + tokenizers + peft for the Llama, tokenizer and LoRA
# adapter checks (tests/unit/LlamaTest.cpp, tests/tools/kiln-train-llama-
# transformers.test, tests/tools/kiln-train-lora-peft.test).
# Idempotent: an existing venv is reused and pip skips what is installed.
# Nothing in the build or the tests depends on it; kiln-bench skips peers
# whose venv is absent. Prints the versions and the venv's size at the end.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
python="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/python" ]]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
# Only PyPI is reachable: plain names, whatever wheels PyPI serves for this
# Python (torch's Linux x86-64 wheel from PyPI pulls the CUDA libraries too).
"$venv/bin/python" -m pip install --quiet torch jax jaxlib safetensors numpy matplotlib \
  transformers tokenizers peft

"$venv/bin/python" - <<'PY'
import sys, importlib
print("python", sys.version.split()[0])
for name in ["torch", "jax", "jaxlib", "safetensors", "numpy", "matplotlib",
             "transformers", "tokenizers", "peft"]:
    try:
        print(name, importlib.import_module(name).__version__)
    except Exception as e:  # a broken wheel should not hide the others
        print(name, "unavailable:", e)
PY
du -sh "$venv" | awk '{print "venv size", $1}'
