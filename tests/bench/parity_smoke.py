#!/usr/bin/env python3
"""Smoke test of gpuraid-parity-bench: every benchmark runs (L2 size, a
minimal --benchmark_min_time), none reports an error, every rate is > 0.
Usage: parity_smoke.py GPURAID_PARITY_BENCH OUT_JSON"""
import json
import subprocess
import sys


def main(binary, out):
    p = subprocess.run([binary, "--sizes=L2", "--benchmark_min_time=0.001", "--benchmark_format=json",
                        f"--benchmark_out={out}"], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"parity_smoke: FAILED: exit {p.returncode}\n{p.stderr[-2000:]}")
    with open(out) as f:
        runs = json.load(f)["benchmarks"]
    errors = [b["name"] for b in runs if b.get("error_occurred")]
    rated = [b for b in runs if not b["name"].startswith("decode_setup/")]
    if errors or len(rated) < 40 or any(b.get("GB/s", 0) <= 0 for b in rated):
        sys.exit(f"parity_smoke: FAILED: {len(runs)} benchmarks, errors {errors}")
    print(f"parity_smoke: ok ({len(runs)} benchmarks)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
