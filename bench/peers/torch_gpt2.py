"""kiln-bench's PyTorch peer: the GPT-2 of kiln's frontends/nn (pre-LN blocks,
GELU tanh approximation, tied lm_head, causal attention as a masked softmax,
Conv1D weights [in, out]) in PyTorch, trained with torch.optim.AdamW, gradient
clipping and the linear warmup/decay schedule, from kiln's weights file on
kiln's batches, in eager mode or with torch.compile (inductor) applied to the
model (forward and backward; the optimizer step stays eager)."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

import common
import torch_loop


class Conv1D(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.empty(n_out))

    def forward(self, x):
        return x @ self.weight + self.bias


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        c = a.n_embd
        self.n_head = a.n_head
        self.ln_1, self.ln_2 = nn.LayerNorm(c), nn.LayerNorm(c)
        self.attn = nn.Module()
        self.attn.c_attn, self.attn.c_proj = Conv1D(c, 3 * c), Conv1D(c, c)
        self.mlp = nn.Module()
        self.mlp.c_fc, self.mlp.c_proj = Conv1D(c, 4 * c), Conv1D(4 * c, c)
        self.drop = nn.Dropout(a.dropout)
        self.register_buffer("mask", torch.tril(torch.ones(a.seq, a.seq, dtype=torch.bool)))

    def attention(self, x):
        b, t, c = x.shape
        q, k, v = self.attn.c_attn(x).split(c, dim=2)
        heads = lambda y: y.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.n_head)
        att = att.masked_fill(~self.mask[:t, :t], float("-inf")).softmax(-1)
        y = (self.drop(att) @ v).transpose(1, 2).reshape(b, t, c)
        return self.drop(self.attn.c_proj(y))

    def forward(self, x):
        x = x + self.attention(self.ln_1(x))
        h = F.gelu(self.mlp.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.drop(self.mlp.c_proj(h))


class GPT2(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.transformer = nn.Module()
        self.transformer.wte = nn.Embedding(a.vocab, a.n_embd)
        self.transformer.wpe = nn.Embedding(a.seq, a.n_embd)
        self.transformer.h = nn.ModuleList(Block(a) for _ in range(a.n_layer))
        self.transformer.ln_f = nn.LayerNorm(a.n_embd)
        self.drop = nn.Dropout(a.dropout)

    def forward(self, ids):
        tr = self.transformer
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.drop(tr.wte(ids) + tr.wpe(pos))
        for block in tr.h:
            x = block(x)
        logits = tr.ln_f(x) @ tr.wte.weight.t()  # tied lm_head
        # Next-token loss as Hugging Face computes it.
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                               ids[:, 1:].reshape(-1))


def main():
    args = common.parse_args(lambda p: p.add_argument("--mode", choices=["eager", "compile"], default="eager"))
    threads = int(os.environ.get("KILN_BENCH_TORCH_THREADS", "2"))
    torch.set_num_threads(threads)
    torch.manual_seed(args.seed + 1)
    # KILN_BENCH_TORCH_DTYPE=float64: the same run in double precision, a
    # reference for judging which f32 curve drifts (not a competitor).
    if os.environ.get("KILN_BENCH_TORCH_DTYPE") == "float64":
        torch.set_default_dtype(torch.float64)
    weights, batches = common.load_inputs(args)
    device = torch.device(args.device)
    torch_loop.cap_memory(device)
    model = GPT2(args)
    # Weights by HF name; the causal mask buffers are ours, not the file's.
    model.load_state_dict({k: torch.from_numpy(v).to(torch.get_default_dtype())
                           for k, v in weights.items()}, strict=False)
    missing = {n for n, _ in model.named_parameters()} - set(weights)
    assert not missing, f"weights file lacks {sorted(missing)}"
    model.to(device).train()
    named = list(model.named_parameters())
    groups = [{"params": [p for n, p in named if common.decays(n)], "weight_decay": args.weight_decay},
              {"params": [p for n, p in named if not common.decays(n)], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.999), eps=1e-8)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: common.lr_at(args, s) / args.lr)
    step_fn = torch.compile(model) if args.mode == "compile" else model

    losses, step_ms = torch_loop.run_or_over_budget(
        args, batches.shape[1],
        lambda: torch_loop.train(args, step_fn, list(model.parameters()), opt, sched, batches, device))
    extra = torch_loop.cuda_memory(device)
    common.write_result(args, batches.shape[1], losses, step_ms, **extra,
                        torch_version=torch.__version__, torch_threads=torch.get_num_threads(),
                        mode=args.mode)


if __name__ == "__main__":
    main()
