"""kiln-bench's JAX peer: the same GPT-2 as kiln's (pre-LN blocks, GELU tanh
approximation, tied lm_head, masked-softmax causal attention, Conv1D weights
[in, out]) as a pure function over a dict of parameters by Hugging Face name,
and one jax.jit-compiled training step: loss and gradients, global-norm
clipping and PyTorch's AdamW (written out; optax is not installed), with the
learning rate a traced argument so the schedule never recompiles."""
import os
import sys

# The platform must be chosen before jax is imported: --device cpu keeps a
# GPU machine's run on the CPU, like every other system of that run.
if "--device" not in sys.argv or sys.argv[sys.argv.index("--device") + 1] == "cpu":
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
elif os.environ.get("KILN_DEVICE_MEMORY_LIMIT", "").isdigit():
    # A largest-batch search's cap (common.device_memory_limit): XLA's
    # allocator may take that share of the GPU, as on a GPU of that size.
    import subprocess
    total_mib = int(subprocess.run(
        ["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits", "-i", "0"],
        capture_output=True, text=True, check=True).stdout.split()[0])
    fraction = int(os.environ["KILN_DEVICE_MEMORY_LIMIT"]) / (total_mib * 2**20)
    os.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = "%.4f" % min(1.0, fraction)

import jax
import jax.numpy as jnp
import numpy as np

import common


def layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * w + b


def dropout(x, p, key):
    if p == 0:
        return x
    return jnp.where(jax.random.bernoulli(key, 1 - p, x.shape), x / (1 - p), 0)


def matmul(x, y, a):
    """x @ y; with --precision bf16 on bf16 inputs into f32 (kiln's autocast,
    XLA's preferred_element_type); with fp16 on f16 inputs into an f16
    result widened to f32, as PyTorch's autocast (an overflow shows as Inf,
    which the loss scaling catches)."""
    if a.precision == "bf16":
        return jnp.matmul(x.astype(jnp.bfloat16), y.astype(jnp.bfloat16),
                          preferred_element_type=jnp.float32)
    if a.precision == "fp16":
        return jnp.matmul(x.astype(jnp.float16), y.astype(jnp.float16),
                          preferred_element_type=jnp.float32).astype(jnp.float16).astype(jnp.float32)
    return x @ y


def loss_fn(params, ids, key, a):
    P = lambda name: params[name]
    b, t = ids.shape
    c, nh = a.n_embd, a.n_head
    keys = iter(jax.random.split(key, 1 + 3 * a.n_layer))
    x = dropout(P("transformer.wte.weight")[ids] + P("transformer.wpe.weight")[:t], a.dropout, next(keys))
    mask = jnp.tril(jnp.ones((t, t), bool))
    for i in range(a.n_layer):
        h = lambda n: P(f"transformer.h.{i}.{n}")
        y = layer_norm(x, h("ln_1.weight"), h("ln_1.bias"))
        qkv = matmul(y, h("attn.c_attn.weight"), a) + h("attn.c_attn.bias")
        q, k, v = (z.reshape(b, t, nh, c // nh).transpose(0, 2, 1, 3) for z in jnp.split(qkv, 3, axis=-1))
        att = jnp.where(mask, matmul(q, k.transpose(0, 1, 3, 2), a) / np.sqrt(c // nh), -jnp.inf)
        att = dropout(jax.nn.softmax(att, axis=-1), a.dropout, next(keys))
        y = matmul(att, v, a).transpose(0, 2, 1, 3).reshape(b, t, c)
        x = x + dropout(matmul(y, h("attn.c_proj.weight"), a) + h("attn.c_proj.bias"), a.dropout, next(keys))
        y = layer_norm(x, h("ln_2.weight"), h("ln_2.bias"))
        y = jax.nn.gelu(matmul(y, h("mlp.c_fc.weight"), a) + h("mlp.c_fc.bias"), approximate=True)
        x = x + dropout(matmul(y, h("mlp.c_proj.weight"), a) + h("mlp.c_proj.bias"), a.dropout, next(keys))
    x = layer_norm(x, P("transformer.ln_f.weight"), P("transformer.ln_f.bias"))
    logits = matmul(x, P("transformer.wte.weight").T, a)  # tied lm_head
    logp = jax.nn.log_softmax(logits[:, :-1], axis=-1)
    return -jnp.take_along_axis(logp, ids[:, 1:, None], axis=-1).mean()


def make_train_step(a):
    b1, b2, eps = 0.9, 0.999, 1e-8
    fp16 = a.precision == "fp16"

    def train_step(params, m, v, step, lr, ids, key, scaler):
        # fp16: dynamic loss scaling as PyTorch's GradScaler, in the step.
        scale, clean, skipped = scaler
        if fp16:
            scaled = lambda *xs: loss_fn(*xs) * scale
            loss, grads = jax.value_and_grad(scaled)(params, ids, key, a)
            loss, grads = loss / scale, {n: g / scale for n, g in grads.items()}
            finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(g)) for g in grads.values()]))
            step = step - skipped
        else:
            loss, grads = jax.value_and_grad(loss_fn)(params, ids, key, a)
        if a.max_grad_norm > 0:  # torch.nn.utils.clip_grad_norm_
            norm = jnp.sqrt(sum(jnp.sum(g * g) for g in grads.values()))
            coef = jnp.minimum(1.0, a.max_grad_norm / (norm + 1e-6))
            grads = {n: g * coef for n, g in grads.items()}
        bc1, bc2 = 1 - b1 ** step, 1 - b2 ** step
        new_p, new_m, new_v = {}, {}, {}
        for n, p in params.items():
            g = grads[n]
            if common.decays(n):
                p = p * (1 - lr * a.weight_decay)
            new_m[n] = m[n] + (g - m[n]) * (1 - b1)
            new_v[n] = v[n] * b2 + g * g * (1 - b2)
            denom = jnp.sqrt(new_v[n]) / jnp.sqrt(bc2) + eps
            new_p[n] = p - (lr / bc1) * new_m[n] / denom
        if not fp16:
            return new_p, new_m, new_v, loss, scaler
        keep = lambda new, old: {n: jnp.where(finite, new[n], old[n]) for n in old}
        clean = jnp.where(finite, clean + 1, 0)
        grow = clean >= 2000
        scale = jnp.where(finite, jnp.where(grow, scale * 2, scale), scale * 0.5)
        scaler = (scale, jnp.where(grow, 0, clean), skipped + jnp.where(finite, 0, 1))
        return keep(new_p, params), keep(new_m, m), keep(new_v, v), loss, scaler

    return jax.jit(train_step, donate_argnums=(0, 1, 2))


def main():
    args = common.parse_args()
    weights, batches = common.load_inputs(args)
    params = {n: jnp.asarray(w) for n, w in weights.items()}
    m = {n: jnp.zeros_like(p) for n, p in params.items()}
    v = {n: jnp.zeros_like(p) for n, p in params.items()}
    train_step = make_train_step(args)
    key = jax.random.PRNGKey(args.seed + 1)
    # (scale, clean steps, skipped steps); f32 and bf16 keep a scale of 1.
    scaler = (jnp.float32(65536.0 if args.precision == "fp16" else 1.0), jnp.float32(0), jnp.float32(0))

    timer = common.StepTimer(args.logging_steps, float)
    try:
        for s, ids in enumerate(batches):
            key, sub = jax.random.split(key)
            params, m, v, loss, scaler = train_step(params, m, v, jnp.float32(s + 1),
                                                    jnp.float32(common.lr_at(args, s)), jnp.asarray(ids), sub,
                                                    scaler)
            timer.done(s, loss, len(batches))
    except Exception as e:  # XlaRuntimeError: RESOURCE_EXHAUSTED
        if "RESOURCE_EXHAUSTED" not in str(e) and "out of memory" not in str(e).lower():
            raise
        common.write_over_budget(args, batches.shape[1], "XLA out of memory: " + str(e))
        raise SystemExit(1)
    # The most XLA's allocator held at once on a GPU.
    stats = (jax.devices()[0].memory_stats() or {}) if args.device == "cuda" else {}
    extra = ({"peak_gpu_mib": stats["peak_bytes_in_use"] / 2**20}
             if "peak_bytes_in_use" in stats else {})
    common.write_result(args, batches.shape[1], timer.losses, timer.step_ms, **extra,
                        jax_version=jax.__version__, jax_devices=str(jax.devices()))


if __name__ == "__main__":
    main()
