#!/usr/bin/env python3
"""Writes one kiln.fusion of a compiled step as a module of its own, so that
it can be compiled, run and profiled alone (bench/kernels/):

  kilnc compile graph.mlir --backend cuda --bf16 --dump-dir dump -o step.kx
  grep -n 'kiln.fusion' dump/14-kiln-schedule.mlir      # find its line
  scripts/extract_fusion.py dump/14-kiln-schedule.mlir LINE out.mlir

The module's @main takes the fusion's operands as arguments (in order) and
returns its results; locations are dropped.
"""
import re
import sys

HEAD = re.compile(r"\s*(%[\w.]+)(:\d+)? = kiln\.fusion(?: \w+)?\(([^)]*)\) : "
                  r"\((.*)\) -> (.*) \{\s*(loc\(.*\))?$")
LOC = re.compile(r" loc\([^()]*(\([^()]*\))?[^()]*\)")


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: extract_fusion.py DUMP.mlir LINE OUT.mlir")
    lines = open(sys.argv[1]).read().split("\n")
    start = int(sys.argv[2]) - 1
    if not 0 <= start < len(lines):
        sys.exit("extract_fusion.py: line %s is not in %s" % (sys.argv[2], sys.argv[1]))
    head = LOC.sub("", lines[start])
    m = HEAD.match(head)
    if not m:
        sys.exit("extract_fusion.py: line %d does not start a kiln.fusion" % (start + 1))
    result, multiple, operands, in_types, out_types = m.group(1, 2, 3, 4, 5)
    in_types = re.findall(r"tensor<[^>]*>", in_types)
    out_types = re.findall(r"tensor<[^>]*>", out_types)
    arguments = ["%%a%d" % k for k in range(len(in_types))]
    body = [head.replace("(%s) :" % operands, "(%s) :" % ", ".join(arguments), 1)]
    end = start + 1
    while end < len(lines) and not lines[end].strip().startswith("}"):
        body.append(LOC.sub("", lines[end]))
        end += 1
    if end == len(lines):
        sys.exit("extract_fusion.py: the fusion at line %d never ends" % (start + 1))
    body.append(LOC.sub("", lines[end]))
    returned = (", ".join("%s#%d" % (result, k) for k in range(len(out_types)))
                if multiple else result)
    with open(sys.argv[3], "w") as out:
        out.write("module {\n  func.func @main(%s) -> (%s) {\n%s\n    return %s : %s\n  }\n}\n" % (
            ", ".join("%s: %s" % (a, t) for a, t in zip(arguments, in_types)),
            ", ".join(out_types), "\n".join(body), returned, ", ".join(out_types)))


if __name__ == "__main__":
    main()
