"""What the peers share: kiln-bench's flags, the shared input files (weights
as safetensors by Hugging Face GPT-2 name, batches as an int64 .npy of
[steps, batch, seq]), the learning-rate schedule and weight-decay rule of
kiln's AdamW setup, and writing the result JSON that kiln-bench reads."""
import argparse
import json
import math
import os
import resource
import time

import numpy as np
from safetensors.numpy import load_file


def parse_args(extra=None):
    p = argparse.ArgumentParser()
    for name in ["n_layer", "n_embd", "n_head", "vocab", "seq", "warmup_steps", "steps", "seed"]:
        p.add_argument("--" + name, type=int, required=True)
    for name in ["lr", "weight_decay", "dropout", "max_grad_norm"]:
        p.add_argument("--" + name, type=float, required=True)
    for name in ["weights", "batches", "result"]:
        p.add_argument("--" + name, required=True)
    # Where the peer runs: kiln-bench --backend cuda passes cuda, so every
    # system of a run uses the same GPU.
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    # bf16 / fp16: mixed precision (matrix products on 16-bit inputs, f32
    # weights and optimizer; fp16 with dynamic loss scaling, PyTorch's
    # GradScaler defaults), as kiln-bench --precision asks of every system.
    p.add_argument("--precision", choices=["f32", "bf16", "fp16"], default="f32")
    # Read the loss back every N steps, as the Trainer logs (kiln-bench's
    # BenchConfig::logging_steps): 1 syncs every step.
    p.add_argument("--logging_steps", type=int, default=1)
    if extra:
        extra(p)
    return p.parse_args()


def load_inputs(args):
    """→ (weights: name → float32 array, batches: int64 [steps, batch, seq])."""
    weights = {k: v.astype(np.float32) for k, v in load_file(args.weights).items()}
    batches = np.load(args.batches)
    assert batches.dtype == np.int64 and batches.ndim == 3 and batches.shape[2] == args.seq
    return weights, batches[: args.steps]


def lr_at(args, step):
    """Hugging Face's linear schedule with warmup (kiln's LambdaLR): the
    learning rate used by optimizer step `step`, counted from 0."""
    w, total = args.warmup_steps, args.steps
    if step < w:
        return args.lr * step / max(1, w)
    return args.lr * max(0.0, (total - step) / max(1, total - w))


def decays(name):
    """Hugging Face's Trainer rule, as kiln's bias_and_norm_names: no weight
    decay on biases and LayerNorm weights."""
    is_norm = name.split(".")[-2].startswith("ln_")
    return not (name.endswith(".bias") or is_norm)


class StepTimer:
    """Step times and losses when the loss is read back every
    `logging_steps` steps (kiln-bench's --logging_steps, the same rule as
    its kiln worker): step 0's at once (its time holds the compile), then
    every N steps and at the last; each window's wall time, from the last
    read to this one, is split evenly over its steps. `read` turns a loss
    handle into a float (a host sync)."""

    def __init__(self, logging_steps, read):
        self.every, self.read = logging_steps, read
        self.losses, self.step_ms, self.unread = [], [], []
        self.start = time.perf_counter()

    def done(self, step, loss, steps):
        self.unread.append(loss)
        if step % self.every != 0 and step + 1 != steps:
            return
        self.losses += [self.read(x) for x in self.unread]
        now = time.perf_counter()
        each = 1e3 * (now - self.start) / len(self.unread)
        self.step_ms += [each] * len(self.unread)
        self.unread, self.start = [], now


def device_memory_limit():
    """The device memory this run may allocate, in bytes, or None:
    kiln-bench sets KILN_DEVICE_MEMORY_LIMIT (a plain byte count) for every
    system of a largest-batch search on a GPU, as kiln itself reads it."""
    text = os.environ.get("KILN_DEVICE_MEMORY_LIMIT", "")
    return int(text) if text.isdigit() and int(text) > 0 else None


def finite_or_none(value):
    """value with every NaN or inf float as None: json.dump would write
    them as NaN / Infinity, which is not JSON and which kiln-bench (and most
    readers) refuse; null is what kiln-bench's own writer uses."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


def dump_result(args, out):
    with open(args.result, "w") as f:
        json.dump(finite_or_none(out), f, indent=2, allow_nan=False)


def write_over_budget(args, batch, note):
    """The result of a run whose device memory ran out (under the cap or
    the GPU's own): the batch does not fit."""
    dump_result(args, dict(status="over budget", batch=int(batch), note=note[-2000:]))


def write_result(args, batch, losses, step_ms, **extra):
    """A finished run; "diverged" (as kiln's worker says it) when a loss is
    NaN or inf, with the first such step (from 1)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    losses = [float(x) for x in losses]
    out = dict(status="ok", batch=int(batch), losses=losses,
               step_ms=step_ms, peak_rss_mib_self=peak, **extra)
    bad = next((i for i, x in enumerate(losses) if not math.isfinite(x)), None)
    if bad is not None:
        what = "NaN" if math.isnan(losses[bad]) else "+inf" if losses[bad] > 0 else "-inf"
        out.update(status="diverged", first_nonfinite_step=bad + 1,
                   note=f"the loss is first non-finite ({what}) at step {bad + 1} of {len(losses)}")
    dump_result(args, out)
