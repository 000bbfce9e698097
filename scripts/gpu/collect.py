#!/usr/bin/env python3
"""Merges the JSON files a GPU check left into one results.json (the device
tool brings back only a few files): collect.py OUT NAME=PATH ... puts each
file's contents under its NAME; a file that is missing or does not parse
is recorded as null with the reason under "_missing". Written to a
temporary name first, so a check cut short keeps the previous results."""
import json
import os
import sys


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    out, merged, missing = sys.argv[1], {}, {}
    for item in sys.argv[2:]:
        name, _, path = item.partition("=")
        try:
            with open(path) as f:
                merged[name] = json.load(f)
        except (OSError, ValueError) as e:
            merged[name] = None
            missing[name] = f"{path}: {e}"
    if missing:
        merged["_missing"] = missing
    with open(out + ".tmp", "w") as f:
        json.dump(merged, f, indent=1)
    os.replace(out + ".tmp", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
