"""Checks plan-vs-meter.test's kiln-bench runs: each run's device memory
held at most (peak_gpu_mib) within 1% of its planned peak, the run with the
fake cuBLASLt's products skipped planning and holding what the computed
one did. usage: plan-vs-meter.test.py DIR"""
import json
import os
import sys

root = sys.argv[1]


def run(name):
    return json.load(open(os.path.join(root, name, "results.json")))["systems"]["kiln_compiled"]


runs = {}
for name in ("computed-2", "skipped-2", "skipped-8", "skipped-32"):
    r = runs[name] = run(name)
    assert r["status"] == "ok", (name, r.get("note"))
    planned, held = r["kiln_planned_peak_mib"], r["peak_gpu_mib"]
    how, batch = name.split("-")
    print("batch %s %s: planned %.3f MiB, held %.3f MiB" % (batch, how, planned, held))
    assert planned > 0 and abs(held / planned - 1) <= 0.01, (name, planned, held)
computed, skipped = runs["computed-2"], runs["skipped-2"]
assert computed["kiln_planned_peak_mib"] == skipped["kiln_planned_peak_mib"]
assert computed["peak_gpu_mib"] == skipped["peak_gpu_mib"]
print("every held peak within 1% of its plan; skipping the products kept the plan")
