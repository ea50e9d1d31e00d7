#!/usr/bin/env python3
"""The cost of the NBD frontend (issue #6), in one invocation on one
geometry: the in-process engine (gpuraid-bench), fio's nbd engine against
gpuraid's NBD export of the same RAID (gpuraid-export-harness, mem drives),
and fio against nbdkit's memory plugin (the peer NBD server), for 4K random
read/write and 128K sequential read/write. The three take turns within every
round (the order rotates), and each ratio is the median of the rounds'
ratios. Writes nbd-cost.json and nbd-cost.md into --out.
  bench/nbd_cost/run.py --bindir build/bin --out /tmp/nbd-cost [--levels 0,5] [--rounds 3]"""
import argparse
import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time

SUITE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "suite")
sys.path.insert(0, SUITE)
import machine  # noqa: E402
from matrix import SUITES  # noqa: E402
from targets import fio  # noqa: E402
from targets.harness import Harness  # noqa: E402

REPO = os.path.dirname(os.path.dirname(SUITE))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import table  # noqa: E402

# Workload name -> QD per job: "QD high" for 4K, 8 for 128K (as bench/suite's defaults and bench-facts).
WORKLOADS = {"4K randread": 32, "4K randwrite": 32, "128K read": 8, "128K write": 8}


def parse_args(argv):
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--bindir", default=os.path.join(REPO, "build", "bin"))
    a.add_argument("--out", required=True)
    a.add_argument("--levels", default="0,5", help="RAID levels (RAID 0 is the headline)")
    a.add_argument("--members", type=int, default=4)
    a.add_argument("--strip", default="64K")
    a.add_argument("--drive-size", default="256M")
    a.add_argument("--jobs", type=int, default=2, help="fio jobs = NBD connections = reactors = bench threads")
    a.add_argument("--runtime", type=float, default=3.0)
    a.add_argument("--warmup", type=float, default=1.0)
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--workloads", default=",".join(WORKLOADS))
    a.add_argument("--note", default="", help="a sentence on the machine's load, put in the report")
    return a.parse_args(argv)


def workloads(names):
    known = {w.name: w for ws in SUITES.values() for w in ws}
    return [(known[n], WORKLOADS[n]) for n in names.split(",")]


class Nbdkit:
    """nbdkit's memory plugin on a Unix socket (only this process is stopped)."""

    def __init__(self, work, size):
        self.work, self.size = work, size

    def __enter__(self):
        work, size = self.work, self.size
        self.sock = os.path.join(work, "kit.sock")
        self.proc = subprocess.Popen(["nbdkit", "--unix", self.sock, "--foreground", "--exit-with-parent", "memory",
                                      str(size)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(200):
            if os.path.exists(self.sock):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("nbdkit did not come up")
        self.uri, self.pid = f"nbd+unix:///?socket={self.sock}", self.proc.pid
        return self

    def __exit__(self, *exc):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)
        return False


def fio_nbd(args, uri, w, qd, seed, server_pid, work):
    cmd = ["fio", "--name=nbd", "--ioengine=nbd", "--uri=" + uri,
           *fio.job_args(w, qd, args.jobs, args.runtime, args.warmup, seed)]
    return fio.run_measured(cmd, args.warmup, args.runtime, server_pid=server_pid, cwd=work)


def fill(uri, jobs, work):
    p = subprocess.run(["fio", "--name=fill", "--ioengine=nbd", "--uri=" + uri, *fio.fill_args(jobs)],
                       capture_output=True, text=True, cwd=work, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"fill of {uri}: {p.stderr[-1000:]}")


def inproc(args, level, w, qd, seed):
    cmd = [os.path.join(args.bindir, "gpuraid-bench"), "--level", level, "--members", str(args.members), "--strip",
           args.strip, "--drive-type", "mem", "--drive-size", args.drive_size, "--rw", w.rw, "--bs", w.bs,
           "--iodepth", str(qd), "--threads", str(args.jobs), "--runtime", str(args.runtime), "--warmup",
           str(args.warmup), "--seed", str(seed), "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)}: {p.stderr[-1000:]}")
    r = json.loads(p.stdout)["raid"]
    return {k: r[k] for k in ("iops", "mbps", "cpu_pct", "machine_cpu_pct", "lat_p50_us", "lat_p99_us")}


def measure_round(args, rnd, w, qd, levels, servers, kit, work):
    """One round of one workload: every server once, in an order that rotates with the round."""
    seed = 1 + rnd
    steps = [("nbdkit", "-", lambda: fio_nbd(args, kit.uri, w, qd, seed, kit.pid, work))]
    for level, h in zip(levels, servers):
        steps += [("gpuraid-nbd", level, lambda h=h: fio_nbd(args, h.state["nbd_uri"], w, qd, seed, h.pid, work)),
                  ("inproc", level, lambda level=level: inproc(args, level, w, qd, seed))]
    k = rnd % len(steps)
    out = []
    for kind, level, measure in steps[k:] + steps[:k]:
        r = measure()
        out.append({"round": rnd, "workload": w.name, "qd": qd, "kind": kind, "level": level, **r})
        print(f"[round {rnd + 1}/{args.rounds}] {w.name:13} {kind:11} RAID {level}: {r['iops']:9.0f} IOPS "
              f"{r['mbps']:8.0f} MB/s  server CPU {r['cpu_pct']:4.0f}%", flush=True)
    return out


def main(argv):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    levels = args.levels.split(",")
    wl = workloads(args.workloads)
    work = tempfile.mkdtemp(prefix="gpuraid-nbd-cost-")
    harness_exe = os.path.join(args.bindir, "gpuraid-export-harness")
    meta = {"command": shlex.join(["bench/nbd_cost/run.py", *argv]), "machine": machine.machine_info(),
            "commit": machine.commit_info(REPO), "load_before": machine.load_average(), "note": args.note,
            "params": {k: v for k, v in vars(args).items() if k not in ("out", "note")},
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    results = []  # one dict per (round, workload, server)
    with contextlib.ExitStack() as stack:
        servers = []
        for level in levels:
            d = os.path.join(work, f"raid{level}")
            os.makedirs(d)
            servers.append(stack.enter_context(Harness(harness_exe, d, [
                "--level", level, "--members", str(args.members), "--strip", args.strip, "--drive-type", "mem",
                "--drive-size", args.drive_size, "--reactors", str(args.jobs), "--nbd",
                "unix:" + os.path.join(d, "nbd.sock")])))
            fill(servers[-1].state["nbd_uri"], args.jobs, work)
        kit = stack.enter_context(Nbdkit(work, int(servers[0].state["size"])))
        fill(kit.uri, args.jobs, work)
        for rnd in range(args.rounds):
            for w, qd in wl:
                results += measure_round(args, rnd, w, qd, levels, servers, kit, work)
    meta["load_after"] = machine.load_average()
    with open(os.path.join(args.out, "nbd-cost.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    md = table.render(meta, results, levels, [w.name for w, _ in wl])
    with open(os.path.join(args.out, "nbd-cost.md"), "w") as f:
        f.write(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
