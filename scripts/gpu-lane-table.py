#!/usr/bin/env python3
"""The GPU lane's summary (scripts/gpu-lane.sh): one table of everything a run measured.

  gpu-lane-table.py LOGDIR > summary.txt

Reads LOGDIR/*.json (gpuraid-bench --json), gpuraid-gpu-bench.txt, gpu_parity_test.txt, corun-*.txt and
header.txt. Per engine row, both backends side by side: GB/s (or IOPS), RAID/raw, share of the I/O-count
bound, the RAID side's CPU %, CPU per GB/s (CPU % / GB/s: what a GB/s costs in cores x 100), and the
parity counters (zero-copy / staged / CPU batches, jobs routed and fallen back), then cuda over cpu.
"""
import glob
import json
import os
import re
import sys


def load(d):
    runs = {}
    for f in sorted(glob.glob(os.path.join(d, "*.json"))):
        try:
            runs[os.path.basename(f)[:-5]] = json.load(open(f))
        except ValueError:
            pass
    return runs


def text(d, name):
    p = os.path.join(d, name)
    return open(p).read() if os.path.exists(p) else ""


def figures(j):
    r = j.get("raid", {})
    gbs = r.get("mbps", 0) / 1000
    small = j["config"]["bs"] < 65536
    cpu = r.get("cpu_pct", 0)
    p = j.get("parity", {})
    return {
        "rate": r.get("iops", 0) if small else gbs,
        "unit": "IOPS" if small else "GB/s",
        "ratio": j.get("ratio", {}).get("mbps"),
        "bound": j.get("ratio", {}).get("fraction_of_bound"),
        "cpu": cpu,
        "cpu_per": cpu / gbs if gbs > 0 else 0,
        "lat": r.get("mean_us", 0),
        "paths": f'{p.get("zero_copy_batches", 0)}/{p.get("staged_batches", 0)}/{p.get("cpu_batches", 0)}',
        "moved": f'{p.get("routed_jobs", 0) + p.get("capped_jobs", 0)}/{p.get("fallback_jobs", 0)}',
        "ran": p.get("ran", j["config"].get("parity_backend", "?")),
    }


def cell(f):
    if f is None:
        return "-".center(50)
    rate = f"{f['rate']:.0f} IOPS" if f["unit"] == "IOPS" else f"{f['rate']:.2f} GB/s"
    ratio = f"{f['ratio']:.3f}" if f["ratio"] is not None else "  -  "
    bound = f"{100 * f['bound']:3.0f}%" if f["bound"] is not None else "  - "
    return f"{rate:>14} {ratio} {bound} {f['cpu']:5.0f}% {f['cpu_per']:6.1f}"


def engine_table(runs, prefix, title):
    names = sorted({n[: -len("-cpu")] for n in runs if n.startswith(prefix) and n.endswith("-cpu")} |
                   {n[: -len("-cuda")] for n in runs if n.startswith(prefix) and n.endswith("-cuda")})
    if not names:
        return []
    out = [title,
           f"{'row':<28} {'cpu: rate':>14} {'r/raw':5} {'bnd':4} {'CPU%':>6} {'CPU/GBs':>6} | "
           f"{'cuda: rate':>14} {'r/raw':5} {'bnd':4} {'CPU%':>6} {'CPU/GBs':>6} | cuda/cpu rate, CPU/GBs | "
           f"cuda batches zc/staged/cpu, jobs routed/fallback, ran"]
    for n in names:
        c = figures(runs[n + "-cpu"]) if n + "-cpu" in runs else None
        g = figures(runs[n + "-cuda"]) if n + "-cuda" in runs else None
        vs = ""
        if c and g and c["rate"] > 0:
            vs = f"{g['rate'] / c['rate']:.2f}x"
            if c["cpu_per"] > 0 and g["cpu_per"] > 0:
                vs += f", {g['cpu_per'] / c['cpu_per']:.2f}x"
        extra = f"{g['paths']}, {g['moved']}, {g['ran']}" if g else ""
        out.append(f"{n[len(prefix):]:<28} {cell(c)} | {cell(g)} | {vs:<22} | {extra}")
    return out


def main():
    d = sys.argv[1]
    runs = load(d)
    lines = [text(d, "header.txt").rstrip(), text(d, "gpu_parity_test.txt").rstrip(), ""]
    gb = text(d, "gpuraid-gpu-bench.txt")
    picked = [l for l in gb.splitlines() if re.match(r"(copy|launch|backend|kernel|device)", l)]
    if picked:
        lines += ["gpuraid-gpu-bench --lane (GB/s of data in; PCIe reads = host bytes read / H2D of the same bytes)"]
        lines += ["  " + l for l in picked] + [""]
    elif gb.strip():
        lines += ["gpuraid-gpu-bench: " + gb.strip().splitlines()[-1], ""]
    lines += engine_table(runs, "mem-", "engine, mem drives, 2 reactors (r/raw: RAID over raw in one invocation; "
                                        "bnd: share of the I/O-count bound; CPU/GBs: CPU % per GB/s)")
    lines += [""]
    lines += engine_table(runs, "null-", "engine, null drives (the engine's own CPU), by reactors")
    co = text(d, "corun-alone.txt").strip()
    if co:
        lines += ["", "sharing the GPU:"]
        alone = re.search(r"matmul_tflops ([\d.]+)", co)
        beside = re.search(r"matmul_tflops ([\d.]+)", text(d, "corun-beside.txt"))
        if alone and beside:
            a, b = float(alone.group(1)), float(beside.group(1))
            lines.append(f"  bf16 matmul: {a:.1f} TFLOPS alone, {b:.1f} beside the engine ({100 * (1 - b / a):.1f}% slower)")
            eng = runs.get("corun-null-r6-write1m-t2-cuda")
            solo = runs.get("null-r6-write1m-t2-cuda")
            if eng and solo:
                e, s = eng["raid"]["mbps"] / 1000, solo["raid"]["mbps"] / 1000
                lines.append(f"  engine RAID 6 1 MiB writes, null, 2 reactors: {e:.2f} GB/s beside the matmul, "
                             f"{s:.2f} GB/s alone ({100 * (1 - e / s):.1f}% slower)")
        else:
            lines.append("  " + co.splitlines()[-1])
    print("\n".join(lines))


if __name__ == "__main__":
    main()
