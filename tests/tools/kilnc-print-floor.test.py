"""Checks kilnc's --print-floor table against its --print-thunks lines: the
kernel row's calls and bytes are the kernel thunks' and its floor is their
bytes at the bandwidth given (argv[2], bytes a second); "all" adds the rows."""
import sys

lines = open(sys.argv[1]).read().splitlines()
bandwidth = float(sys.argv[2])
kernel_bytes = [int(l.split()[4]) for l in lines if l.split()[1:2] == ["kernel"]]
rows = {}
for line in lines[lines.index("floor on H100:") + 2:]:
    name, calls, gb, tflop, ms = line.split()
    rows[name] = (int(calls), float(gb), float(tflop), float(ms))
calls, gb, tflop, ms = rows["kernel"]
expected_ms = sum(kernel_bytes) / bandwidth * 1e3
assert calls == len(kernel_bytes), (calls, kernel_bytes)
assert abs(gb - sum(kernel_bytes) / 1e9) < 1e-3, (gb, kernel_bytes)
assert abs(ms - expected_ms) < 1e-3 and ms > 0.01, (ms, expected_ms)
total = rows.pop("all")
for column in range(4):
    assert abs(total[column] - sum(r[column] for r in rows.values())) < 2e-3, (column, rows, total)
print("kernel rows agree:", calls, "kernel")
