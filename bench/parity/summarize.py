#!/usr/bin/env python3
"""Markdown table from gpuraid-parity-bench --benchmark_out (JSON): per
operation and size, GB/s of data in per core through direct ISA-L and
through the engine's backend, and backend/ISA-L; median of repetitions.
Usage: summarize.py PARITY_JSON > parity.md"""
import json
import statistics
import sys


def main(path):
    with open(path) as f:
        data = json.load(f)
    rates, setup = {}, {}
    for b in data["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred"):
            continue
        parts = b["run_name"].split("/")
        if parts[0] == "decode_setup":
            setup.setdefault(parts[2], []).append(b["cpu_time"])
        elif parts[0] == "memory":
            rates.setdefault((parts[1], parts[2], "isal"), []).append(b["GB/s"])
        else:  # op/geometry/size/impl
            rates.setdefault(("/".join(parts[:2]), parts[2], parts[3]), []).append(b["GB/s"])
    sizes = list(dict.fromkeys(k[1] for k in rates))
    ops = list(dict.fromkeys(k[0] for k in rates))
    ctx = data.get("context", {})
    print(f"GB/s of data in per core (CPU time), median of {max(len(v) for v in rates.values())} repetitions; "
          f"{ctx.get('date', '')}, {ctx.get('num_cpus', '?')} CPUs at {ctx.get('mhz_per_cpu', '?')} MHz, "
          f"load average {ctx.get('load_avg', '?')} at the start; "
          "cell: ISA-L direct / engine backend (backend ÷ ISA-L); updates add ISA-L's whole read-modify-write "
          "(isal-rmw: xor_gen for the delta, then ec_encode_data_update) and backend ÷ that. memcpy counts bytes "
          "copied, read bytes read.\n")
    print("| operation | " + " | ".join(sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for op in ops:
        cells = []
        for s in sizes:
            isal = statistics.median(rates[(op, s, "isal")]) if (op, s, "isal") in rates else None
            back = statistics.median(rates[(op, s, "backend")]) if (op, s, "backend") in rates else None
            rmw = statistics.median(rates[(op, s, "isal-rmw")]) if (op, s, "isal-rmw") in rates else None
            if isal is not None and back is not None:
                cells.append(f"{isal:.1f} / {back:.1f} ({back / isal:.2f})" +
                             (f"; rmw {rmw:.1f} ({back / rmw:.2f})" if rmw else ""))
            else:
                cells.append(f"{isal or back:.1f}" if (isal or back) else "–")
        print(f"| {op} | " + " | ".join(cells) + " |")
    if setup:
        print("\nDecode table setup (gf_invert_matrix + ec_init_tables), µs of CPU: " +
              ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in setup.items()))


if __name__ == "__main__":
    main(sys.argv[1])
