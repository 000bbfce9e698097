#!/usr/bin/env python3
"""kiln-train killed with SIGKILL at random moments of a --save_steps 1 run,
and started again each time on the same output_dir (so it resumes by
itself from the newest checkpoint, as run_clm.py does), until a run
finishes. Half the kills land shortly after a "Saving model checkpoint"
line, a random fraction of one step + save later, so that many hit a save
in the middle; the others at a random moment from the process's start.
Now and then a run is started with --resume_from_checkpoint naming the
older of the two checkpoints that --save_total_limit 2 keeps, so its next
save replaces an existing checkpoint-N while it may be killed.

Checked against a reference run that is never killed (itself run twice
first: kiln-train's cpu step must be deterministic for this to mean
anything):
  - every run ends by the kill or with exit status 0 (a resume never fails);
  - a run resumes from the newest checkpoint left (or the one named);
  - after every kill, each checkpoint-N folder's checkpoint.safetensors is
    byte for byte the reference's checkpoint-N (weights, AdamW moments,
    dropout RNG, step: nothing torn, nothing half-written under the name);
    the newest checkpoint before the run is never gone after it; at most
    save_total_limit + 1 remain (a kill between a save and its rotation);
  - every loss and learning rate logged by any run equals the reference's
    at that step, the last run's eval_loss (printed in full precision) and
    final model.safetensors equal the reference's bit for bit, and no
    temporary folder is left after a run that finished.

At least one kill must have left a save's temporary folder (proof that
kills land inside saves). CI runs 100 kills (tests/reliability/
kill-resume.test); --kills 1000 is the long mode.

usage: kill_resume.py KILN_TRAIN WORK_DIR [--kills N] [--steps N] [--seed N]
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

MODEL = ["--n_layer", "1", "--n_embd", "32", "--n_head", "2",
         "--n_positions", "32", "--block_size", "16",
         "--per_device_train_batch_size", "4", "--default_corpus_lines", "100",
         "--logging_steps", "1", "--save_steps", "1"]
LIMIT = 2
SAVED = re.compile(r"^Saving model checkpoint to .*checkpoint-(\d+)$")
CONTINUING = re.compile(r"Continuing training from checkpoint (.*), "
                        r"global step (\d+)$")
LEFTOVER = re.compile(r"^\.(tmp|old|del)-")


class Run:
    """One kiln-train process: stdout to a file, stderr read line by line
    (stderr is unbuffered, so a line arrives as soon as it is printed)."""

    def __init__(self, cmd, env, stdout_path):
        self.stdout_path = stdout_path
        self.stderr = []
        self.saved_at = []  # time of each "Saving model checkpoint" line
        self.saved = threading.Condition()
        with open(stdout_path, "w") as out:
            self.proc = subprocess.Popen(cmd, env=env, stdout=out,
                                         stderr=subprocess.PIPE, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            line = line.rstrip("\n")
            with self.saved:
                self.stderr.append(line)
                if SAVED.match(line):
                    self.saved_at.append(time.monotonic())
                    self.saved.notify_all()

    def wait_for_saves(self, count, timeout):
        """True once `count` checkpoints were saved; False if it exits."""
        deadline = time.monotonic() + timeout
        with self.saved:
            while len(self.saved_at) < count:
                if self.proc.poll() is not None:
                    return False
                self.saved.wait(min(0.05, max(0.0, deadline - time.monotonic())))
                if time.monotonic() > deadline:
                    return False
        return True

    def finish(self):
        rc = self.proc.wait()
        self.reader.join()
        with open(self.stdout_path) as f:
            text = f.read()
        # A line cut by the kill has no newline yet: not a log.
        lines = text.split("\n")[:-1]
        return rc, [parse_log(l) for l in lines if l.startswith("{")]


def parse_log(line):
    """A Trainer log line (a Python dict of floats, nan included) → dict."""
    return eval(line, {"__builtins__": {}},
                {"nan": float("nan"), "inf": float("inf")})


def checkpoint_steps(out):
    if not os.path.isdir(out):
        return []
    return sorted(int(d[len("checkpoint-"):]) for d in os.listdir(out)
                  if re.fullmatch(r"checkpoint-\d+", d))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def reference(kiln_train, env, work, name, steps):
    """An uninterrupted run → (its logs by step, its output folder, the mean
    time of one step + save, the time to the first save)."""
    out = os.path.join(work, name)
    cmd = [kiln_train, "--max_steps", str(steps), "--output_dir", out] + MODEL
    start = time.monotonic()
    run = Run(cmd, env, os.path.join(work, name + ".out"))
    rc, logs = run.finish()
    if rc != 0:
        raise SystemExit("FAIL: the reference run exited %d:\n%s" %
                         (rc, "\n".join(run.stderr[-40:])))
    losses = [l for l in logs if "loss" in l]
    evals = [l for l in logs if "eval_loss" in l]
    if len(losses) != steps or len(evals) != 1:
        raise SystemExit("FAIL: the reference logged %d losses and %d "
                         "evaluations, expected %d and 1" %
                         (len(losses), len(evals), steps))
    step_time = ((run.saved_at[-1] - run.saved_at[0]) / (len(run.saved_at) - 1)
                 if len(run.saved_at) > 1 else 0.05)
    return losses, evals[0], out, step_time, run.saved_at[0] - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kiln_train")
    parser.add_argument("work_dir")
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--steps", type=int, default=24,
                        help="max_steps of each training run")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = args.work_dir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ)
    env.pop("KILN_CACHE_DIR", None)
    env.pop("KILN_DUMP_GRAPHS", None)
    # One compile cache for all runs: a restart then costs no compilation,
    # so the kills land in training and saving, not in the compiler.
    cache = os.path.join(work, "cache")
    MODEL.extend(["--kiln_cache_dir", cache])

    started = time.monotonic()
    ref_losses, ref_eval, ref_out, _, _ = reference(
        args.kiln_train, env, work, "reference", args.steps)
    # The second run loads its graphs from the cache, as the killed runs
    # do: its times set the kills' delays.
    again = reference(args.kiln_train, env, work, "again", args.steps)
    step_time, startup = again[3], again[4]
    if (again[0] != ref_losses or
            again[1]["eval_loss"] != ref_eval["eval_loss"] or
            read(os.path.join(again[2], "model.safetensors")) !=
            read(os.path.join(ref_out, "model.safetensors"))):
        raise SystemExit("FAIL: two uninterrupted runs differ: kiln-train is "
                         "not deterministic, so nothing below would mean "
                         "anything")
    if ref_losses[0]["loss"] == ref_losses[-1]["loss"]:
        raise SystemExit("FAIL: the reference loss does not move")
    ref_ckpt = {s: read(os.path.join(ref_out, "checkpoint-%d" % s,
                                     "checkpoint.safetensors"))
                for s in range(1, args.steps + 1)}
    print("reference: %d steps, %.1f ms per step + save, %.2f s to the first "
          "save" % (args.steps, step_time * 1e3, startup))

    failures = []
    kills = runs = campaigns = explicit = 0
    mid_save = set()  # kinds of leftover seen right after a kill
    mid_save_kills = 0
    while kills < args.kills and not failures:
        campaigns += 1
        out = os.path.join(work, "run%d" % campaigns)
        while not failures:
            runs += 1
            before = checkpoint_steps(out)
            cmd = [args.kiln_train, "--max_steps", str(args.steps),
                   "--output_dir", out, "--save_total_limit", str(LIMIT)] + MODEL
            named = None
            if len(before) >= 2 and rng.random() < 0.2:
                named = before[-2]
                cmd += ["--resume_from_checkpoint",
                        os.path.join(out, "checkpoint-%d" % named)]
                explicit += 1
            run = Run(cmd, env, os.path.join(work, "run.out"))
            # Half the kills a moment after a save (often in the next one),
            # half at any moment from the start.
            if rng.random() < 0.5:
                if run.wait_for_saves(rng.randint(1, 3), 60):
                    time.sleep(rng.uniform(0, 1.2 * step_time))
            else:
                time.sleep(rng.uniform(0, startup + 4 * step_time))
            try:
                run.proc.send_signal(signal.SIGKILL)
            except ProcessLookupError:
                pass
            rc, logs = run.finish()
            killed = rc == -signal.SIGKILL
            where = "run %d (campaign %d)" % (runs, campaigns)
            if not killed and rc != 0:
                failures.append("%s exited %d:\n%s" %
                                (where, rc, "\n".join(run.stderr[-30:])))
                break
            kills += killed

            # Where it resumed from.
            start = 0
            for line in run.stderr:
                m = CONTINUING.search(line)
                if m:
                    start = int(m.group(2))
            expected = named if named else (before[-1] if before else 0)
            resumed = any(CONTINUING.search(l) for l in run.stderr)
            if (resumed or not killed) and start != expected:
                failures.append("%s resumed at step %d, expected %d" %
                                (where, start, expected))

            # Every log line against the reference at its step.
            step = start
            for log in logs:
                if "loss" in log:
                    step += 1
                    want = ref_losses[step - 1]
                    if (log["loss"], log["learning_rate"]) != (
                            want["loss"], want["learning_rate"]):
                        failures.append("%s step %d logged %s, the reference "
                                        "%s" % (where, step, log, want))
                elif "eval_loss" in log and log["eval_loss"] != ref_eval["eval_loss"]:
                    failures.append("%s eval_loss %r, the reference %r" %
                                    (where, log["eval_loss"],
                                     ref_eval["eval_loss"]))

            # The folders the kill left.
            after = checkpoint_steps(out)
            for s in after:
                path = os.path.join(out, "checkpoint-%d" % s,
                                    "checkpoint.safetensors")
                if not os.path.isfile(path) or read(path) != ref_ckpt[s]:
                    failures.append("%s left checkpoint-%d that is not the "
                                    "reference's" % (where, s))
            if before and (not after or after[-1] < before[-1]):
                failures.append("%s lost the newest checkpoint (before %s, "
                                "after %s)" % (where, before, after))
            if len(after) > LIMIT + 1:
                failures.append("%s left %d checkpoints with "
                                "--save_total_limit %d" %
                                (where, len(after), LIMIT))
            leftovers = [d for d in os.listdir(out) if LEFTOVER.match(d)] \
                if os.path.isdir(out) else []
            if killed and leftovers:
                mid_save_kills += 1
                mid_save.update(d[1:4] for d in leftovers)
            if not killed:
                if leftovers:
                    failures.append("%s finished but left %s" %
                                    (where, leftovers))
                if read(os.path.join(out, "model.safetensors")) != read(
                        os.path.join(ref_out, "model.safetensors")):
                    failures.append("%s: the final model differs from the "
                                    "reference's" % where)
                if not any("eval_loss" in l for l in logs):
                    failures.append("%s finished without its evaluation" %
                                    where)
                if not failures:  # kept for a look when something failed
                    shutil.rmtree(out)
                break
    elapsed = time.monotonic() - started

    print("%d kills in %d runs (%d campaigns of %d steps, %d started with "
          "--resume_from_checkpoint an older checkpoint); %d kills left a "
          "save's temporary folder (%s); %.1f s" %
          (kills, runs, campaigns, args.steps, explicit, mid_save_kills,
           ", ".join(sorted(mid_save)) or "none", elapsed))
    for failure in failures[:20]:
        print("FAIL: " + failure)
    if failures:
        return 1
    if kills < args.kills:
        print("FAIL: only %d kills" % kills)
        return 1
    # A save's temporary folder left behind is the proof that kills landed
    # inside saves; without one the test did not test what it says.
    if "tmp" not in mid_save:
        print("FAIL: no kill landed inside a save")
        return 1
    print("PASS: %d kills, every resume succeeded; checkpoints, losses, "
          "eval_loss and the final model equal the uninterrupted run's" % kills)
    return 0


if __name__ == "__main__":
    sys.exit(main())
