"""The timed training loop both PyTorch peers run (torch_gpt2.py, torch_hf.py):
one step per batch of kiln-bench's batches file, PyTorch's automatic mixed
precision for --precision bf16 / fp16 (fp16 with GradScaler's defaults: 2^16,
halve on overflow, double after 2000 clean steps), clipping of `params` to
--max_grad_norm, the optimizer and schedule steps, and the loss read back
every --logging_steps steps (a host sync; common.StepTimer). Kept out of common.py so
the JAX peer does not import torch."""
import torch

import common


def train(args, loss_of, params, opt, sched, batches, device):
    """→ (losses, step times in ms), one per batch."""
    half = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(args.precision)
    scaler = torch.amp.GradScaler(device.type, enabled=args.precision == "fp16")
    timer = common.StepTimer(args.logging_steps, lambda loss: loss.item())
    for s, ids in enumerate(batches):
        with torch.autocast(device.type, dtype=half or torch.float32, enabled=half is not None):
            loss = loss_of(torch.from_numpy(ids).to(device))
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        if args.max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(params, args.max_grad_norm)
        scaler.step(opt)
        scaler.update()
        sched.step()
        opt.zero_grad(set_to_none=True)
        timer.done(s, loss.detach(), len(batches))
    return timer.losses, timer.step_ms


def cap_memory(device):
    """Caps what PyTorch's allocator may take on a GPU at the run's device
    memory limit (common.device_memory_limit), as a GPU of that size would:
    set_per_process_memory_fraction of the device's total."""
    limit = common.device_memory_limit()
    if limit and device.type == "cuda":
        total = torch.cuda.get_device_properties(device).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, limit / total), device)


def run_or_over_budget(args, batch, fn):
    """fn() → its value; a CUDA out-of-memory error (torch.compile's
    wrapped one too) instead writes an "over budget" result and exits 1: a
    batch that does not fit."""
    try:
        return fn()
    except Exception as e:  # torch.compile wraps the allocator's error
        if not isinstance(e, torch.OutOfMemoryError) and "out of memory" not in str(e).lower():
            raise
        common.write_over_budget(args, batch, "CUDA out of memory: " + str(e))
        raise SystemExit(1)


def cuda_memory(device):
    """The GPU's name and the peak memory PyTorch allocated, on cuda."""
    if device.type != "cuda":
        return {}
    return dict(gpu=torch.cuda.get_device_name(device),
                peak_gpu_mib=torch.cuda.max_memory_allocated(device) / 2**20)
