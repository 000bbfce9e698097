#!/usr/bin/env python3
"""kilnc cache ls/verify/prune/clear run in a loop against the persistent
cache that kiln-train jobs are compiling into and loading from at the same
time. Every job must succeed with the losses of a run without any cache
(bit for bit: a cache entry, fresh or loaded, is the same program), and no
maintenance command may crash or call a good entry bad (entries are written
whole and renamed into place, so there is never a torn one to find).

usage: cache_concurrency.py KILN_TRAIN KILNC WORK_DIR [--jobs N]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import threading

TRAIN_FLAGS = ["--max_steps", "3", "--logging_steps", "1", "--n_layer", "1",
               "--n_embd", "32", "--n_head", "2", "--n_positions", "32",
               "--block_size", "16", "--per_device_train_batch_size", "4",
               "--default_corpus_lines", "60"]
LOSS = re.compile(r"\{'loss': ([0-9.e+-]+)")


def train(kiln_train, cache_dir):
    """One kiln-train job → its logged losses (raises on failure)."""
    env = dict(os.environ)
    env.pop("KILN_CACHE_DIR", None)
    cmd = [kiln_train] + TRAIN_FLAGS
    if cache_dir:
        cmd += ["--kiln_cache_dir", cache_dir]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError("kiln-train exited %d:\n%s" % (run.returncode,
                                                          run.stderr[-3000:]))
    losses = LOSS.findall(run.stdout)
    if len(losses) != 3:
        raise RuntimeError("expected 3 losses, got:\n" + run.stdout)
    return losses


def maintain(kilnc, cache_dir, stop, record):
    """Runs cache commands until `stop` is set; records each outcome."""
    actions = [["ls"], ["verify"], ["prune", "--max-size", "0"], ["ls"],
               ["clear"], ["verify"], ["prune", "--max-size", "1M"]]
    i = 0
    while not stop.is_set():
        action = actions[i % len(actions)]
        i += 1
        run = subprocess.run([kilnc, "cache"] + action + ["--cache", cache_dir],
                             capture_output=True, text=True)
        record.append((action[0], run.returncode, run.stdout + run.stderr))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kiln_train")
    parser.add_argument("kilnc")
    parser.add_argument("work_dir")
    parser.add_argument("--jobs", type=int, default=4)
    args = parser.parse_args()
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    cache_dir = os.path.join(args.work_dir, "cache")
    # `kilnc cache` refuses a folder that does not exist (a mistyped path
    # is an error, not an empty cache), so the folder exists from the start.
    os.makedirs(cache_dir)

    expected = train(args.kiln_train, None)
    stop = threading.Event()
    record = []
    maintainer = threading.Thread(target=maintain,
                                  args=(args.kilnc, cache_dir, stop, record))
    maintainer.start()
    failures = []
    try:
        for job in range(args.jobs):
            try:
                losses = train(args.kiln_train, cache_dir)
                if losses != expected:
                    failures.append("job %d: losses %s, expected %s" %
                                    (job, losses, expected))
            except RuntimeError as error:
                failures.append("job %d: %s" % (job, error))
    finally:
        stop.set()
        maintainer.join()

    for action, code, output in record:
        if code < 0:
            failures.append("kilnc cache %s died of signal %d:\n%s" %
                            (action, -code, output))
        elif code != 0:
            failures.append("kilnc cache %s exited %d:\n%s" %
                            (action, code, output))
        elif "bad entry" in output:
            failures.append("kilnc cache %s called an entry bad:\n%s" %
                            (action, output))
    counts = {}
    for action, _, _ in record:
        counts[action] = counts.get(action, 0) + 1
    print("%d training jobs; cache commands run alongside: %s" %
          (args.jobs, ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    if len(record) < args.jobs:
        failures.append("only %d cache commands ran beside %d jobs" %
                        (len(record), args.jobs))
    for failure in failures:
        print("FAIL: " + failure)
    if failures:
        return 1
    print("PASS: every job trained with the uncached losses; no cache "
          "command failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
