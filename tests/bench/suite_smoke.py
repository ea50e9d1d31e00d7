#!/usr/bin/env python3
"""Smoke test of the benchmark suite: runs one target end to end on tiny
settings (one small geometry, every workload and state) and checks what it
wrote. Usage: suite_smoke.py TARGET GPURAID_BENCH OUT_DIR
  inproc  the in-process engine (2 runs per case)
  nbd     the NBD export with fio (1 run per case); exit 77 without fio's nbd engine
  cuda    CPU vs CUDA parity backend: without a GPU, checks that the suite
          reports "skipped: no GPU" (exit 77 from the suite) and says so
  ublk    the VM lane (TCG): 4K randwrite, normal and failed, raw / gpuraid ublk / md
          (about 2 minutes); exit 77 without qemu or the guest kernel"""
import csv
import glob
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(HERE, "..", "..", "bench", "suite", "run_suite.py")
# Per target: runs per case, extra suite arguments, cases expected (all 15, or
# 10 when the tool cannot measure the rebuilding state).
SETTINGS = {
    "inproc": (2, [], (10, 15)),
    "nbd": (1, [], (15,)),
    "cuda": (1, [], (15,)),
    "ublk": (1, ["--workloads", "4K randwrite", "--states", "normal,failed", "--runtime", "1", "--warmup", "0.5",
                 "--drive-size", "16M"], (2,)),
}
SKIP = 77


def check(cond, what):
    if not cond:
        sys.exit(f"suite_smoke: FAILED: {what}")


def run_suite(target, bench, out):
    runs, extra, _ = SETTINGS[target]
    cmd = [sys.executable, SUITE, "--target", target, "--quick", "--geometries", "5:3+1", "--drive-size", "8M",
           "--runtime", "0.25", "--warmup", "0.05", "--runs", str(runs), "--charts", "system",
           "--bench", bench, "--out", out, *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    print(p.stdout[-3000:], p.stderr[-3000:])
    return p.returncode


def check_skipped(out, rc):
    """A target that cannot run here must say why, in the report and results.json."""
    check(rc == SKIP, f"an unavailable target exits {SKIP}, got {rc}")
    with open(os.path.join(out, "results.json")) as f:
        meta = json.load(f)["meta"]
    with open(os.path.join(out, "report.md")) as f:
        report = f.read()
    check(meta["skipped"].startswith("skipped: no GPU") and meta["skipped"] in report, "the report says: skipped: no GPU")
    print(f"suite_smoke: ok (skip path: {meta['skipped']})")
    sys.exit(SKIP)


def lane_skipped(out):
    """The VM lane skips (77) when the guest kernel cannot be had: so does this test."""
    with open(os.path.join(out, "results.json")) as f:
        reasons = [c["reason"] for c in json.load(f)["cases"]]
    if any("VM lane was skipped" in r for r in reasons):
        print(f"SKIP: {reasons[0]}")
        sys.exit(SKIP)


def check_outputs(target, out):
    with open(os.path.join(out, "results.json")) as f:
        data = json.load(f)
    check(data["meta"]["target"]["target"] == target, f"results.json names target {target}")
    cases = data["cases"]
    runs, _, expect = SETTINGS[target]
    measured = [c for c in cases if c["status"] == "measured"]
    check(len(cases) == max(expect), f"{max(expect)} cases, got {len(cases)}")
    check(len(measured) in expect, f"{' or '.join(map(str, expect))} cases measured (rebuilding when the tool can), "
                                   f"got {len(measured)}: {[c['reason'] for c in cases if c['reason']]}")
    for c in measured:
        name = f"{c['workload']['name']} ({c['state']['name']})"
        check(len(c["runs"]) == runs, f"{name}: {runs} runs")
        check(target != "ublk" or c["summary"]["peer_ratio"] > 0, f"{name}: md measured beside gpuraid")
        # A half-second window can be starved on a busy 2-core machine: one
        # non-zero run per side is what proves the pipeline works.
        check(any(r["solution"]["iops"] > 0 for r in c["runs"]) and any(r["baseline"]["iops"] > 0 for r in c["runs"]),
              f"{name}: non-zero IOPS")
        check(all(r["solution"]["errors"] == 0 and r["baseline"]["errors"] == 0 for r in c["runs"]), f"{name}: no errors")
        check(c["summary"]["ratio"] > 0, f"{name}: a ratio")
        check(c["state"]["name"] == "rebuilding" or target == "cuda" or c["summary"]["io_count_bound"] > 0,
              f"{name}: a bound")
        check(all(r["solution"]["cpu_pct"] > 0 for r in c["runs"]) or c["workload"]["suite"] == "sequential",
              f"{name}: the serving process's CPU was measured")
    rebuilding = [c for c in cases if c["state"]["name"] == "rebuilding"]
    check(all(c["status"] in ("measured", "not measured") and (c["status"] == "measured" or c["reason"])
              for c in rebuilding), "rebuilding cases are measured or say why not")
    with open(os.path.join(out, "runs.csv")) as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == sum(len(c["runs"]) for c in measured) * 2, "runs.csv: one row per run and side")
    with open(os.path.join(out, "report.md")) as f:
        report = f.read()
    for needle in ("## Headline", "## Machine and build", "Commit ", "I/O-count bound", "CoV", "RAID 5 3+1",
                   data["meta"]["target"]["baseline_label"]):
        check(needle in report, f"report.md mentions '{needle}'")
    charts = [n for n in os.listdir(out) if n.endswith(".png")]
    want = sorted({f"chart-{c['workload']['suite']}.png" for c in measured})
    check(sorted(charts) == want or "No charts:" in report, f"charts {want}, or the report says why there are none")
    print(f"suite_smoke: ok ({target}: {len(measured)} cases measured, charts: {sorted(charts) or 'none'})")


def check_guard_off(bench, out):
    """--guard off (inproc): the RAID side runs without the write-hole guard and bitmap, and says so."""
    cmd = [sys.executable, SUITE, "--target", "inproc", "--quick", "--geometries", "5:3+1", "--drive-size", "8M",
           "--runtime", "0.3", "--warmup", "0.1", "--runs", "1", "--workloads", "4K randwrite", "--states", "normal",
           "--guard", "off", "--charts", "off", "--bench", bench, "--out", out]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"run_suite --guard off exited {p.returncode}: {p.stderr[-1000:]}")
    with open(os.path.join(out, "results.json")) as f:
        data = json.load(f)
    check(data["meta"]["params"]["guard"] == "off", "results.json: params.guard off")
    runs = [r for c in data["cases"] for r in c["runs"]]
    check(runs and all("--no-write-hole-guard" in r["command"] and "--no-write-intent" in r["command"] for r in runs),
          "every --guard off run passes --no-write-hole-guard --no-write-intent")
    with open(os.path.join(out, "report.md")) as f:
        check("write-hole guard and bitmap off" in f.read(), "report.md says the guard and bitmap were off")
    p = subprocess.run([sys.executable, SUITE, "--target", "inproc", "--guard", "maybe", "--out", out],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode != 0 and "--guard on|off" in p.stderr, "a bad --guard value is refused, saying why")
    print("suite_smoke: ok (--guard off)")


def main(target, bench, out):
    if target == "nbd" and (not shutil.which("fio") or
                            subprocess.run(["fio", "--enghelp=nbd"], capture_output=True).returncode != 0):
        print("SKIP: fio with its nbd engine is not installed (scripts/setup.sh installs it)")
        sys.exit(SKIP)
    if target == "ublk" and not shutil.which("qemu-system-x86_64"):
        print("SKIP: qemu-system-x86_64 is not installed (scripts/setup.sh installs it)")
        sys.exit(SKIP)
    rc = run_suite(target, bench, out)
    if target == "cuda" and not glob.glob("/dev/nvidia[0-9]*"):
        check_skipped(out, rc)
    if target == "ublk":
        lane_skipped(out)
    check(rc == 0, f"run_suite exited {rc}")
    check_outputs(target, out)
    if target == "inproc":
        check_guard_off(bench, out + "-guard-off")


if __name__ == "__main__":
    main(*sys.argv[1:4])
