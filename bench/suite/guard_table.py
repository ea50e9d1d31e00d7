#!/usr/bin/env python3
"""The write-hole guard's and bitmap's cost across two suite runs of the same
machine: one with them on (the default) and one with `--guard off`.
  bench/suite/guard_table.py ON_DIR OFF_DIR      (each a run_suite.py --out)
Prints a Markdown table of the cases both measured: each side's figure and its
ratio to the raw drives measured in the same run, and the cost = on ratio / off
ratio (each side's ratio is against its own baseline, so the machine's drift
between the two runs cancels out as far as it hits both sides of a run alike)."""
import json
import os
import sys


def cases(d):
    with open(os.path.join(d, "results.json")) as f:
        data = json.load(f)
    out = {}
    for c in data["cases"]:
        if c["status"] == "measured":
            out[(c["geometry"]["label"], c["workload"]["name"], c["state"]["label"])] = c["summary"]
    return data["meta"], out


def fig(s):
    return f'{s["solution"]["figure"]:.3f} {s["solution"]["unit"]}'


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    meta_on, on = cases(argv[1])
    meta_off, off = cases(argv[2])
    for m, want in ((meta_on, "on"), (meta_off, "off")):
        got = m["params"].get("guard", "on")
        if got != want:
            sys.exit(f"guard_table: {m['command']} ran with guard {got}, expected {want}")
    print("| geometry | workload | state | both on | ratio to raw | both off | ratio to raw | cost (on / off) |")
    print("|---|---|---|---|---|---|---|---|")
    for key in on:
        if key not in off:
            continue
        a, b = on[key], off[key]
        print(f"| {key[0]} | {key[1]} | {key[2]} | {fig(a)} | {a['ratio']:.2f}x | {fig(b)} | {b['ratio']:.2f}x "
              f"| **{a['ratio'] / b['ratio']:.2f}x** |")


if __name__ == "__main__":
    main(sys.argv)
