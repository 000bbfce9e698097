#!/usr/bin/env python3
"""GPU faults in the middle of a kiln-train run, on the fake CUDA driver
(tests/fake-cuda; KILN_FAKE_CUDA_FAULTS makes its Nth call of an entry point
fail): a kernel that faults in a replayed step, a launch that fails, device
memory running out when the evaluation program loads, and the driver lost
while a checkpoint is being read off the device. Each run must stop with
exit status 1 and a message naming what failed (never a signal), and every
checkpoint-N folder it left must be complete: kiln-train resumes from each
one (on the cpu backend) and trains a step.

The fake runs no kernels, so the numbers trained are garbage; what is
checked is the error path and the checkpoints' integrity, not the values.

usage: gpu_faults.py FAKE_LIB_DIR WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys

MODEL = ["--n_layer", "1", "--n_embd", "32", "--n_head", "2",
         "--n_positions", "32", "--block_size", "16",
         "--per_device_train_batch_size", "4", "--default_corpus_lines", "100"]

# (fault, what the error must say). CUresult codes: 2 out of memory, 700
# illegal address, 719 launch failed, 999 unknown.
CASES = [
    ("cuGraphLaunch:2:700",
     r"running the graph failed: cuGraphLaunch failed: "
     r"CUDA_ERROR_ILLEGAL_ADDRESS"),
    # The 20th launch: inside the first step's capture, whatever fusion
    # does to the tiny step's kernel count (the 50th fell past its end once
    # kiln-join-sums summed the global norm at once).
    ("cuLaunchKernel:20:719",
     r"CUDA kernel thunk \d+ \(kiln_kernel_\d+: \w+.* -> .*\) failed to "
     r"launch with grid "
     r"\d+x1x1 of \d+ thread\(s\), rangeSize \d+"),
    ("cuMemAlloc:3:2",
     r"out of device memory allocating .*this program plans \d+ bytes in "
     r"all .*largest slots: slot \d+"),
    ("cuStreamSynchronize:10:719",
     r"cuStreamSynchronize .*CUDA_ERROR_LAUNCH_FAILED"),
] + [("cuMemcpyDtoHAsync:%d:999" % skip,
      r"from the device: cuMemcpyDtoHAsync .*CUDA_ERROR_UNKNOWN")
     for skip in (3, 11, 20, 29, 47)]


def main():
    lib_dir, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ)
    env.update({
        "KILN_CUDA_DRIVER": os.path.join(lib_dir, "libkiln-fake-cuda.so"),
        "KILN_CUBLASLT": os.path.join(lib_dir, "libkiln-fake-cublaslt.so"),
        # No ptxas: the executable carries PTX, whose entry points the fake
        # driver reads (it cannot read a cubin).
        "KILN_PTXAS": "/nonexistent/ptxas",
    })
    env.pop("KILN_CACHE_DIR", None)
    failures, resumed = [], 0
    for i, (fault, expected) in enumerate(CASES):
        out = os.path.join(work, "run%d" % i)
        run = subprocess.run(
            ["kiln-train", "--backend", "cuda", "--max_steps", "6",
             "--logging_steps", "1", "--save_steps", "2", "--output_dir", out]
            + MODEL, env=dict(env, KILN_FAKE_CUDA_FAULTS=fault),
            capture_output=True, text=True)
        if run.returncode != 1:
            failures.append("%s: exit status %d, expected 1:\n%s" %
                            (fault, run.returncode, run.stderr[-2000:]))
            continue
        if not re.search(r"kiln-train: error: .*" + expected, run.stderr):
            failures.append("%s: the error does not match /%s/:\n%s" %
                            (fault, expected, run.stderr[-2000:]))
        checkpoints = sorted(
            (d for d in os.listdir(out) if re.fullmatch(r"checkpoint-\d+", d))
            if os.path.isdir(out) else [])
        for checkpoint in checkpoints:
            step = int(checkpoint.split("-")[1])
            check = subprocess.run(
                ["kiln-train", "--backend", "cpu", "--max_steps",
                 str(step + 1), "--logging_steps", "1",
                 "--resume_from_checkpoint", os.path.join(out, checkpoint)]
                + MODEL, capture_output=True, text=True)
            if check.returncode != 0:
                failures.append("%s: %s does not resume:\n%s" %
                                (fault, checkpoint, check.stderr[-2000:]))
            else:
                resumed += 1
        print("%-28s exit 1, %d checkpoint(s) left" % (fault, len(checkpoints)))
    for failure in failures:
        print("FAIL: " + failure)
    if failures:
        return 1
    print("PASS: %d faults, each a clear error and exit 1; %d checkpoints "
          "left by them all resume" % (len(CASES), resumed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
