"""kiln-bench's fine-tuning peer: the model as users train it, transformers'
GPT2LMHeadModel or LlamaForCausalLM, with PEFT's LoRA when --lora_r is given
(the base frozen; with --torch_dtype bfloat16 stored in bf16, as
from_pretrained(torch_dtype=torch.bfloat16) loads it), AdamW over the
trainable parameters with kiln's schedule and decay rule, clipping, and
PyTorch's autocast for --precision bf16 / fp16. Eager, or --mode compile
(torch.compile of the loss). --init shared starts from kiln-bench's weights
file (by Hugging Face name; the adapters' initial values too, so the loss
curves compare); --init own draws random weights on the device (a model too
large to write to a file: losses are then not comparable, time and memory
are)."""
import os

import torch

import common
import torch_loop


def extra_flags(p):
    p.add_argument("--mode", choices=["eager", "compile"], default="eager")
    p.add_argument("--model", choices=["gpt2", "llama"], default="gpt2")
    p.add_argument("--n_kv_head", type=int, default=0)
    p.add_argument("--n_inner", type=int, default=0)
    p.add_argument("--lora_r", type=int, default=0)
    p.add_argument("--lora_alpha", type=float, default=16)
    p.add_argument("--lora_dropout", type=float, default=0.0)
    p.add_argument("--lora_targets", default="")
    p.add_argument("--torch_dtype", choices=["float32", "bfloat16"], default="float32")
    p.add_argument("--init", choices=["shared", "own"], default="shared")


def build_model(args):
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM
    if args.model == "gpt2":
        cfg = GPT2Config(vocab_size=args.vocab, n_positions=args.seq, n_embd=args.n_embd,
                         n_layer=args.n_layer, n_head=args.n_head,
                         n_inner=args.n_inner or None, activation_function="gelu_new",
                         resid_pdrop=args.dropout, embd_pdrop=args.dropout,
                         attn_pdrop=args.dropout, layer_norm_epsilon=1e-5)
        return GPT2LMHeadModel(cfg)
    cfg = LlamaConfig(vocab_size=args.vocab, hidden_size=args.n_embd,
                      intermediate_size=args.n_inner or 4 * args.n_embd,
                      num_hidden_layers=args.n_layer, num_attention_heads=args.n_head,
                      num_key_value_heads=args.n_kv_head or args.n_head,
                      max_position_embeddings=args.seq, rms_norm_eps=1e-5,
                      rope_theta=500000.0, attention_dropout=args.dropout,
                      tie_word_embeddings=False)
    return LlamaForCausalLM(cfg)


def peft_name(name):
    """kiln's LoRA parameter name → PEFT's (adapter "default")."""
    for part in (".lora_A.", ".lora_B."):
        name = name.replace(part, part + "default.")
    if name.endswith((".lora_embedding_A", ".lora_embedding_B")):
        name += ".default"  # an embedding's branch is a ParameterDict
    return "base_model.model." + name


def decays(name):
    """Hugging Face's Trainer rule, as kiln's bias_and_norm_names: no weight
    decay on biases and norm weights (GPT-2's ln_*, Llama's *norm)."""
    parts = name.split(".")
    return not (name.endswith(".bias") or parts[-2].startswith("ln_")
                or parts[-2].endswith("norm"))


def main():
    args = common.parse_args(extra_flags)
    torch.set_num_threads(int(os.environ.get("KILN_BENCH_TORCH_THREADS", "2")))
    torch.manual_seed(args.seed + 1)
    device = torch.device(args.device)
    torch_loop.cap_memory(device)
    base_dtype = torch.bfloat16 if args.torch_dtype == "bfloat16" else torch.float32
    if args.init == "shared":
        weights, batches = common.load_inputs(args)
        model = build_model(args)
        base = {k: torch.from_numpy(v) for k, v in weights.items()
                if ".lora_" not in k}
        result = model.load_state_dict(base, strict=False)
        assert not result.unexpected_keys, result.unexpected_keys
        missing = [k for k in result.missing_keys if k != "lm_head.weight"]
        assert not missing, f"weights file lacks {missing}"
        model.tie_weights()
        model.to(device=device, dtype=base_dtype)
    else:
        import numpy as np
        batches = np.load(args.batches)[: args.steps]
        weights = {}
        torch.set_default_dtype(base_dtype)
        with torch.device(device):
            model = build_model(args)
        torch.set_default_dtype(torch.float32)
    if args.lora_r > 0:
        from peft import LoraConfig, get_peft_model
        targets = args.lora_targets.split(",") if args.lora_targets else None
        model = get_peft_model(model, LoraConfig(
            r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=args.lora_dropout,
            target_modules=targets, fan_in_fan_out=args.model == "gpt2",
            task_type="CAUSAL_LM"))
        adapters = {peft_name(k): torch.from_numpy(v) for k, v in weights.items()
                    if ".lora_" in k}
        if adapters:
            result = model.load_state_dict(adapters, strict=False)
            assert not result.unexpected_keys, result.unexpected_keys
    model.to(device).train()
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    trainable = sum(p.numel() for _, p in named)
    total = sum(p.numel() for p in model.parameters())
    groups = [{"params": [p for n, p in named if decays(n)], "weight_decay": args.weight_decay},
              {"params": [p for n, p in named if not decays(n)], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.999), eps=1e-8,
                            fused=device.type == "cuda")
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: common.lr_at(args, s) / args.lr)

    def loss_of(ids):
        return model(input_ids=ids, labels=ids).loss
    step_fn = torch.compile(loss_of) if args.mode == "compile" else loss_of

    losses, step_ms = torch_loop.run_or_over_budget(
        args, batches.shape[1],
        lambda: torch_loop.train(args, step_fn, [p for _, p in named], opt, sched, batches, device))
    extra = dict(trainable_parameters=trainable, total_parameters=total,
                 **torch_loop.cuda_memory(device))
    import transformers
    common.write_result(args, batches.shape[1], losses, step_ms, **extra,
                        torch_version=torch.__version__,
                        transformers_version=transformers.__version__,
                        torch_threads=torch.get_num_threads(), mode=args.mode)


if __name__ == "__main__":
    main()
