"""Compares the Trainer log dicts two kiln-train runs printed on stdout, for
runs that should train alike (one process at batch N B against N processes
at B each): the same number of logs; each loss (printed to 4 digits) within
`--loss_tolerance`, each grad_norm, eval_loss and perplexity within
`--relative` of the other's, the learning rates, epochs, eval_accuracy and
eval_samples equal. Prints "N logs match" or each difference,
and exits 1 on any."""
import argparse
import ast
import sys


def logs(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{") and any(
                    f"'{key}'" in line for key in ("loss", "train_loss", "eval_loss")):
                out.append(ast.literal_eval(line))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("first")
    p.add_argument("second")
    p.add_argument("--loss_tolerance", type=float, default=1e-4)
    p.add_argument("--relative", type=float, default=1e-5)
    a = p.parse_args()
    first, second = logs(a.first), logs(a.second)
    problems = []
    if not first or len(first) != len(second):
        problems.append(f"{len(first)} logs vs {len(second)}")
    for i, (x, y) in enumerate(zip(first, second)):
        for key in ("loss", "train_loss"):
            if key in x and abs(x[key] - y.get(key, float("nan"))) > a.loss_tolerance:
                problems.append(f"log {i}: {key} {x[key]} vs {y.get(key)}")
        for key in ("grad_norm", "eval_loss", "perplexity"):
            if key in x:
                g, h = x[key], y.get(key, float("nan"))
                if not abs(g - h) <= a.relative * abs(g):
                    problems.append(f"log {i}: {key} {g} vs {h}")
        for key in ("learning_rate", "epoch", "eval_accuracy", "eval_samples"):
            if x.get(key) != y.get(key):
                problems.append(f"log {i}: {key} {x.get(key)} vs {y.get(key)}")
    for line in problems:
        print(line)
    if problems:
        sys.exit(1)
    print(f"{len(first)} logs match")


main()
