#!/usr/bin/env python3
"""Soak test: runs kiln-train for many steps of a small GPT-2 and samples the
process while it trains: resident memory (VmRSS), open file descriptors,
and on --backend cuda the device memory nvidia-smi reports for it. At the end
it reads kiln's metrics (how many graphs were compiled) and fits a line to
memory against training step after the warm-up, so a leak shows as a slope.

  scripts/soak.py --steps 10000                  # the full soak (CPU)
  scripts/soak.py --steps 10000 --backend cuda   # on the GPU machine
  scripts/soak.py --steps 1000 --check           # CI: asserts the bounds

Writes soak.csv (one row per sample) and soak.json (the summary) into --out.
With --check it exits 1 unless: the compile count is the number of distinct
graphs (the training step and the evaluation step: 2), the open descriptor
count after warm-up is constant, and resident memory grows by at most
--max-growth-kib-per-1k-steps per 1000 steps after warm-up (a leak of one
small tensor per step, ~1 KiB, exceeds the default bound in 1000 steps).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

MODEL = ["--n_layer", "2", "--n_embd", "64", "--n_head", "2",
         "--n_positions", "64", "--block_size", "32",
         "--per_device_train_batch_size", "8", "--default_corpus_lines", "400"]
# --tiny: for the fake CUDA driver (tests/fake-cuda), whose host GEMMs are
# slow: a soak of the CUDA runtime's host side without a GPU.
TINY = ["--n_layer", "1", "--n_embd", "32", "--n_head", "2",
        "--n_positions", "32", "--block_size", "16",
        "--per_device_train_batch_size", "4", "--default_corpus_lines", "100"]


def proc_rss_kib(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def proc_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def device_mib(pid):
    """The GPU memory nvidia-smi attributes to `pid`, or None."""
    if not shutil.which("nvidia-smi"):
        return None
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                          "--format=csv,noheader,nounits"],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == 2 and fields[0] == str(pid):
            return int(fields[1])
    return None


def slope(xs, ys):
    """Least-squares slope of ys over xs (0 with fewer than 2 points)."""
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    return 0.0 if var == 0 else sum(
        (x - mx) * (y - my) for x, y in zip(xs, ys)) / var


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=10000)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--kiln-train", default=None,
                        help="the kiln-train binary (default: build/bin/kiln-train,"
                        " then PATH)")
    parser.add_argument("--out", default="soak-results")
    parser.add_argument("--interval", type=float, default=0.1,
                        help="seconds between samples")
    parser.add_argument("--warmup", type=float, default=0.2,
                        help="share of the steps left out of the fits")
    parser.add_argument("--tiny", action="store_true",
                        help="a 1-layer, 32-wide model (for the fake driver)")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--max-growth-kib-per-1k-steps", type=float,
                        default=512.0)
    args = parser.parse_args()

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    kiln_train = shutil.which(args.kiln_train) if args.kiln_train else next(
        (p for p in [os.path.join(root, "build", "bin", "kiln-train"),
                     shutil.which("kiln-train")] if p and os.access(p, os.X_OK)),
        None)
    if not kiln_train:
        sys.exit("soak.py: no kiln-train (build it, or pass --kiln-train)")
    os.makedirs(args.out, exist_ok=True)
    logging_steps = max(1, args.steps // 100)
    cmd = [kiln_train, "--backend", args.backend, "--max_steps",
           str(args.steps), "--logging_steps", str(logging_steps)] + (
               TINY if args.tiny else MODEL)
    start = time.monotonic()
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    # (time, step) of each loss line: a sample's step is interpolated
    # between them (the stdout log says no step, only its order).
    marks = [(start, 0)]
    stdout_lines, stderr_text = [], []

    def read_stdout():
        for line in child.stdout:
            stdout_lines.append(line)
            if line.startswith("{'loss'"):
                marks.append((time.monotonic(), len(marks) * logging_steps))

    def read_stderr():
        stderr_text.append(child.stderr.read())

    readers = [threading.Thread(target=read_stdout),
               threading.Thread(target=read_stderr)]
    for reader in readers:
        reader.start()
    samples = []
    while child.poll() is None:
        try:
            samples.append({"time": time.monotonic(),
                            "rss_kib": proc_rss_kib(child.pid),
                            "fds": proc_fds(child.pid),
                            "device_mib": device_mib(child.pid)
                            if args.backend == "cuda" else None})
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(args.interval)
    for reader in readers:
        reader.join()
    code = child.wait()
    seconds = time.monotonic() - start
    if code != 0:
        sys.exit("soak.py: kiln-train exited %d:\n%s" % (code,
                                                         stderr_text[0][-3000:]))

    def step_at(t):
        for (t0, s0), (t1, s1) in zip(marks, marks[1:]):
            if t <= t1:
                return s0 + (s1 - s0) * (t - t0) / max(t1 - t0, 1e-9)
        return None  # after the last loss line: evaluation, saving

    for sample in samples:
        sample["step"] = step_at(sample["time"])
    training = [s for s in samples if s["step"] is not None]
    steady = [s for s in training if s["step"] >= args.warmup * args.steps]
    with open(os.path.join(args.out, "soak.csv"), "w") as csv:
        csv.write("seconds,step,rss_kib,fds,device_mib\n")
        for s in samples:
            csv.write("%.3f,%s,%d,%d,%s\n" % (
                s["time"] - start,
                "" if s["step"] is None else "%.0f" % s["step"], s["rss_kib"],
                s["fds"], "" if s["device_mib"] is None else s["device_mib"]))

    compiles = re.search(r"compiles:\s+(\d+)", stderr_text[0])
    steps = [s["step"] for s in steady]
    rss_slope = slope(steps, [s["rss_kib"] for s in steady]) * 1000
    device = [s for s in steady if s["device_mib"] is not None]
    summary = {
        "command": " ".join(cmd),
        "steps": args.steps,
        "seconds": round(seconds, 1),
        "samples": len(samples),
        "steady_samples": len(steady),
        "compiles": int(compiles.group(1)) if compiles else None,
        "rss_kib_first": steady[0]["rss_kib"] if steady else None,
        "rss_kib_last": steady[-1]["rss_kib"] if steady else None,
        "rss_kib_max": max((s["rss_kib"] for s in samples), default=None),
        "rss_growth_kib_per_1k_steps": round(rss_slope, 1),
        "fds_min": min((s["fds"] for s in steady), default=None),
        "fds_max": max((s["fds"] for s in steady), default=None),
        "device_mib_growth_per_1k_steps": round(slope(
            [s["step"] for s in device],
            [s["device_mib"] for s in device]) * 1000, 3) if device else None,
        "device_mib_max": max((s["device_mib"] for s in device), default=None),
    }
    with open(os.path.join(args.out, "soak.json"), "w") as out:
        json.dump(summary, out, indent=2)
    print(json.dumps(summary, indent=2))

    if not args.check:
        return 0
    failures = []
    if summary["compiles"] != 2:
        failures.append("compiled %s graphs; expected 2 (the step and the "
                        "evaluation)" % summary["compiles"])
    if len(steady) < 5:
        failures.append("only %d samples after warm-up: too few to judge "
                        "(raise --steps or lower --interval)" % len(steady))
    elif summary["fds_max"] != summary["fds_min"]:
        failures.append("open descriptors changed from %d to %d while "
                        "training" % (summary["fds_min"], summary["fds_max"]))
    if rss_slope > args.max_growth_kib_per_1k_steps:
        failures.append("resident memory grows by %.1f KiB per 1000 steps "
                        "(bound %.1f)" % (rss_slope,
                                          args.max_growth_kib_per_1k_steps))
    for failure in failures:
        print("FAIL: " + failure)
    if not failures:
        print("PASS: %d steps, %d compiles, %d open descriptors, resident "
              "memory growth %.1f KiB per 1000 steps" % (
                  args.steps, summary["compiles"], summary["fds_max"],
                  rss_slope))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
