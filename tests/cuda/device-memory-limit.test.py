"""Checks kiln-bench's largest-batch search on cuda (device-memory-limit.test):
each probe that fits allocated at most the budget, the search's largest batch
is the largest probe that fit, and its first failing batch ran out of device
memory under KILN_DEVICE_MEMORY_LIMIT. usage: device-memory-limit.test.py OUT"""
import glob
import json
import os
import re
import sys

out = sys.argv[1]
results = json.load(open(os.path.join(out, "results.json")))
budget = int(results["config"]["budget_gib"] * 2**30)
search = results["systems"]["kiln_compiled"]["budget"]
fitting = []
for path in glob.glob(os.path.join(out, "runs", "kiln_compiled-probe*.json")):
    batch = int(re.search(r"probe(\d+)\.json$", path).group(1))
    probe = json.load(open(path))
    if probe["status"] == "ok":
        assert probe["peak_gpu_mib"] * 2**20 <= budget, (batch, probe["peak_gpu_mib"])
        fitting.append(batch)
    else:
        assert probe["status"] == "over budget", (batch, probe)
        assert "KILN_DEVICE_MEMORY_LIMIT" in probe["note"], probe["note"]
assert fitting and search["largest_batch"] == max(fitting), (search, fitting)
failing = search["first_failing_batch"]
assert failing, search
assert json.load(open(os.path.join(out, "runs", "kiln_compiled-probe%d.json" % failing)))["status"] == "over budget"
print("probes agree: every fitting batch under %d bytes, the first failing one over budget by the limit" % budget)
