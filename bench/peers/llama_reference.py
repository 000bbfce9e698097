"""Reference values for kiln's Llama parity test (tests/unit/LlamaTest.cpp).

Builds ten small random models with transformers (two LlamaForCausalLM,
a MistralForCausalLM, a Qwen2ForCausalLM, a Qwen3ForCausalLM, two
Phi3ForCausalLM, a GemmaForCausalLM, a Gemma2ForCausalLM and a
Gemma3ForCausalLM: Llama's architecture with their own configs and
additions), saves each
as a Hugging Face folder (config.json + model.safetensors), and writes what
transformers computes from those weights to reference.json in the folder:
the RoPE inverse frequencies, the logits of one batch (eval mode), the same
logits from the folder loaded in bf16 (from_pretrained(dtype=bfloat16): a
model that computes in bf16, widened only for the result), and the losses of
the first training steps (AdamW, each step on its own batch).

  python llama_reference.py OUT_DIR    →  OUT_DIR/{llama3,...,phi3}/...

Variants: "llama3" has Llama 3.1's rope scaling, grouped-query attention
(4 query heads, 2 key/value heads) and an untied head; "tied" has plain RoPE,
as many key/value heads as query heads, attention and MLP biases and the
head tied to the embedding; "mistral" is a MistralConfig with grouped-query
attention and a sliding window of 8 of the sequence's 24 positions;
"qwen2" has biases on q/k/v_proj (not o_proj), grouped-query attention and
a tied head, as Qwen2.5's small models, and a window of 8 on its second
layer only (max_window_layers 1); "qwen3" has per-head RMSNorms on
queries and keys (q_norm, k_norm), a head_dim (32) that is not
hidden_size / heads (16), and a window of 6 on its first layer only
(layer_types); "phi3" has Phi-3's fused qkv_proj (with
grouped-query heads, so the key and value rows are narrower than the
query's) and gate_up_proj, and a window of 10;
"phi3-longrope" adds Phi-3.5's LongRoPE with a pretraining length (16)
shorter than the sequence, so the long factors turn it and cos and sin
are scaled by sqrt(1 + ln(256 / 16) / ln 16).
"phi4" is Phi-4-mini's shape of Phi-3: RoPE on the first 12 of each head's
16 dimensions (partial_rotary_factor 0.75; LongRoPE then has 6 factors of
each kind, past a pretraining length of 16), a tied head and a window
(262144) longer than any sequence.
"gemma" is a GemmaForCausalLM: one key/value head (as Gemma 2B), a
head_dim (32) that is not hidden_size / heads, the tanh GELU gating its
MLP, RMSNorms that scale by 1 + weight (drawn near 0, as trained ones are)
and embeddings scaled by sqrt(64) = 8 (exact in bf16 too).
"gemma3" is a Gemma3ForCausalLM (Gemma's differences, with per-head query
and key norms, four norms a layer, scores scaled by 1 / sqrt(24) rather than
1 / sqrt(head_dim 32), a window of 6 on its first layer, which turns by its
own RoPE (theta 10^4), the second by theta 10^6 with linear scaling 2).
"gemma2" is a Gemma2ForCausalLM (Gemma's differences, with four norms a
layer, scores scaled by 1 / sqrt(24), a window of 6 on its first layer, as
Gemma2Config makes every other layer slide, and soft caps far below
Gemma 2's 50 and 30 so that their tanh bends: 2 on the scores, 3 on the
logits; transformers runs its eager attention, which alone applies the
cap).
"""
import json
import os
import sys

import torch
from transformers import (Gemma2Config, Gemma2ForCausalLM,
                          Gemma3ForCausalLM, Gemma3TextConfig, GemmaConfig,
                          GemmaForCausalLM, LlamaConfig, LlamaForCausalLM, MistralConfig,
                          MistralForCausalLM, Phi3Config, Phi3ForCausalLM,
                          Qwen2Config, Qwen2ForCausalLM,
                          Qwen3Config, Qwen3ForCausalLM)

VOCAB, BATCH, SEQ, STEPS = 320, 2, 24, 4
LR, WEIGHT_DECAY = 1e-3, 0.01

VARIANTS = {
    "llama3": dict(
        num_key_value_heads=2,
        tie_word_embeddings=False,
        rope_parameters={
            "rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
            "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            # Small enough that the 8 frequencies of head_dim 16 fall in all
            # three bands (kept, blended, divided by factor).
            "original_max_position_embeddings": 64,
        },
    ),
    "tied": dict(
        num_key_value_heads=4,
        tie_word_embeddings=True,
        attention_bias=True,
        mlp_bias=True,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    ),
    "mistral": dict(
        num_key_value_heads=2,
        tie_word_embeddings=False,
        sliding_window=8,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    ),
    "qwen2": dict(
        num_key_value_heads=2,
        tie_word_embeddings=True,
        use_sliding_window=True,
        sliding_window=8,
        max_window_layers=1,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
    ),
    "qwen3": dict(
        num_key_value_heads=2,
        head_dim=32,
        tie_word_embeddings=False,
        use_sliding_window=True,
        sliding_window=6,
        layer_types=["sliding_attention", "full_attention"],
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
    ),
    "phi3": dict(
        num_key_value_heads=2,
        tie_word_embeddings=False,
        sliding_window=10,
        resid_pdrop=0.0,
        # Phi3Config's defaults name Phi-3's ids (32000), past this vocabulary.
        pad_token_id=None, bos_token_id=None, eos_token_id=None,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    ),
    "phi3-longrope": dict(
        num_key_value_heads=4,
        tie_word_embeddings=False,
        sliding_window=SEQ,
        original_max_position_embeddings=16,
        pad_token_id=None, bos_token_id=None, eos_token_id=None,
        rope_parameters={
            "rope_type": "longrope", "rope_theta": 10000.0,
            "short_factor": [1.0, 1.1, 1.3, 1.6, 2.0, 2.5, 3.1, 3.8],
            "long_factor": [1.0, 1.5, 2.5, 4.0, 6.0, 9.0, 13.0, 18.0],
        },
    ),
    "phi4": dict(
        num_key_value_heads=2,
        tie_word_embeddings=True,
        sliding_window=262144,
        original_max_position_embeddings=16,
        pad_token_id=None, bos_token_id=None, eos_token_id=None,
        partial_rotary_factor=0.75,
        rope_parameters={
            "rope_type": "longrope", "rope_theta": 10000.0,
            "partial_rotary_factor": 0.75,
            "short_factor": [1.0, 1.2, 1.5, 2.0, 2.6, 3.3],
            "long_factor": [1.0, 2.0, 3.5, 5.5, 8.0, 12.0],
        },
    ),
    "gemma": dict(
        num_key_value_heads=1,
        head_dim=32,
        hidden_act="gelu_pytorch_tanh",
        tie_word_embeddings=True,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    ),
    "gemma2": dict(
        num_key_value_heads=2,
        head_dim=32,
        query_pre_attn_scalar=24,
        sliding_window=6,
        attn_logit_softcapping=2.0,
        final_logit_softcapping=3.0,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    ),
    "gemma3": dict(
        num_key_value_heads=2,
        head_dim=32,
        query_pre_attn_scalar=24,
        sliding_window=6,
        layer_types=["sliding_attention", "full_attention"],
        rope_parameters={
            "sliding_attention": {"rope_type": "default",
                                  "rope_theta": 10000.0},
            "full_attention": {"rope_type": "linear", "factor": 2.0,
                               "rope_theta": 1000000.0},
        },
    ),
}

CLASSES = {
    "mistral": (MistralConfig, MistralForCausalLM),
    "qwen2": (Qwen2Config, Qwen2ForCausalLM),
    "qwen3": (Qwen3Config, Qwen3ForCausalLM),
    "phi3": (Phi3Config, Phi3ForCausalLM),
    "phi3-longrope": (Phi3Config, Phi3ForCausalLM),
    "phi4": (Phi3Config, Phi3ForCausalLM),
    "gemma": (GemmaConfig, GemmaForCausalLM),
    "gemma2": (Gemma2Config, Gemma2ForCausalLM),
    "gemma3": (Gemma3TextConfig, Gemma3ForCausalLM),
}


def build(name, extra, out):
    torch.manual_seed(0)
    config_class, model_class = CLASSES.get(
        name, (LlamaConfig, LlamaForCausalLM))
    config = config_class(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=176,
        num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=256,
        rms_norm_eps=1e-5, attention_dropout=0.0, **extra)
    model = model_class(config).float()
    # Larger weights than the 0.02 init, and norm weights away from 1, so
    # every part of the model moves the logits well above the tolerance.
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if "norm" in pname:
                # Gemma's norms scale by 1 + weight.
                offset = 0 if config.model_type.startswith("gemma") else 1
                p.copy_(offset + 0.05 * torch.randn_like(p))
            else:
                p.normal_(0, 0.1)
    folder = os.path.join(out, name)
    model.save_pretrained(folder)

    gen = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (STEPS, BATCH, SEQ), generator=gen)
    model.eval()
    with torch.no_grad():
        logits = model(ids[0]).logits
        half = model_class.from_pretrained(folder, dtype=torch.bfloat16)
        half.eval()
        logits_bf16 = half(ids[0]).logits.float()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=LR,
                            weight_decay=WEIGHT_DECAY)
    losses = []
    for step in range(STEPS):
        loss = model(ids[step], labels=ids[step]).loss
        losses.append(loss.item())
        loss.backward()
        opt.step()
        opt.zero_grad()
    rotary = model.model.rotary_emb
    reference = {
        "transformers": __import__("transformers").__version__,
        "torch": torch.__version__,
        "lr": LR, "weight_decay": WEIGHT_DECAY,
        "ids": ids.tolist(),
        # Gemma 3's full layers' (its sliding layers' as inv_freq_local).
        "inv_freq": getattr(rotary, "inv_freq",
                            getattr(rotary, "full_attention_inv_freq",
                                    None)).tolist(),
        "logits": logits.flatten().tolist(),
        "logits_bf16": logits_bf16.flatten().tolist(),
        "losses": losses,
    }
    if hasattr(rotary, "sliding_attention_inv_freq"):
        reference["inv_freq_local"] = rotary.sliding_attention_inv_freq.tolist()
    with open(os.path.join(folder, "reference.json"), "w") as f:
        json.dump(reference, f)


def main():
    out = sys.argv[1]
    for name, extra in VARIANTS.items():
        build(name, extra, out)


if __name__ == "__main__":
    main()
