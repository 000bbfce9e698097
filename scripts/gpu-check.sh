#!/usr/bin/env bash
# The whole GPU suite in one command, run on the GPU machine from the
# repository root with a prebuilt bundle (scripts/bundle.sh). Each part
# runs under its own time limit, a failing part is recorded and the next
# one runs; the whole check fits in ~9 minutes on an H100:
#   1. bench-124m: kiln-bench --backend cuda, GPT-2 124M (seq 512, batch 16,
#      dropout 0.1, AdamW), 21 steps with the loss read every 10 (as the
#      Trainer logs: --logging_steps), kiln compiled and PyTorch eager fp32,
#      plus its dropout-0 parity runs of 4 steps (the step times are the
#      issue's speed point; run first, alone on the machine);
#   2. in the background, on the CPU: kiln --backend cpu on the same
#      weights and first 4 batches (cpu-124m), and the SST-2 run on the cpu
#      (sst2-cpu);
#   3. the GPU unit tests (CudaRuntimeTest, CudaBackendTest, NumericsTest,
#      CudaRandomGraphTest with KILN_RANDOM_GRAPHS=1000, LlamaTest's parity
#      with transformers on cuda), --gtest_output=json;
#   4. sst2-cuda: 300 steps of kiln-train on SST-2 on the GPU, then its
#      eval loss and model folder; hf-load: transformers' GPT2LMHeadModel
#      loads that folder and computes the same eval loss
#      (scripts/gpu/hf_load.py);
#   5. compute-sanitizer memcheck and racecheck on 3 steps of the tiny
#      kiln-train model;
#   6. the judgements: parity-124m (scripts/gpu/parity.py bench: the first
#      4 losses of kiln cuda within 1e-4 of kiln cpu and of PyTorch) and
#      sst2-curves (parity.py curves; its tolerances are explained there);
#   7. (INFO, last, when time is left) KILN_PROFILE of the cuda 124M run's
#      first 4 steps: the summary in logs.txt, trace-124m.json; then the ab-*
#      parts: kiln's 124M step with one default changed beside the bench's
#      (ab-elements: KILN_CUDA_ELEMENTS_PER_THREAD=1, one element a thread in
#      fusions without reduces, not 4; ab-attention-chunk:
#      KILN_ATTENTION_CHUNK_MB=256, one chunk; ab-attention-3-chunks:
#      KILN_ATTENTION_CHUNK_MB=86, 3 chunks, not 4; ab-loss-chunk:
#      KILN_LOSS_CHUNK_MB=64, 26 loss chunks, not 7; ab-loss-one-chunk:
#      KILN_LOSS_CHUNK_MB=2048, the logits whole; ab-vocab-pad:
#      KILN_VOCAB_MULTIPLE=64, lm_head on 50304 rows);
#   8. (INFO, when time is left) bench-124m-bf16: the same kiln-bench in
#      mixed precision (--precision bf16: kiln's kiln-autocast, PyTorch's
#      autocast, JAX's bf16 products) against PyTorch eager, torch.compile
#      and JAX/XLA, its table appended to bench.md (about 3 minutes: give the
#      whole check KILN_GPU_CHECK_SECONDS=540), then ab-vocab-pad-bf16 (the
#      vocabulary padded, in bf16, beside that bench's kiln step) and
#      profile-124m-bf16 (KILN_PROFILE of 4 bf16 steps: its summary) and the
#      memory parts (scripts/gpu-check-memory.sh: maxbatch-bf16,
#      batch60-bf16, advisor-bf16, ab-partition-bf16); between them,
#      ab-flash-attention-bf16 (kiln's flash attention kernels,
#      KILN_CUDA_ATTENTION=flash, beside the bf16 bench's kiln step: step
#      time and losses), ab-cudnn-attention-bf16 (the same with cuDNN's fused
#      attention, KILN_CUDA_ATTENTION=cudnn) and profile-124m-bf16-flash (its
#      KILN_PROFILE), before them warm-start-124m (the bf16 step compiled
#      into a fresh persistent cache, then loaded from it by a second
#      process: its first step's time against the cold one's), and before
#      those flash-kernels and cudnn-attention (CudaFlashAttentionTest with
#      each library running the attention thunks, against the reference on
#      the GPU); after the bf16 profile, the kernel-* parts: each module of
#      bench/kernels/ (the bf16 step's slowest fusions, flash attention; the
#      attention modules also with cuDNN's, kernel-cudnn-*) timed alone with
#      kiln-run and KILN_PROFILE, by default, with KILN_CUDA_ROW_UNROLL=1 and
#      with KILN_CUDA_HOLD_ROWS=0, then the default under Nsight Compute;
#      ab-hold-rows-bf16 (KILN_CUDA_HOLD_ROWS=0: each pass of a warp's row
#      loads the row and computes its body again, as before 2026-11-29,
#      rather than the lanes holding it), ab-elements-8-bf16
#      (KILN_CUDA_ELEMENTS_PER_THREAD=8: 16-byte bf16 accesses, not 8-byte;
#      the kernel-* parts time it too; random-graphs-8 checks its kernels);
#      and ab-row-unroll-bf16 (the bf16 step with KILN_CUDA_ROW_UNROLL=1:
#      one-lane threads read one point of a row before storing it, as
#      before 2026-11-30, not 8),
#      ab-gemm-epilogue-bf16 (KILN_GEMM_EPILOGUE=0: the f32 sums' adds as
#      kernels, not in their GEMM), ab-noalias-bf16 (KILN_CUDA_NOALIAS=0:
#      kernels' buffers as plain pointers) and ab-gemm-views-bf16
#      (KILN_GEMM_VIEWS=0: slices GEMMs read copied out) and
#      ab-kernel-groups-bf16 (KILN_KERNEL_GROUPS=0: every kernel a launch of
#      its own, AdamW's 148 among them).
#  11. (INFO, last, when time is left) soak-cuda: scripts/soak.py's
#      10,000 steps on cuda with --check (compile count, descriptors,
#      resident and GPU memory over the run).
#  10. (KILN_GPU_CHECK_PARTS=lora only) lora-8b: kiln-bench's Llama-3-8B-
#      shaped LoRA run (random weights drawn on the GPU, base stored in bf16,
#      bf16 products, batch 4 x seq 1024, r 8 on q_proj,v_proj) against
#      transformers + PEFT eager and torch.compile, with the GPU's used
#      memory sampled for kiln (INFO); then kiln alone with cuDNN's
#      attention (lora-8b-cudnn; KILN_GPU_LORA_CUDNN=0 skips it) and, with
#      KILN_GPU_LORA_SMALL_PRODUCTS_AB=1, with KILN_SMALL_PRODUCTS=0
#      (lora-8b-gemm-small-products: v's rank-8 up-projection a GEMM).
#   9. (when time is left) bench-124m-fp16 (INFO): the same in fp16 (f16
#      products with dynamic loss scaling; PyTorch's autocast + GradScaler)
#      against KILN_GPU_FP16_PEERS (default torch). (Part 4, with all
#      parts, also runs sst2-cuda-bf16 and sst2-cuda-fp16, judged: its 300
#      SST-2 steps in bf16 and fp16 must end within 2% of its fp32 loss
#      with no NaN, the fp16 steps skipped counted from the log.)
#
# Environment: KILN_BUNDLE (default bundle/; unpacked from bundle.tar.xz
# when only that is there), OUT (the results folder; default gpu-results/),
# KILN_CUDA_ARCH (default sm_90), KILN_SST2_TRAIN (SST-2's train.tsv;
# default shared/data/sst2/train.tsv in the tree, since ../shared does not
# reach the GPU machine: copy ../shared/data/sst2 there),
# KILN_GPU_CHECK_SECONDS (the whole check's budget, default 520),
# KILN_GPU_BENCH_SECONDS (part 1's, default 270), KILN_GPU_CHECK_PARTS
# (all, the default; or speed: parts 1, 7 and 8 only, the measurements
# without the judged tests, for a short first call of a session, whose
# OVERALL line then says SPEED ONLY and judges nothing) and
# KILN_GPU_CHECK_PARTS=lora runs part 10 alone (a call of its own: the
# fine-tuning issue's Llama-3-8B-shaped LoRA bench takes the whole budget),
# KILN_GPU_CHECK_PARTS=memory runs the memory parts alone, then soak-cuda
# (scripts/gpu-check-memory.sh; KILN_GPU_MAXBATCH_PEERS, default torch),
# KILN_GPU_BF16_PEERS (part 8's peers; default torch,torch_compile,jax;
# empty: kiln alone), KILN_GPU_FP16_PEERS (part 9's; default torch) and
# KILN_GPU_SKIP (part names, comma-separated, not to run: information parts
# whose figures a session already has; a judged part named there fails).
#
# Writes six files into the results folder (the device tool brings back
# at most 8): summary.txt (one PASS/FAIL/INFO line per part, then OVERALL),
# env.txt (date, GPU, driver, toolkit), logs.txt (every part's log, cut to
# its head and tail when long), results.json (every JSON: gtest's,
# kiln-bench's, the cpu run's, the parity figures) and bench.md (kiln-bench's
# table and the parity tables) and trace-124m.json (part 7's trace). Exit
# status 0 when every part passed (INFO lines are not judged).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
bundle=${KILN_BUNDLE:-$root/bundle}
results=${OUT:-$root/gpu-results}
arch=${KILN_CUDA_ARCH:-sm_90}
parts=${KILN_GPU_CHECK_PARTS:-all}
if [[ $parts != all && $parts != speed && $parts != lora && $parts != memory ]]; then
  echo "gpu-check: KILN_GPU_CHECK_PARTS must be all, speed, lora or memory, not '$parts'" >&2
  exit 2
fi
start=$(date +%s)
deadline=$((start + ${KILN_GPU_CHECK_SECONDS:-520}))

mkdir -p "$results"
summary=$results/summary.txt logs=$results/logs.txt
rm -f "$summary" "$logs" "$results/env.txt" "$results/results.json" \
  "$results/bench.md"
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-gpu-check.XXXXXX")
failures=0

# Running parts and recording them: run_part, start_sampling, record,
# record_by_exit, exit_note, loss_note, bench_note, collect.
# shellcheck source=scripts/gpu-check-parts.sh
source "$root/scripts/gpu-check-parts.sh"

#===--- The bundle and the machine ---------------------------------------===#

if [[ ! -d $bundle/bin && -f $bundle.tar.xz ]]; then
  mkdir -p "$bundle" && tar -xJf "$bundle.tar.xz" -C "$bundle"
fi
bin=$bundle/bin
export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$bin:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer:$PATH
export KILN_SOURCE_DIR=$root KILN_CUDA_ARCH=$arch
python=$(command -v python3 || true)
export KILN_BENCH_PYTHON=${KILN_BENCH_PYTHON:-$python}

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "host: $(hostname), $(nproc) cores, $(free -g | awk '/^Mem:/{print $2}') GiB"
  echo "kernel: $(uname -r)"
  echo "--- nvidia-smi -L"
  nvidia-smi -L 2>&1
  echo "--- GPU, driver"
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap \
    --format=csv 2>&1
  echo "--- toolkit"
  for tool in nvcc ptxas compute-sanitizer; do
    if command -v "$tool" > /dev/null; then
      echo "$tool: $("$tool" --version 2>&1 | grep -iE 'release|version' | tail -n 1)"
    else
      echo "$tool: not found"
    fi
  done
  echo "--- python"
  "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -n 1
  echo "--- kiln"
  echo "tree: $root; bundle: $bundle; arch: $arch"
  [[ -f $root/.git/HEAD ]] && echo "git: $(git -C "$root" describe --always --dirty 2>&1)"
  ls -l "$bin" 2>&1
} > "$results/env.txt"

tools=(kiln-train kiln-run kiln-bench kilnc CudaRuntimeTest CudaBackendTest
  CudaRandomGraphTest)
{
  for t in "${tools[@]}"; do
    [[ -x $bin/$t ]] || echo "missing: $bin/$t"
  done
  for t in "$bin"/*; do ldd "$t" 2> /dev/null | grep 'not found' | sed "s|^|$(basename "$t"): |"; done
} > "$work/bundle.log" 2>&1
echo "0 0 0" > "$work/bundle.rc"
if [[ -s $work/bundle.log ]]; then
  record bundle FAIL "binaries or libraries missing (see logs.txt)"
  echo "gpu-check: the bundle at $bundle is incomplete:" >&2
  cat "$work/bundle.log" >&2
else
  record bundle PASS "${#tools[@]} programs, every library found"
fi

#===--- 10. LoRA on a Llama-3-8B-shaped model (a call of its own) --------===#

# The fine-tuning issue's anchor (../shared/gpu/llama_lora.py's model): 32
# layers, hidden 4096, MLP 14336, 32 heads over 8 key/value heads, 128256
# tokens; every system draws its own random weights (--init own: 16 GB of
# bf16 is not written to a file), so their losses do not compare, their
# step times and memory do. kiln's GPU memory is sampled with nvidia-smi
# (its worker runs first, alone); PyTorch's is max_memory_allocated.
lora_model=(--model llama --n_layer 32 --n_embd 4096 --n_head 32 --n_kv_head 8
  --n_inner 14336 --vocab 128256 --seq 1024 --batch 4 --steps 6
  --warmup_steps 0 --lr 1e-4 --weight_decay 0 --dropout 0
  --lora_r 8 --lora_alpha 16 --lora_dropout 0.05 --lora_targets q_proj,v_proj
  --torch_dtype bfloat16 --precision bf16 --init own --modes compiled)
# KILN_GPU_LORA_FLAGS replaces them (tests/cuda/gpu-check-lora.test: a
# tiny Llama on the fake driver).
[[ -n ${KILN_GPU_LORA_FLAGS:-} ]] && read -r -a lora_model <<< "$KILN_GPU_LORA_FLAGS"
if [[ $parts == lora ]]; then
  start_sampling "$work/lora-8b-memory.txt"
  run_part lora-8b "${KILN_GPU_CHECK_SECONDS:-520}" kiln-bench --backend cuda \
    "${lora_model[@]}" --peers "${KILN_GPU_LORA_PEERS-torch,torch_compile}" --bisect_max_batch 0 \
    --max_rss_gib 100 --peers_dir "$root/bench/peers" --out "$work/lora-8b"
  stop_sampling
  for run in "$work"/lora-8b/runs/*.log; do
    [[ -e $run ]] && { echo "--- $(basename "$run")"; tail -n 40 "$run"; } >> "$work/lora-8b.log"
  done
  lora_note=$(python3 -c 'import json, statistics, sys
results = json.load(open(sys.argv[1]))
systems, tokens = results["systems"], results["config"]["batch"] * results["config"]["seq"]
used = [int(x) for x in open(sys.argv[2]).read().split() if x.isdigit()]
def line(name, r):
    s = r.get("step_ms") or []
    if not s: return "%s %s" % (name, r.get("status"))
    ms = statistics.median(s[len(s) // 2:])
    mem = "peak allocated %.0f MiB" % r.get("peak_gpu_mib", 0)
    if name.startswith("kiln"):  # its worker ran first, alone on the GPU
        mem += ", GPU used at most %d MiB" % max(used or [0])
    return "%s %.1f ms (%.0f tokens/s, %s)" % (name, ms, tokens / ms * 1e3, mem)
print("; ".join(line(n, r) for n, r in systems.items()))' \
    "$work/lora-8b/results.json" "$work/lora-8b-memory.txt" 2>&1 | tail -n 1)
  record lora-8b INFO "$(exit_note lora-8b): $lora_note"
  # kiln alone again with one switch (NAME SECONDS VAR=VALUE): what the
  # switch's default buys this step.
  lora_kiln_alone() {
    ( export "$3"
      run_part "$1" "$2" kiln-bench --backend cuda "${lora_model[@]}" --peers "" \
        --bisect_max_batch 0 --max_rss_gib 100 --out "$work/$1" )
    local note
    note=$(python3 -c 'import json, statistics, sys
r = json.load(open(sys.argv[1]))["systems"]["kiln_compiled"]
s = r.get("step_ms") or []
print("%.1f ms a step with %s (peak allocated %.0f MiB)" % (
    statistics.median(s[len(s) // 2:]), sys.argv[2], r.get("peak_gpu_mib", 0)) if s else r.get("status"))' \
      "$work/$1/results.json" "$3" 2>&1 | tail -n 1)
    record "$1" INFO "$(exit_note "$1"): $note"
  }
  # cuDNN's fused attention for the 512 softmax chunks (29 GB of the
  # plan's 107): what flash attention buys this step.
  [[ ${KILN_GPU_LORA_CUDNN:-1} == 1 ]] &&
    lora_kiln_alone lora-8b-cudnn 150 KILN_CUDA_ATTENTION=cudnn
  # LoRA's rank-8 products as GEMMs, as before 2026-12-01 (opt-in: the
  # A/B of kiln-fuse-small-products, docs/PASSES.md).
  [[ ${KILN_GPU_LORA_SMALL_PRODUCTS_AB:-0} == 1 ]] &&
    lora_kiln_alone lora-8b-gemm-small-products 150 KILN_SMALL_PRODUCTS=0
  [[ -f $work/lora-8b/table.md ]] && cp "$work/lora-8b/table.md" "$results/bench.md"
  [[ -f $work/lora-8b/results.json ]] && cp "$work/lora-8b/results.json" "$results/results.json"
  echo "OVERALL LORA ONLY  ($(($(date +%s) - start)) s)" >> "$summary"
  cat "$summary"
  exit 0
fi

#===--- 1. GPT-2 124M on the GPU: speed, and the runs parity compares -----===#

# The model and training flags kiln-bench passes its workers (modelFlags):
# the cpu run below must repeat them exactly. Every system reads its loss
# every 10 steps, as the Trainer logs, so kiln's host records a step while
# the GPU runs the last (2026-11-28; runs 1-10 read it every step).
model=(--n_layer 12 --n_embd 768 --n_head 12 --vocab 50257 --seq 512
  --warmup_steps 2 --lr 0.001 --weight_decay 0.01 --dropout 0.1
  --max_grad_norm 1 --seed 0 --logging_steps 10)
# KILN_GPU_MODEL_FLAGS replaces them (tests/cuda/gpu-check-memory.test runs
# the memory parts on a tiny model and the fake driver).
[[ -n ${KILN_GPU_MODEL_FLAGS:-} ]] && read -r -a model <<< "$KILN_GPU_MODEL_FLAGS"
bench_steps=21

# The reliability issue's soak on the GPU: scripts/soak.py's 10,000 steps
# of its small GPT-2 on cuda, with the process's resident memory,
# descriptors and GPU memory (nvidia-smi) sampled; --check applies CI's
# bounds (2 compiles, constant descriptors, resident growth) to it. Last,
# with whatever time the check has left.
run_soak() {
  run_part soak-cuda 150 python3 "$root/scripts/soak.py" --steps 10000 \
    --backend cuda --kiln-train "$bin/kiln-train" --out "$work/soak" --check
  record soak-cuda INFO "$(exit_note soak-cuda): $(python3 -c 'import json, sys
print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True)[:700])' \
    "$work/soak/soak.json" 2>&1 | tail -n 1)"
  collect
}
# The memory issue's parts (scripts/gpu-check-memory.sh): alone with
# KILN_GPU_CHECK_PARTS=memory, then the soak with the time left.
# shellcheck source=scripts/gpu-check-memory.sh
source "$root/scripts/gpu-check-memory.sh"
if [[ $parts == memory ]]; then
  run_memory_parts
  run_soak
  echo "OVERALL MEMORY ONLY  ($(($(date +%s) - start)) s)" >> "$summary"
  cat "$summary"
  exit 0
fi
run_part bench-124m "${KILN_GPU_BENCH_SECONDS:-270}" kiln-bench --backend cuda "${model[@]}" --batch 16 \
  --steps "$bench_steps" --modes compiled --peers torch --parity_steps 4 \
  --bisect_max_batch 0 --max_rss_gib 48 --peers_dir "$root/bench/peers" \
  --out "$work/bench"
for run in "$work"/bench/runs/*.log; do
  [[ -e $run ]] && { echo "--- $(basename "$run")"; tail -n 40 "$run"; } >> "$work/bench-124m.log"
done
# PASS when kiln compiled and PyTorch both finished ("status": "ok").
if bench_status=$(python3 -c 'import json, sys
systems = json.load(open(sys.argv[1]))["systems"]
print(" ".join(name + "=" + str(r.get("status")) for name, r in systems.items()))
sys.exit(0 if len(systems) == 2 and all(r.get("status") == "ok" for r in systems.values()) else 1)' \
  "$work/bench/results.json" 2> /dev/null); then
  record bench-124m PASS "$bench_status"
else
  record bench-124m FAIL "$(exit_note bench-124m) ${bench_status:-no results.json}"
fi
[[ -f $work/bench/table.md ]] && cp "$work/bench/table.md" "$results/bench.md"
collect
# The bench's first 4 batches: what the cpu run repeats and the profile runs.
if [[ -f $work/bench/batches.npy ]]; then
  python3 -c 'import numpy as np, sys
np.save(sys.argv[2], np.load(sys.argv[1])[:4])' \
    "$work/bench/batches.npy" "$work/first4.npy" 2> "$work/first4.log"
fi

if [[ $parts == all ]]; then

#===--- 2. In the background: the cpu runs -------------------------------===#

# kiln on the cpu repeats the cuda main run's first 4 steps: same weights,
# flags and schedule (--steps 21 with 4 batches: the worker runs as many
# steps as there are batches, on the schedule of --steps), same dropout
# masks (kiln's Philox stream is the same bits on both backends).
cpu_pid=
if [[ -f $work/bench/weights.safetensors && -f $work/first4.npy ]]; then
  OMP_NUM_THREADS=8 run_part cpu-124m 330 kiln-bench --worker kiln \
    --mode compiled --backend cpu "${model[@]}" --steps "$bench_steps" \
    --weights "$work/bench/weights.safetensors" --batches "$work/first4.npy" \
    --result "$work/cpu_124m.json" &
  cpu_pid=$!
else
  echo "no weights or batches from bench-124m: nothing to repeat" >> "$work/cpu-124m.log"
  echo "1 0 0" > "$work/cpu-124m.rc"
fi

# SST-2 (examples/README.md): byte-level GPT-2, 4 layers of 256, blocks of
# 128, batch 8, 300 steps with 30 of warmup, dropout 0.1 (kiln-train's
# default; the masks are the same bits on both backends).
sst2=${KILN_SST2_TRAIN:-}
for candidate in "$sst2" "$root/shared/data/sst2/train.tsv" \
  "$root/../shared/data/sst2/train.tsv"; do
  [[ -n $candidate && -f $candidate ]] && { sst2=$candidate; break; }
done
sst2_note=""
if [[ -z $sst2 || ! -f $sst2 ]]; then
  sst2=$root/tests/data/sst2-tiny/train.tsv
  sst2_note="(SST-2 not found: tests/data/sst2-tiny instead, 30 sentences; copy ../shared/data/sst2 to shared/data/sst2)"
fi
sst2_flags=(--dataset sst2 --train_file "$sst2" --n_layer 4 --n_embd 256
  --n_head 4 --n_positions 128 --block_size 128
  --per_device_train_batch_size 8 --learning_rate 1e-3 --warmup_steps 30
  --max_steps 300 --logging_steps 1 --seed 0)
OMP_NUM_THREADS=4 run_part sst2-cpu 240 kiln-train --backend cpu \
  "${sst2_flags[@]}" &
sst2_pid=$!

#===--- 3. The GPU unit tests ---------------------------------------------===#

# CudaRuntimeTest dlopens the fake driver and cuBLASLt: the bundle's copies.
export KILN_FAKE_CUDA_DIR=$bundle/lib

# record_gtest NAME GPU: PASS when the binary exited 0 having run tests;
# on this machine a GPU test that skips (GPU=1) is a failure too.
record_gtest() {
  local name=$1 log=$work/$1.log passed skipped failed
  passed=$(grep -oE '^\[  PASSED  \] [0-9]+' "$log" | grep -oE '[0-9]+$')
  skipped=$(grep -oE '^\[  SKIPPED \] [0-9]+ test' "$log" | grep -oE '[0-9]+' | head -n 1)
  failed=$(grep -oE '^\[  FAILED  \] [0-9]+ test' "$log" | grep -oE '[0-9]+' | head -n 1)
  local note="${passed:-0} passed, ${skipped:-0} skipped, ${failed:-0} failed"
  local rc
  read -r rc _ < "$work/$name.rc"
  if [[ $rc != 0 || -z $passed ]]; then
    record "$name" FAIL "$(exit_note "$name"): $note"
  elif [[ $2 == 1 && -n $skipped ]]; then
    record "$name" FAIL "skipped on the GPU machine: $note"
  else
    record "$name" PASS "$note"
  fi
}

run_part CudaRuntimeTest 60 "$bin/CudaRuntimeTest" \
  --gtest_output="json:$work/gtest_CudaRuntimeTest.json"
record_gtest CudaRuntimeTest 0

run_part CudaBackendTest 150 "$bin/CudaBackendTest" \
  --gtest_output="json:$work/gtest_CudaBackendTest.json"
record_gtest CudaBackendTest 1

# KILN_CHECK_NUMERICS on the GPU: a NaN made by a log names that op.
run_part NumericsTest 60 "$bin/NumericsTest" \
  --gtest_output="json:$work/gtest_NumericsTest.json"
record_gtest NumericsTest 1

rm -f /tmp/kiln-cuda-repro-*.mlir
KILN_RANDOM_GRAPHS=1000 run_part CudaRandomGraphTest 200 \
  "$bin/CudaRandomGraphTest" \
  --gtest_output="json:$work/gtest_CudaRandomGraphTest.json"
for repro in /tmp/kiln-cuda-repro-*.mlir; do
  [[ -e $repro ]] && { echo "--- $repro"; cat "$repro"; } >> "$work/CudaRandomGraphTest.log"
done
record_gtest CudaRandomGraphTest 1

# Llama parity on the GPU: transformers' LlamaForCausalLM (the machine's
# python3) against kiln on cuda from the same weights, logits and four
# training losses within 1e-5 (bench/peers/llama_reference.py). Nine
# variants since 2026-12-05 (run 10 had two): on this 2-core machine the
# reference script takes ~9 s and each variant's two tests under 1 s on
# the cpu backend; the limit leaves the GPU's compiles room.
KILN_BACKEND=cuda KILN_PEERS_PYTHON=$(command -v python3) \
  run_part LlamaParity 150 "$bin/LlamaTest" --gtest_filter='Variants/LlamaParity.*' \
  --gtest_output="json:$work/gtest_LlamaParity.json"
record_gtest LlamaParity 1
collect

#===--- 4. SST-2 on the GPU ---------------------------------------------===#

# With the validation split and an output folder: the eval loss, and the
# model folder transformers' GPT2LMHeadModel must load (hf-load).
sst2_dev=$(dirname "$sst2")/dev.tsv
run_part sst2-cuda 120 kiln-train --backend cuda --cuda_arch "$arch" \
  "${sst2_flags[@]}" --validation_file "$sst2_dev" --output_dir "$work/sst2-model"
record_by_exit sst2-cuda "$(loss_note "$work/sst2-cuda.log") $sst2_note"

run_part hf-load 60 python3 "$root/scripts/gpu/hf_load.py" "$work/sst2-model" \
  "$sst2_dev" "$work/sst2-cuda.log" --block_size 128 --json "$work/hf_load.json"
record_by_exit hf-load "GPT2LMHeadModel loads kiln cuda's model; eval loss within 1e-4"

# The GPU speed issue's bar (judged, so it runs before the information
# parts that may use up the budget): 300 SST-2 steps in bf16 and in fp16 end within
# 2% of the fp32 run's loss (part 4's sst2-cuda; the mean of the last 20
# logged losses), with no NaN; fp16's skipped steps are counted from its
# log. Judged.
for precision in bf16 fp16; do
  run_part "sst2-cuda-$precision" 120 kiln-train --backend cuda \
    --cuda_arch "$arch" "${sst2_flags[@]}" "--$precision" True
  verdict=$(python3 -c 'import math, re, sys
def losses(path):
  return [float(x) for x in re.findall(r"^\{.loss.: ([^,]+)", open(path).read(), re.M)]
f32, half = losses(sys.argv[1]), losses(sys.argv[2])
skips = sum(int(m) for m in re.findall(r"^fp16: (\d+) of the last", open(sys.argv[2]).read(), re.M))
if not f32 or len(half) != len(f32):
  print("FAIL %d losses against %d" % (len(half), len(f32))); sys.exit()
tail = lambda v: sum(v[-20:]) / len(v[-20:])
gap = abs(tail(half) - tail(f32)) / tail(f32)
bad = any(math.isnan(x) or math.isinf(x) for x in half)
print("%s last-20 mean %.4f vs fp32 %.4f (%.2f%% apart, 2%% allowed), %s, %d fp16 steps skipped" % (
  "FAIL" if bad or gap > 0.02 else "PASS", tail(half), tail(f32), 100 * gap,
  "a NaN or Inf loss" if bad else "no NaN", skips))' \
    "$work/sst2-cuda.log" "$work/sst2-cuda-$precision.log" 2>&1 | tail -n 1)
  record "sst2-cuda-$precision" "${verdict%% *}" "$(exit_note "sst2-cuda-$precision"): ${verdict#* }"
done

#===--- 5. compute-sanitizer on a small GPT-2 step -----------------------===#

# kiln-train's tiny default model, 3 steps: every kernel of the training
# step, its GEMMs, the CUDA graph replay. PASS needs kiln-train to succeed
# and the tool's summary to say 0 errors (memcheck) or 0 hazards
# (racecheck); ptxas, a child process, is not instrumented.
for tool in memcheck racecheck; do
  run_part "$tool" 100 compute-sanitizer --tool "$tool" --error-exitcode 1 \
    --target-processes application-only \
    kiln-train --backend cuda --cuda_arch "$arch" --max_steps 3 --logging_steps 1
  read -r rc _ < "$work/$tool.rc"
  if [[ $tool == memcheck ]]; then
    clean='ERROR SUMMARY: 0 errors'
  else
    clean='RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)'
  fi
  if [[ $rc == 0 ]] && grep -qF "$clean" "$work/$tool.log"; then
    record "$tool" PASS "$clean"
  else
    found=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$work/$tool.log" | tail -n 1 | sed 's/^=* *//')
    record "$tool" FAIL "$([[ $rc == 0 ]] || exit_note "$tool") ${found:-no summary}"
  fi
done

#===--- 6. The cpu runs, and the judgements ------------------------------===#

[[ -n $cpu_pid ]] && wait "$cpu_pid"
if [[ -f $work/cpu-124m.rc ]]; then
  record_by_exit cpu-124m "kiln cpu, the cuda run's first 4 steps"
fi
wait "$sst2_pid"
record_by_exit sst2-cpu "$(loss_note "$work/sst2-cpu.log") $sst2_note"

run_part parity-124m 60 python3 "$root/scripts/gpu/parity.py" bench \
  "$work/bench/results.json" "$work/cpu_124m.json" --steps 4 \
  --json "$work/parity_124m.json"
record_by_exit parity-124m "first 4 losses: kiln cuda vs kiln cpu and vs PyTorch, 1e-4"

run_part sst2-curves 60 python3 "$root/scripts/gpu/parity.py" curves \
  "$work/sst2-cuda.log" "$work/sst2-cpu.log" --steps 300 --first 20 \
  --window 10 --json "$work/sst2_curves.json"
record_by_exit sst2-curves "first 20 within 1e-4, 10-step means within 1e-2 $sst2_note"

{
  echo
  echo "## GPU check: loss parity (scripts/gpu/parity.py)"
  echo
  echo '```'
  cat "$work/parity-124m.log" "$work/sst2-curves.log"
  echo '```'
} >> "$results/bench.md"
collect
fi # parts == all

#===--- 7. Where the 124M step's time goes (information) -----------------===#

# KILN_PROFILE on the cuda run's first 4 steps: the per-thunk summary into
# logs.txt, the Chrome trace into the results. Not a judgement: INFO.
if [[ -f $work/first4.npy ]]; then
  KILN_PROFILE=$results/trace-124m.json run_part profile-124m 90 kiln-bench \
    --worker kiln --mode compiled --backend cuda "${model[@]}" \
    --steps "$bench_steps" --weights "$work/bench/weights.safetensors" \
    --batches "$work/first4.npy" --result "$work/profile_124m.json"
  record profile-124m INFO "$(exit_note profile-124m): KILN_PROFILE of 4 steps (trace-124m.json)"
fi

# ab_part NAME SETTING WHAT [PRECISION]: kiln's 124M step on the cuda run's
# batches with the environment SETTING (VAR=VALUE), beside that bench's
# own step (the defaults), in one run: what a default buys. PRECISION bf16
# compares with the mixed-precision bench (part 8). Not a judgement: INFO.
ab_part() {
  local name=$1 what=$3 precision=${4:-f32} base=bench
  local -x "$2"
  [[ $precision == bf16 ]] && base=bench-bf16
  [[ -f $work/$base/batches.npy ]] || return 0
  run_part "$name" 60 kiln-bench --worker kiln \
    --mode compiled --backend cuda "${model[@]}" --precision "$precision" \
    --steps "$bench_steps" --weights "$work/$base/weights.safetensors" \
    --batches "$work/$base/batches.npy" --result "$work/$name.json"
  local ab
  ab=$(python3 -c 'import json, statistics, sys
def run(path, key):
    r = json.load(open(path))
    return r["systems"]["kiln_compiled"] if key == "systems" else r
def median(path, key):
    steps = run(path, key)["step_ms"]
    return statistics.median(steps[len(steps) // 2:])
a, b = run(sys.argv[1], "systems").get("losses", []), run(sys.argv[2], "").get("losses", [])
apart = max((abs(x - y) / abs(x) for x, y in zip(a, b) if x), default=float("nan"))
print("step %.1f ms by default, %.1f ms with %s; %d losses at most %.2g apart" % (
    median(sys.argv[1], "systems"), median(sys.argv[2], "step_ms"), sys.argv[3],
    min(len(a), len(b)), apart))' \
    "$work/$base/results.json" "$work/$name.json" "$what" 2>&1 | tail -n 1)
  record "$name" INFO "$(exit_note "$name"): $ab"
}

# (KILN_CUDA_ROW_LANES=1, a thread per row, is not timed again: run 4
# measured 375 ms against the warp's 224.)
ab_part ab-elements KILN_CUDA_ELEMENTS_PER_THREAD=1 \
  "one element a thread in fusions without reduces (not 4)"
ab_part ab-attention-chunk KILN_ATTENTION_CHUNK_MB=256 \
  "attention in one chunk of 512 query rows (not 4 of 128)"
ab_part ab-attention-3-chunks KILN_ATTENTION_CHUNK_MB=86 \
  "attention in 3 chunks of 192, 192 and 128 query rows (not 4 of 128)"
ab_part ab-loss-chunk KILN_LOSS_CHUNK_MB=64 \
  "the loss in 26 chunks of 320 rows (not 7 of 1216)"
ab_part ab-loss-one-chunk KILN_LOSS_CHUNK_MB=2048 \
  "the loss in one chunk, the logits whole (not 7 chunks of 1216 rows)"
ab_part ab-vocab-pad KILN_VOCAB_MULTIPLE=64 \
  "the lm_head's vocabulary padded to 50304 (not 50257)"

#===--- 8. Mixed precision against the peers (INFO) -----------------------===#

# kiln's own flash attention kernels (opt-in: KILN_CUDA_ATTENTION=flash)
# against the reference on the GPU (CudaFlashAttentionTest, ~20 s), first
# in this part so that it runs whatever the bench leaves; measured beside
# the bf16 bench below. INFO while they are opt-in: the default path is
# what the judged parts hold.
run_part flash-kernels 90 "$bin/CudaFlashAttentionTest" \
  --gtest_output="json:$work/gtest_CudaFlashAttentionTest.json"
flash_note=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) \]|worst error' "$work/flash-kernels.log" | tr '\n' ';' | cut -c1-600)
record flash-kernels INFO "$(exit_note flash-kernels): $flash_note"
# The same tests with cuDNN's fused attention running the thunks
# (KILN_CUDA_ATTENTION=cudnn, runtime/cuda/CudnnAttention.cpp): the same
# reference and tolerances, and the tiny GPT-2 step against the host run.
KILN_CUDA_ATTENTION=cudnn run_part cudnn-attention 90 \
  "$bin/CudaFlashAttentionTest" --gtest_filter='CudaFlashAttention.*' \
  --gtest_output="json:$work/gtest_CudnnAttention.json"
cudnn_note=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) \]|worst error|cuDNN|cudnn' "$work/cudnn-attention.log" | tr '\n' ';' | cut -c1-600)
record cudnn-attention INFO "$(exit_note cudnn-attention): $cudnn_note"

run_part bench-124m-bf16 240 kiln-bench --backend cuda --precision bf16 \
  "${model[@]}" --batch 16 --steps "$bench_steps" --modes compiled \
  --peers "${KILN_GPU_BF16_PEERS-torch,torch_compile,jax}" --parity_steps 4 --bisect_max_batch 0 \
  --max_rss_gib 48 --peers_dir "$root/bench/peers" --out "$work/bench-bf16"
for run in "$work"/bench-bf16/runs/*.log; do
  [[ -e $run ]] && { echo "--- $(basename "$run")"; tail -n 40 "$run"; } >> "$work/bench-124m-bf16.log"
done
record bench-124m-bf16 INFO "$(exit_note bench-124m-bf16): $(bench_note "$work/bench-bf16")"
if [[ -f $work/bench-bf16/table.md ]]; then
  { echo; echo "## Mixed precision (bf16)"; echo; cat "$work/bench-bf16/table.md"; } >> "$results/bench.md"
fi
# A warm persistent cache (the speed issue: "starts the step in <= 1 s"):
# the bf16 step compiled into a fresh cache by one process, then loaded
# from it by a second, each reading every loss (--logging_steps 1), so its
# first step's time holds the compile or load, the first run (memory,
# cuBLASLt's plans, the modules) and the loss read.
if [[ -f $work/bench-bf16/batches.npy ]]; then
  for phase in cold warm; do
    KILN_CACHE_DIR=$work/warm-cache run_part "warm-start-$phase" 90 \
      kiln-bench --worker kiln --mode compiled --backend cuda "${model[@]}" \
      --precision bf16 --steps 4 --logging_steps 1 \
      --weights "$work/bench-bf16/weights.safetensors" \
      --batches "$work/bench-bf16/batches.npy" \
      --result "$work/warm-start-$phase.json"
  done
  warm_note=$(python3 -c 'import json, statistics, sys
cold, warm = (json.load(open(p)) for p in sys.argv[1:3])
print("cold: %d compile(s), first step %.0f ms (compile %.0f ms); warm: %d "
      "graph(s) loaded from the cache in %.0f ms, %d compiled, first step "
      "%.0f ms, later steps %.1f ms (median)" % (
    cold["kiln_compiles"], cold["step_ms"][0], cold["kiln_compile_ms_per_step"][0],
    warm["kiln_persistent_hits"], warm["kiln_persistent_load_ms"],
    warm["kiln_compiles"], warm["step_ms"][0], statistics.median(warm["step_ms"][1:])))' \
    "$work/warm-start-cold.json" "$work/warm-start-warm.json" 2>&1 | tail -n 1)
  record warm-start-124m INFO "$(exit_note warm-start-warm): $warm_note"
fi
# The flash kernels beside the bf16 bench's kiln step: its step time, and
# its losses against the chunked attention's (the same dropout masks: both
# draw the op's Philox recipe), which should agree to bf16's rounding.
ab_part ab-flash-attention-bf16 KILN_CUDA_ATTENTION=flash \
  "kiln's flash attention kernels (not attention in chunks), in bf16" bf16
# cuDNN's fused attention in the same place (its dropout mask written by
# a kiln kernel from the same Philox recipe, so the losses should agree
# to bf16's rounding again).
ab_part ab-cudnn-attention-bf16 KILN_CUDA_ATTENTION=cudnn \
  "cuDNN's fused attention (not attention in chunks), in bf16" bf16
# Rows not held: each pass of a warp-per-row kernel (the layer norms, the
# attention chunks' softmax and its gradient) loads its row and computes
# the body again (a dropout's Philox, an exp), as before 2026-11-29. The
# same arithmetic in the same order: the losses must agree exactly.
ab_part ab-hold-rows-bf16 KILN_CUDA_HOLD_ROWS=0 \
  "each pass of a row kernel loading the row again (rows not held), in bf16" bf16
# Threads that walk a row alone (the weight and bias gradients' partial
# sums) reading one point before storing it, as before 2026-11-30: one
# point's loads in flight, not 8. The same sums, whose adds LLVM may
# reorder (reassoc) in either form: the losses agree to rounding.
ab_part ab-row-unroll-bf16 KILN_CUDA_ROW_UNROLL=1 \
  "1 point of a row read per iteration by one-lane threads (not 8), in bf16" bf16
# 8 elements a thread (two Philox blocks) and a warp lane's steps of 8
# points: 16-byte accesses of bf16 values, not 8-byte ones. The losses
# agree to the rounding of the rows' sums, added in another order.
ab_part ab-elements-8-bf16 KILN_CUDA_ELEMENTS_PER_THREAD=8 \
  "8 elements a thread and 8 points a lane's step (not 4), in bf16" bf16
# And their kernels against the reference on the GPU: 300 random graphs
# compiled in the 8-element forms (INFO while the option is opt-in; what
# must pass before it becomes the default).
KILN_CUDA_ELEMENTS_PER_THREAD=8 KILN_RANDOM_GRAPHS=300 run_part random-graphs-8 90 \
  "$bin/CudaRandomGraphTest" --gtest_output="json:$work/gtest_random-graphs-8.json"
record random-graphs-8 INFO "$(exit_note random-graphs-8): $(grep -E '^\[  (PASSED|FAILED|SKIPPED) *\] [0-9]+ test' "$work/random-graphs-8.log" | tr '\n' ' ')"
# The f32 sums (the lm_head's weight gradient over the loss chunks) added
# by kernels of their own, not by their GEMM (beta = 1).
ab_part ab-gemm-epilogue-bf16 KILN_GEMM_EPILOGUE=0 \
  "no add fused into its GEMM (kiln-fuse-gemm-epilogue off), in bf16" bf16
# Kernels with plain pointers: no buffer declared noalias, so no load
# through the read-only cache and none moved ahead of a store. The same
# arithmetic: the losses must agree exactly.
ab_part ab-noalias-bf16 KILN_CUDA_NOALIAS=0 \
  "plain kernel pointers (no noalias, no ld.global.nc), in bf16" bf16
# Attention's chunks of q, k and v (and the loss chunks' hidden rows)
# copied out by slice kernels, not read in place by their GEMMs. The same
# products of the same values: the losses must agree exactly.
ab_part ab-gemm-views-bf16 KILN_GEMM_VIEWS=0 \
  "slices GEMMs read copied out by kernels (no operand views), in bf16" bf16
# Every kernel a launch of its own: no group kernels (the optimizer's
# per-parameter updates among them). The same kernels' arithmetic: the
# losses must agree exactly.
ab_part ab-kernel-groups-bf16 KILN_KERNEL_GROUPS=0 \
  "every kernel launched alone (no group kernels), in bf16" bf16
if [[ -f $work/bench-bf16/weights.safetensors && -f $work/first4.npy ]]; then
  KILN_CUDA_ATTENTION=flash KILN_PROFILE=$work/trace-124m-bf16-flash.json \
    run_part profile-124m-bf16-flash 90 kiln-bench --worker kiln \
    --mode compiled --backend cuda "${model[@]}" --precision bf16 \
    --steps "$bench_steps" --weights "$work/bench-bf16/weights.safetensors" \
    --batches "$work/first4.npy" --result "$work/profile_124m_bf16_flash.json"
  record profile-124m-bf16-flash INFO "$(exit_note profile-124m-bf16-flash): KILN_PROFILE of 4 bf16 steps with flash attention (summary in logs.txt)"
fi

# Where the bf16 step's time goes: the per-thunk summary into logs.txt
# (the trace stays in the work folder: the results hold eight files).
if [[ -f $work/bench-bf16/weights.safetensors && -f $work/first4.npy ]]; then
  KILN_PROFILE=$work/trace-124m-bf16.json run_part profile-124m-bf16 90 \
    kiln-bench --worker kiln --mode compiled --backend cuda "${model[@]}" \
    --precision bf16 --steps "$bench_steps" \
    --weights "$work/bench-bf16/weights.safetensors" \
    --batches "$work/first4.npy" --result "$work/profile_124m_bf16.json"
  record profile-124m-bf16 INFO "$(exit_note profile-124m-bf16): KILN_PROFILE of 4 bf16 steps (summary in logs.txt)"
fi

# The bf16 step's slowest fusions and its flash attention, each alone
# (bench/kernels/README.md): kiln-run's 10 timed runs under KILN_PROFILE,
# then Nsight Compute on two launches after the first (--clock-control
# none: the clocks stay as they are; two: a flash gradient is two kernels,
# a fusion's second run has one) where ncu is installed: duration,
# throughput, occupancy, registers, what the warps wait on.
ncu_sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis
  --section Occupancy --section LaunchStats --section WarpStateStats)
for module in "$root"/bench/kernels/*.mlir; do
  kernel=kernel-$(basename "$module" .mlir)
  KILN_CUDA_ATTENTION=flash run_part "$kernel" 60 bash -c '
    KILN_PROFILE="$2.json" kiln-run "$1" --backend cuda --cuda_arch "$3" \
      --runs 11 --print_results=false || exit
    echo "--- with KILN_CUDA_ROW_UNROLL=1"
    KILN_CUDA_ROW_UNROLL=1 KILN_PROFILE="$2-one-point.json" kiln-run "$1" \
      --backend cuda --cuda_arch "$3" --runs 11 --print_results=false || exit
    echo "--- with KILN_CUDA_HOLD_ROWS=0"
    KILN_CUDA_HOLD_ROWS=0 KILN_PROFILE="$2-loaded.json" kiln-run "$1" \
      --backend cuda --cuda_arch "$3" --runs 11 --print_results=false || exit
    echo "--- with KILN_CUDA_ELEMENTS_PER_THREAD=8"
    KILN_CUDA_ELEMENTS_PER_THREAD=8 KILN_PROFILE="$2-eight.json" kiln-run "$1" \
      --backend cuda --cuda_arch "$3" --runs 11 --print_results=false || exit
    command -v ncu > /dev/null || { echo "ncu: not installed"; exit 0; }
    ncu --clock-control none --launch-skip 1 --launch-count 2 "${@:4}" \
      kiln-run "$1" --backend cuda --cuda_arch "$3" --runs 2 --print_results=false' \
    _ "$module" "$work/$kernel" "$arch" "${ncu_sections[@]}"
  kernel_note=$(awk '/ms\/run/ {getline; print $2 " ms a run, " $4 " " $5 " " $6 " " $7 " " $8; n++; if (n == 4) exit; printf (n == 1 ? "; one point: " : n == 2 ? "; rows loaded: " : "; 8 elements: ")}' "$work/$kernel.log" | tr -d '\n')
  ncu_note=$(grep -E "^ +(Duration|Memory Throughput|Achieved Occupancy|Registers Per Thread) " "$work/$kernel.log" |
    awk '{$1=$1; print}' | tr '\n' ';' | cut -c1-300)
  record "$kernel" INFO "$(exit_note "$kernel"): $kernel_note; ncu: ${ncu_note:-none}"
done
# cuDNN's fused attention on the same attention modules
# (KILN_CUDA_ATTENTION=cudnn: the same thunks, cuDNN running them), timed
# the same way, beside kiln's kernels' lines above.
for module in "$root"/bench/kernels/flash-attention*.mlir; do
  kernel=kernel-cudnn-$(basename "$module" .mlir)
  KILN_CUDA_ATTENTION=cudnn KILN_PROFILE="$work/$kernel.json" \
    run_part "$kernel" 30 kiln-run "$module" --backend cuda \
    --cuda_arch "$arch" --runs 11 --print_results=false
  kernel_note=$(awk '/ms\/run/ {getline; print $2 " ms a run, " $4 " " $5 " " $6 " " $7 " " $8; exit}' "$work/$kernel.log" | tr -d '\n')
  record "$kernel" INFO "$(exit_note "$kernel"): $kernel_note"
done

ab_part ab-vocab-pad-bf16 KILN_VOCAB_MULTIPLE=1 \
  "the lm_head's vocabulary not padded (50257, not 50304), in bf16" bf16

run_memory_parts

#===--- 9. fp16: speed against the peers, and SST-2 in 16 bits ------------===#

# kiln's --precision fp16 (f16 products, dynamic loss scaling) beside
# PyTorch's autocast + GradScaler (INFO).
run_part bench-124m-fp16 200 kiln-bench --backend cuda --precision fp16 \
  "${model[@]}" --batch 16 --steps "$bench_steps" --modes compiled \
  --peers "${KILN_GPU_FP16_PEERS-torch}" --parity_steps 4 --bisect_max_batch 0 \
  --max_rss_gib 48 --peers_dir "$root/bench/peers" --out "$work/bench-fp16"
record bench-124m-fp16 INFO "$(exit_note bench-124m-fp16): $(bench_note "$work/bench-fp16")"
if [[ -f $work/bench-fp16/table.md ]]; then
  { echo; echo "## Mixed precision (fp16)"; echo; cat "$work/bench-fp16/table.md"; } >> "$results/bench.md"
fi

collect

#===--- 11. The reliability soak on the GPU (INFO, last) ------------------===#

run_soak

total=$(($(date +%s) - start))
if [[ $parts == speed ]]; then
  echo "OVERALL SPEED ONLY  (KILN_GPU_CHECK_PARTS=speed: the judged parts did not run; $failures failed, $total s)" >> "$summary"
elif ((failures == 0)); then
  echo "OVERALL PASS  ($total s)" >> "$summary"
else
  echo "OVERALL FAIL  ($failures parts failed, $total s)" >> "$summary"
fi
cat "$summary"
echo "gpu-check: results in $results (work files in $work)"
((failures == 0))
