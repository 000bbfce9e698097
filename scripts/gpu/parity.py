#!/usr/bin/env python3
"""The loss-parity judgements of scripts/gpu-check.sh, made on the files the
runs leave. Each subcommand prints its table, writes its figures as JSON
(--json) and exits 0 when every check holds, 1 when one does not, 2 when a
run's data is missing (the run failed).

parity.py bench KILN_BENCH_RESULTS CPU_RESULT [--steps 4] [--json OUT]
    GPT-2 124M. kiln on cuda against kiln on the cpu: the cuda main run's
    first --steps losses (dropout 0.1; the dropout masks are the same bits
    on both backends) against the cpu worker's run of the same steps
    (same weights, batches, flags and schedule). kiln on cuda against
    PyTorch eager fp32 on the GPU: kiln-bench's dropout-0 parity runs.
    Both within 1e-4 relative at every step (the issue's criterion). Also
    prints the main runs' step times (the speed point: recorded, not
    judged).

parity.py curves CUDA_LOG CPU_LOG [--steps 300] [--first 20] [--window 10]
                 [--json OUT]
    Two kiln-train runs (--logging_steps 1) on the same data and seed. The
    tolerances, with why:
    - the first --first losses within 1e-4 relative: before f32 rounding
      differences (cuBLASLt's GEMM summation order against oneDNN's) are
      amplified by training, the curves agree as closely as the issue asks
      of kiln against PyTorch (docs/PERFORMANCE.md measured 3.3e-5 at step
      20 on SST-2, cpu kiln against PyTorch); kiln-train prints losses to
      4 decimals, 2e-5 relative at worst for losses above 5;
    - the --window-step trailing moving averages within 1e-2 relative over
      all steps: afterwards two f32 trajectories drift apart (kiln against
      PyTorch on the cpu, same config: 1.09e-2 at the worst single step,
      6.3e-3 smoothed), so the issue's 1% on the smoothed curves is the
      bound; a bug (a wrong kernel, a dropout mask that differs) moves the
      curves by far more;
    - and the loss falls (the last window's mean below 3/4 of the first
      window's): two flat curves would agree too easily.
"""
import argparse
import json
import math
import re
import sys

FIRST_STEPS_TOLERANCE = 1e-4
SMOOTHED_TOLERANCE = 1e-2


def rel(a, b):
    """|a - b| / |b|; inf when either is not a finite number."""
    if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return abs(a - b) / abs(b) if b else (0.0 if a == b else math.inf)


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"parity.py: cannot read {path}: {e}")
        return None


def write_json(path, figures):
    if path:
        with open(path, "w") as f:
            json.dump(figures, f, indent=2)


def compare(name, a, b, steps, label_a, label_b):
    """Prints a per-step table of two loss lists → (figures, ok)."""
    print(f"\n{name}: first {steps} losses, |{label_a} - {label_b}| / |{label_b}|"
          f" <= {FIRST_STEPS_TOLERANCE:g}")
    print(f"| step | {label_a} | {label_b} | relative difference |")
    print("|---|---|---|---|")
    worst, rows = 0.0, []
    for i in range(steps):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        d = rel(x, y)
        worst = max(worst, d)
        rows.append({"step": i + 1, label_a: x, label_b: y,
                     "rel_diff": d if math.isfinite(d) else None})
        fmt = lambda v: "missing" if v is None else f"{v:.7f}"
        print(f"| {i + 1} | {fmt(x)} | {fmt(y)} | {d:.2e} |")
    ok = worst <= FIRST_STEPS_TOLERANCE
    print(f"{name}: worst {worst:.2e}: {'PASS' if ok else 'FAIL'}")
    return {"steps": rows, "max_rel_diff": worst if math.isfinite(worst) else None,
            "within_1e-4": ok}, ok


def speed_table(results):
    """The main runs' step times, as kiln-bench summarised them."""
    config = results.get("config", {})
    seq = config.get("seq", 0)
    print(f"\nStep times (kiln-bench main runs: {config.get('steps')} steps, batch"
          f" {config.get('batch')}, seq {seq}, dropout {config.get('dropout')};"
          " median of the second half of the steps)")
    print("| system | step (ms) | tokens/s | compile (s) | peak GPU (MiB) | status |")
    print("|---|---|---|---|---|---|")
    rows = {}
    for name, r in results.get("systems", {}).items():
        ms = r.get("step_ms_median")
        sps = r.get("samples_per_s")
        compile_s = r.get("kiln_compile_s", r.get("compile_s"))
        fmt = lambda v, f: "n/a" if v is None else format(v, f)
        print(f"| {name} | {fmt(ms, '.1f')} | {fmt(sps * seq if sps else None, '.0f')}"
              f" | {fmt(compile_s, '.1f')} | {fmt(r.get('peak_gpu_mib'), '.0f')}"
              f" | {r.get('status')} |")
        rows[name] = {"step_ms_median": ms, "step_ms": r.get("step_ms"),
                      "tokens_per_s": sps * seq if sps else None,
                      "compile_s": compile_s, "status": r.get("status")}
    return rows


def bench(args):
    results, cpu = load_json(args.results), load_json(args.cpu_result)
    if results is None:
        return 2
    figures = {"speed": speed_table(results)}
    missing, failed = False, False
    systems = results.get("systems", {})
    cuda_main = systems.get("kiln_compiled", {}).get("losses") or []
    cpu_losses = (cpu or {}).get("losses") or []
    if len(cuda_main) < args.steps or len(cpu_losses) < args.steps:
        print(f"\nkiln cuda vs cpu: missing losses (cuda main run: {len(cuda_main)},"
              f" cpu run: {len(cpu_losses)}; see the logs)")
        missing = True
    else:
        figures["kiln_cuda_vs_kiln_cpu"], ok = compare(
            "kiln cuda vs kiln cpu (dropout 0.1)", cuda_main, cpu_losses,
            args.steps, "kiln_cuda", "kiln_cpu")
        failed |= not ok
    parity = results.get("parity", {})
    cuda_parity = parity.get("kiln_compiled_losses") or []
    torch_parity = parity.get("torch_losses") or []
    if len(cuda_parity) < args.steps or len(torch_parity) < args.steps:
        print(f"\nkiln cuda vs PyTorch: missing parity losses (kiln: {len(cuda_parity)},"
              f" torch: {len(torch_parity)}; both main runs must succeed)")
        missing = True
    else:
        figures["kiln_cuda_vs_torch_cuda"], ok = compare(
            "kiln cuda vs PyTorch eager fp32 on the GPU (dropout 0)", cuda_parity,
            torch_parity, args.steps, "kiln_cuda", "torch_cuda")
        failed |= not ok
    write_json(args.json, figures)
    return 2 if missing else 1 if failed else 0


LOSS_LINE = re.compile(r"^\{'loss': ([^,]+),")


def read_losses(path):
    """kiln-train's log → its per-step losses (lines "{'loss': x, ...}")."""
    losses = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                m = LOSS_LINE.match(line)
                if m:
                    losses.append(float(m.group(1)))
    except OSError as e:
        print(f"parity.py: cannot read {path}: {e}")
    return losses


def moving_average(values, window):
    """Trailing means over full windows: entry i is the mean of steps
    i+1 .. i+window."""
    return [sum(values[i:i + window]) / window
            for i in range(len(values) - window + 1)]


def curves(args):
    cuda, cpu = read_losses(args.cuda_log), read_losses(args.cpu_log)
    print(f"losses read: cuda {len(cuda)}, cpu {len(cpu)} (expected {args.steps})")
    if len(cuda) < args.steps or len(cpu) < args.steps:
        write_json(args.json, {"cuda_losses": cuda, "cpu_losses": cpu})
        return 2
    cuda, cpu = cuda[:args.steps], cpu[:args.steps]
    first, ok_first = compare("SST-2 first steps", cuda, cpu, args.first,
                              "kiln_cuda", "kiln_cpu")
    ma_cuda, ma_cpu = moving_average(cuda, args.window), moving_average(cpu, args.window)
    diffs = [rel(a, b) for a, b in zip(ma_cuda, ma_cpu)]
    worst = max(diffs)
    worst_end = diffs.index(worst) + args.window
    ok_smoothed = worst <= SMOOTHED_TOLERANCE
    falls = ma_cpu[-1] < 0.75 * ma_cpu[0] and ma_cuda[-1] < 0.75 * ma_cuda[0]
    print(f"\n{args.window}-step moving averages over {args.steps} steps: worst"
          f" relative difference {worst:.2e} (window ending at step {worst_end}),"
          f" tolerance {SMOOTHED_TOLERANCE:g}: {'PASS' if ok_smoothed else 'FAIL'}")
    print("| steps | kiln cuda (mean) | kiln cpu (mean) | relative difference |")
    print("|---|---|---|---|")
    for end in sorted({args.window, 50, 100, 150, 200, 250, args.steps, worst_end}):
        if args.window <= end <= args.steps:
            i = end - args.window
            print(f"| {i + 1}-{end} | {ma_cuda[i]:.4f} | {ma_cpu[i]:.4f} | {diffs[i]:.2e} |")
    print(f"loss falls (last window below 3/4 of the first): cuda {ma_cuda[0]:.4f} →"
          f" {ma_cuda[-1]:.4f}, cpu {ma_cpu[0]:.4f} → {ma_cpu[-1]:.4f}:"
          f" {'PASS' if falls else 'FAIL'}")
    write_json(args.json, {
        "cuda_losses": cuda, "cpu_losses": cpu, "first_steps": first,
        "smoothing_window": args.window,
        "smoothed_max_rel_diff": worst if math.isfinite(worst) else None,
        "smoothed_worst_window_end": worst_end,
        "smoothed_within_tolerance": ok_smoothed, "loss_falls": falls,
        "tolerances": {"first_steps": FIRST_STEPS_TOLERANCE,
                       "smoothed": SMOOTHED_TOLERANCE}})
    return 0 if ok_first and ok_smoothed and falls else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bench")
    b.add_argument("results")
    b.add_argument("cpu_result")
    b.add_argument("--steps", type=int, default=4)
    b.add_argument("--json")
    c = sub.add_parser("curves")
    c.add_argument("cuda_log")
    c.add_argument("cpu_log")
    c.add_argument("--steps", type=int, default=300)
    c.add_argument("--first", type=int, default=20)
    c.add_argument("--window", type=int, default=10)
    c.add_argument("--json")
    args = p.parse_args()
    return bench(args) if args.command == "bench" else curves(args)


if __name__ == "__main__":
    sys.exit(main())
