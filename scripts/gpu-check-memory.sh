# gpu-check.sh's memory parts: the memory issue's GPU points, GPT-2 124M at
# seq 512 in bf16 (the check's `model` flags). Sourced by
# scripts/gpu-check.sh after gpu-check-parts.sh, which set work, results,
# root, bin and model; each part is INFO (the bars are judged in
# the closing note, from these lines):
#   maxbatch-bf16: kiln and KILN_GPU_MAXBATCH_PEERS (default
#     torch,torch_compile) at batch 16 for the bench's 21 steps, every run
#     capped at 16 GiB: each system's step time (the speed issue's bf16
#     step, torch.compile beside kiln), peak GPU memory and activations per
#     sample; then the largest
#     batch in the cap for kiln and PyTorch eager (torch.compile, whose
#     every probe recompiles, is not searched);
#   batch60-bf16: batch 60 for 4 steps, the GPU's used memory sampled, the
#     step time per sample against batch 16's;
#   advisor-bf16: kiln at batches 8 and 32 beside batch 16: the planned
#     peak against the device memory kiln's programs held at most (the
#     meter) and the GPU's used memory (CUDA context and libraries too);
#   ab-partition-bf16: batch 16 with and without the save/recompute
#     partitioner (KILN_PARTITION=0), 8 steps each: step time and peak.
# KILN_GPU_CHECK_PARTS=memory runs them alone, in this order.
# shellcheck shell=bash

# The run whose batch-16 kiln figures the parts compare with: the bf16
# bench's when the full check ran it, else maxbatch-bf16's first run.
batch16_run() {
  if [[ -f $work/bench-bf16/results.json ]]; then
    echo "$work/bench-bf16"
  else
    echo "$work/maxbatch"
  fi
}

run_maxbatch() {
  run_part maxbatch-bf16 400 kiln-bench --backend cuda --precision bf16 \
    "${model[@]}" --batch 16 --steps "$bench_steps" --modes compiled \
    --peers "${KILN_GPU_MAXBATCH_PEERS-torch,torch_compile}" --parity_steps 4 \
    --budget_gib 16 --bisect_max_batch 128 --bisect_steps 2 --bisect_max_probes 5 \
    --bisect_systems kiln_compiled,torch \
    --max_rss_gib 48 --peers_dir "$root/bench/peers" --out "$work/maxbatch"
  record maxbatch-bf16 INFO "$(exit_note maxbatch-bf16): $(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["systems"]
print("; ".join("%s: largest batch %s%s, %.1f ms a step and %.0f MiB at batch 16%s (%.1f MiB of activations a sample)" % (
    n, "≥ " if r.get("budget", {}).get("capped") else "", r.get("budget", {}).get("largest_batch"),
    r.get("step_ms_median", 0), r.get("peak_gpu_mib", 0),
    ", planned %.0f" % r["kiln_planned_peak_mib"] if "kiln_planned_peak_mib" in r else "",
    r.get("activation_mib_per_sample", 0)) for n, r in s.items()))' \
    "$work/maxbatch/results.json" 2>&1 | tail -n 1)"
  if [[ -f $work/maxbatch/table.md ]]; then
    { echo; echo "## The largest batch in 16 GiB (bf16)"; echo; cat "$work/maxbatch/table.md"; } >> "$results/bench.md"
  fi
}

# The memory issue's batch: 124M at batch 60 in bf16 (the plan says 10.7
# GiB), 4 steps: the most GPU memory it held and the step time per sample
# against batch 16's.
run_batch60() {
  start_sampling "$work/batch60-memory.txt"
  run_part batch60-bf16 120 kiln-bench --backend cuda --precision bf16 \
    "${model[@]}" --batch 60 --steps 4 --modes compiled --peers "" \
    --bisect_max_batch 0 --max_rss_gib 48 --out "$work/batch60"
  stop_sampling
  record batch60-bf16 INFO "$(exit_note batch60-bf16): $(python3 -c 'import json, statistics, sys
r = json.load(open(sys.argv[1]))["systems"]["kiln_compiled"]
used = [int(x) for x in open(sys.argv[3]).read().split() if x.isdigit()]
s16 = json.load(open(sys.argv[2]))["systems"]["kiln_compiled"]["step_ms"]
s60 = r["step_ms"]
m16 = statistics.median(s16[len(s16) // 2:]) / 16
m60 = statistics.median(s60[len(s60) // 2:]) / 60
print("%s: planned peak %.0f MiB, GPU memory used at most %d MiB; %.2f ms per sample (batch 16: %.2f)" % (
    r["status"], r.get("kiln_planned_peak_mib", 0), max(used or [0]), m60, m16))' \
    "$work/batch60/results.json" "$(batch16_run)/results.json" \
    "$work/batch60-memory.txt" 2>&1 | tail -n 1)"
}

# The batch advisor's plan against what the device held, at 3 batches.
run_advisor() {
  local batch
  for batch in 8 32; do
    start_sampling "$work/advisor-$batch-memory.txt"
    run_part "advisor-bf16-$batch" 60 kiln-bench --backend cuda \
      --precision bf16 "${model[@]}" --batch "$batch" --steps 2 \
      --modes compiled --peers "" --bisect_max_batch 0 --max_rss_gib 48 \
      --out "$work/advisor-$batch"
    stop_sampling
  done
  record advisor-bf16 INFO "$(exit_note advisor-bf16-32): $(python3 -c 'import json, sys
def line(batch, path, sampled):
    try:
        r = json.load(open(path))["systems"]["kiln_compiled"]
        plan, held = r["kiln_planned_peak_mib"], r["peak_gpu_mib"]
    except (OSError, KeyError, ValueError):
        return "batch %s: no figures" % batch
    used = [int(x) for x in open(sampled).read().split() if x.isdigit()] if sampled else []
    return "batch %s: planned %.0f MiB, held %.0f MiB (%+.1f%%)%s" % (
        batch, plan, held, 100 * (held - plan) / plan,
        ", GPU used at most %d MiB" % max(used) if used else "")
args = sys.argv[1:]
print("; ".join(line(*args[i:i + 3]) for i in range(0, len(args), 3)))' \
    8 "$work/advisor-8/results.json" "$work/advisor-8-memory.txt" \
    16 "$(batch16_run)/results.json" "" \
    32 "$work/advisor-32/results.json" "$work/advisor-32-memory.txt" \
    2>&1 | tail -n 1)"
}

# Batch 16 with and without the partitioner (KILN_PARTITION=0: everything
# forward makes is saved), 8 steps each on the batch-16 run's weights and
# batches: recomputation's cost in step time, and what it saves at the
# peak. The same arithmetic, so the losses should be equal.
run_partition_ab() {
  local base setting
  base=$(batch16_run)
  [[ -f $base/batches.npy ]] || return 0
  for setting in 1 0; do
    KILN_PARTITION=$setting run_part "ab-partition-bf16-$setting" 60 \
      kiln-bench --worker kiln --mode compiled --backend cuda "${model[@]}" \
      --precision bf16 --steps 8 --weights "$base/weights.safetensors" \
      --batches "$base/batches.npy" --result "$work/ab-partition-$setting.json"
  done
  record ab-partition-bf16 INFO "$(exit_note ab-partition-bf16-0): $(python3 -c 'import json, statistics, sys
on, off = (json.load(open(p)) for p in sys.argv[1:3])
def median(r):
    s = r["step_ms"]
    return statistics.median(s[len(s) // 2:])
apart = max((abs(x - y) / abs(x) for x, y in zip(on.get("losses", []), off.get("losses", [])) if x), default=float("nan"))
print("batch 16: %.1f ms a step with the partitioner, %.1f ms without (%+.1f%%); peak %.0f MiB with, %.0f MiB without; losses at most %.2g apart" % (
    median(on), median(off), 100 * (median(on) - median(off)) / median(off),
    on.get("peak_gpu_mib", 0), off.get("peak_gpu_mib", 0), apart))' \
    "$work/ab-partition-1.json" "$work/ab-partition-0.json" 2>&1 | tail -n 1)"
}

run_memory_parts() {
  run_maxbatch
  collect
  run_batch60
  run_advisor
  run_partition_ab
  collect
}
