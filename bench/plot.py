"""Writes kiln-bench's summary as a Markdown table (table.md) from
results.json, and draws its plots: throughput, steady step time, compile
time, peak memory and largest batch under the budget as bar charts, and
loss and step time per step as line charts, one PNG each (a diverged
run's null losses are left out of its curve). Without
matplotlib it writes the table alone and says so (exit 0), so kiln-bench
runs without it. Usage: plot.py RESULTS_JSON OUT_DIR"""
import json
import math
import os
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

# The statuses of runs that trained to their end: a diverged run (its loss
# went NaN or inf) is measured too, its times and memory drawn, its loss
# curve up to the divergence.
MEASURED = ("ok", "diverged")

BARS = [("samples_per_s", "throughput (samples/s)", "throughput.png"),
        ("step_ms_median", "steady-state step time (ms)", "step_time.png"),
        ("compile_s", "compile time: first step minus steady state (s)", "compile_time.png"),
        ("peak_rss_mib", "peak RSS of the run (MiB)", "peak_memory.png")]


def bar(path, names, values, title, labels=None):
    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=80)
    bars = ax.bar(names, values, color="#4a7ab5")
    labels = labels or [f"{v:.0f}" if v >= 100 else f"{v:.3g}" for v in values]
    ax.bar_label(bars, labels=labels, fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def finite_points(values):
    """(steps, values) of the numbers in `values`, steps from 1: a diverged
    run's losses hold null (JSON's NaN or inf), which are left out."""
    points = [(i + 1, v) for i, v in enumerate(values or [])
              if isinstance(v, (int, float)) and math.isfinite(v)]
    return [s for s, _ in points], [v for _, v in points]


def label(name, r):
    return f"{name} (diverged)" if r.get("status") == "diverged" else name


def lines(path, runs, key, title, ylabel):
    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=80)
    for name, r in runs:
        steps, values = finite_points(r.get(key))
        ax.plot(steps, values, label=label(name, r), linewidth=1)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    if key == "step_ms":
        ax.set_yscale("log")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def table(path, res, runs):
    """The summary as a Markdown table (docs/PERFORMANCE.md pastes it)."""
    def fmt(v, spec):
        return format(v, spec) if isinstance(v, (int, float)) else "n/a"
    # On a GPU: the device memory each run allocated at most, and that less
    # the model's state per sample (kiln-bench's addActivationMemory).
    gpu = any("peak_gpu_mib" in r for _, r in runs)
    gpu_head = " peak GPU (MiB) | activations / sample (MiB) |" if gpu else ""
    rows = ["| system | samples/s | step (ms) | compile (s) | peak RSS (MiB) |" + gpu_head +
            f" largest batch in {res['config']['budget_gib']:g} GiB | loss first → last |",
            "|---|---|---|---|---|---|---|" + ("---|---|" if gpu else "")]
    for name in res["order"]:
        r = res["systems"].get(name, {})
        if r.get("status") not in MEASURED:
            rows.append(f"| {name} | {r.get('status', '?')}: {r.get('note', '')} | | | | | |"
                        + (" | |" if gpu else ""))
            continue
        b = r.get("budget")
        largest = "not searched" if b is None else f"{'≥ ' if b['capped'] else ''}{b['largest_batch']}"
        compile_s = fmt(r.get("compile_s"), ".1f")
        if "kiln_compile_s" in r:
            compile_s += f" ({r['kiln_compile_s']:.1f} measured)"
        gpu_cells = (f" {fmt(r.get('peak_gpu_mib'), '.0f')} | {fmt(r.get('activation_mib_per_sample'), '.1f')} |"
                     if gpu else "")
        # A diverged run's times stand; its loss column says where it went.
        loss = (f"{fmt(r.get('first_loss'), '.4f')} → diverged at step {r.get('first_nonfinite_step', '?')}"
                if r.get("status") == "diverged" else
                f"{fmt(r.get('first_loss'), '.4f')} → {fmt(r.get('last_loss'), '.4f')}")
        rows.append(f"| {label(name, r)} | {fmt(r.get('samples_per_s'), '.2f')} | {fmt(r.get('step_ms_median'), '.0f')} "
                    f"| {compile_s} | {fmt(r.get('peak_rss_mib'), '.0f')} |{gpu_cells} {largest} "
                    f"| {loss} |")
    every = res["config"].get("logging_steps", 1)
    rows.append("")
    rows.append("Step time: median of the second half of the steps; the loss read back every step."
                if every == 1 else
                f"Step time: median of the second half of the steps; the loss read back every {every} steps "
                "(as the Trainer logs), each window's time split over its steps.")
    with open(path, "w") as f:
        f.write("\n".join(rows) + "\n")


def main():
    results_path, out = sys.argv[1], sys.argv[2]
    with open(results_path) as f:
        res = json.load(f)
    runs = [(n, res["systems"][n]) for n in res["order"]
            if res["systems"].get(n, {}).get("status") in MEASURED]
    if not runs:
        print("plot.py: no successful runs to plot")
        return
    table(os.path.join(out, "table.md"), res, runs)
    if plt is None:
        print("plot.py: matplotlib is not installed; wrote table.md, no plots")
        return
    c = res["config"]
    tag = f"GPT-2 {c['n_layer']}L/{c['n_embd']}d, seq {c['seq']}, batch {c['batch']}"
    for key, title, name in BARS:
        have = [(label(n, r), r[key]) for n, r in runs if isinstance(r.get(key), (int, float))]
        if have:
            bar(os.path.join(out, name), [n for n, _ in have], [v for _, v in have], f"{title}\n{tag}")
    budget = [(n, r["budget"]) for n, r in runs if "budget" in r]
    if budget:  # "≥ n": n fitted and the search stopped at its cap
        bar(os.path.join(out, "largest_batch.png"), [n for n, _ in budget],
            [b["largest_batch"] for _, b in budget],
            f"largest batch under {c['budget_gib']} GiB "
            f"{'of GPU memory' if c.get('backend') == 'cuda' else 'peak RSS'}\n{tag}",
            [("≥ " if b["capped"] else "") + str(b["largest_batch"]) for _, b in budget])
    lines(os.path.join(out, "loss.png"), runs, "losses", f"training loss\n{tag}", "loss")
    lines(os.path.join(out, "step_times.png"), runs, "step_ms", f"step time\n{tag}", "ms (log)")
    print("plot.py: wrote plots to", out)


if __name__ == "__main__":
    main()
