"""The VM lane targets (environment "tcg"): the suite's fio jobs inside the
lane's guest (qemu TCG, Debian's 6.12 kernel, emulated NVMe drives), driven
by tests/vm/guest-bench.sh in one boot for the whole matrix:
  ublk: baseline the raw drives, solution a gpuraid RAID exported through
        ublk (gpuraid-export-harness), and md RAID by mdadm over the same
        drives as the peer (gpuraid / md from the same run);
  md:   baseline the raw drives, solution md RAID.
Sides are measured one after the other for each case and run, in an order
that rotates with the run. States normal and failed (member 0)."""
import os
import shutil
import subprocess
import sys
import tempfile

from . import fio
from .base import Target
from .bound import io_count_bound
from .guestcpu import side_cpu

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
LANE = os.path.join(REPO, "tests", "vm", "lane.sh")
VCPUS = 2  # run.sh's default (VMLANE_CPUS)


class VmLaneTarget(Target):
    environment = "tcg"
    batch = True
    baseline_label = "raw emulated NVMe drives (fio io_uring, TCG)"
    sides = ()          # the sides measured: "raw" first, then the solution, then any peer
    peer_label = None
    method = [
        "VM lane (tests/vm/lane.sh, guest tests/vm/guest-bench.sh): one boot for the whole matrix; qemu TCG "
        f"with {VCPUS} vCPUs, emulated NVMe drives backed by sparse files on the host (cache=none). For every "
        "case and run each side is written once (fio, 1 MiB sequential), then measured with the same fio job "
        "line (io_uring, O_DIRECT, one thread per job); the sides' order rotates from run to run.",
        "The raw side runs on as many drives as the RAID has members; gpuraid: gpuraid-export-harness --ublk "
        "(block drives, one reactor = one ublk queue per fio job); md: mdadm --create --assume-clean, the same "
        "chunk, 1 MiB data offset. Failed: member 0 failed after the fill (harness control FIFO; mdadm --fail).",
        "CPU: the whole guest's busy CPU over fio's window (the guest runs nothing else), % of one vCPU, from "
        "the guest's /proc/stat; the serving process (harness, or the mdN_raidL kernel thread, which does only "
        "part of md's work) and fio are in results.json. Others' CPU = the host's CPU outside qemu over the "
        "whole lane run (one figure for every case).",
    ]

    def unavailable(self):
        if not shutil.which("qemu-system-x86_64"):
            return "qemu-system-x86_64 is not installed (scripts/setup.sh installs it)"
        harness = os.path.join(os.path.dirname(self.tool or ""), "gpuraid-export-harness")
        if not os.access(harness, os.X_OK) or not os.access(self.tool or "", os.X_OK):
            return f"{harness} and gpuraid-bench must be built"
        return None

    def unsupported(self, case):
        if case.state.name == "rebuilding":
            return "not measured: the VM lane targets measure the normal and failed states"
        if "md" in self.sides and case.geometry.level not in ("5", "6"):
            return "not measured: md has RAID 5 and 6 only"
        return None

    def describe(self):
        harness = os.path.join(os.path.dirname(self.tool or ""), "gpuraid-export-harness")
        return {**super().describe(), "tool": harness, "tool_built": self.built(harness), "lane": LANE,
                "peer_label": self.peer_label, "drives": "emulated NVMe in the guest (sparse files on the host)"}

    # -- the batch -----------------------------------------------------------
    def plan(self, cases, runs):
        p = self.params
        lines = [f"threads {p.threads}", f"window {p.warmup} {p.runtime}", "fill " + " ".join(fio.fill_args(p.threads))]
        for r in range(runs):
            k = r % len(self.sides)
            order = ",".join(self.sides[k:] + self.sides[:k])
            for i, c in enumerate(cases):
                g = c.geometry
                job = fio.job_args(c.workload, p.iodepth, p.threads, p.runtime, p.warmup, p.seed + r)
                lines.append(f"case c{i} {r} {g.level} {g.members} {g.strip} {c.state.name} {order} {' '.join(job)}")
        return "\n".join(lines) + "\n"

    def run_batch(self, cases, runs):
        share = tempfile.mkdtemp(prefix="gpuraid-suite-vm-")
        try:
            with open(os.path.join(share, "plan"), "w") as f:
                f.write(self.plan(cases, runs))
            out = os.path.join(share, "out")
            os.makedirs(out)
            others, lane_error = self._boot(share, out, max(c.geometry.members for c in cases), len(cases) * runs)
            # What the guest measured counts even when the lane ended badly; the rest fails with the lane's reason.
            for i, c in enumerate(cases):
                for r in range(runs):
                    self._collect(c, f"c{i}", r, out, others)
                if lane_error and c.status != "failed" and len(c.runs) < runs:
                    c.status, c.reason = "failed", f"failed: {lane_error}"
        finally:
            shutil.rmtree(share, ignore_errors=True)

    def _boot(self, share, out, nvme, case_runs):
        """Runs the lane; returns the host's CPU used outside qemu over the run (% of one core), and
        why the lane failed (None when it did not)."""
        from .procstat import machine_cpu, process_cpu
        p = self.params
        per_side = 2 * (p.warmup + p.runtime) + 15   # fill, start-up, TCG's slowness
        timeout = int(120 + case_runs * len(self.sides) * per_side)
        env = {**os.environ, "VMLANE_SHARE": share, "VMLANE_NVME_SIZE": p.drive_size, "VMLANE_TIMEOUT": str(timeout)}
        cmd = [LANE, "--guest", "guest-bench.sh", "--nvme", str(nvme), os.path.dirname(self.tool),
               os.path.join(share, "plan"), out]
        m0 = machine_cpu()
        lane = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        log, qemu_s = [], 0.0
        for line in lane.stdout:
            log.append(line)
            print("  vm: " + line.rstrip(), flush=True)
            qemu_s = max(qemu_s, _qemu_cpu(lane.pid, process_cpu))
        lane.wait()
        m1 = machine_cpu()
        busy_s = (m1[0] - m0[0]) / os.sysconf("SC_CLK_TCK")
        wall = (m1[1] - m0[1]) / os.sysconf("SC_CLK_TCK") / os.cpu_count()
        others = max(0.0, 100 * (busy_s - qemu_s) / max(wall, 1e-9))
        if lane.returncode == 77:
            return others, "the VM lane was skipped: " + "".join(log[-3:]).strip()
        if not os.path.exists(os.path.join(out, "done")):
            return others, f"VM lane exit {lane.returncode}: {''.join(log[-5:]).strip()}"
        if lane.returncode != 0:  # the guest finished the plan (its results are whole), the lane then failed
            print(f"run_suite: the VM lane exited {lane.returncode} after the guest finished: {log[-1].strip()}",
                  file=sys.stderr)
        return others, None

    def _side(self, out, name, others):
        err = os.path.join(out, name + ".error")
        if os.path.exists(err):
            with open(err) as f:
                raise RuntimeError(f"{name}: {f.read().strip()}")
        with open(os.path.join(out, name + ".json")) as f:
            s = fio.side(fio.load_json(f.read()), self.params.runtime)
        with open(os.path.join(out, name + ".cpu")) as f:
            s.update(side_cpu(f.read(), VCPUS))
        s["others_cpu_pct"] = others
        s["iops_per_cpu_pct"] = s["iops"] / s["cpu_pct"] if s["cpu_pct"] > 0 else 0.0
        return s

    def _collect(self, case, cid, r, out, others):
        if case.status == "failed":
            return
        try:
            sides = {s: self._side(out, f"{cid}.{r}.{s}", others) for s in self.sides}
        except (OSError, ValueError, KeyError, RuntimeError) as e:
            case.status, case.reason = "failed", f"failed: {e}"
            return
        base, sol = sides["raw"], sides[self.sides[1]]
        run = {"command": ["tests/vm/guest-bench.sh", cid, str(r)], "baseline": base, "solution": sol,
               "ratio": {k: sol[k] / base[k] if base[k] else 0.0 for k in ("iops", "mbps", "iops_per_cpu_pct")},
               "io_count_bound": io_count_bound(self.tool, case, self.params.drive_size), "parity_backend": ""}
        if len(self.sides) > 2:
            run["peer"] = sides[self.sides[2]]
        case.runs.append(run)


def _qemu_cpu(lane_pid, process_cpu):
    """usr+sys seconds of the qemu under lane.sh (its descendants named qemu-system-*)."""
    total = 0.0
    for pid in _descendants(lane_pid):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().startswith("qemu-system"):
                    total += sum(process_cpu(pid))
        except OSError:
            pass
    return total


def _descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                kids = [int(x) for x in f.read().split()]
        except OSError:
            kids = []
        out += kids
        todo += kids
    return out


class UblkTarget(VmLaneTarget):
    name = "ublk"
    solution_label = "gpuraid through ublk (TCG)"
    peer_label = "md"
    sides = ("raw", "ublk", "md")


class MdTarget(VmLaneTarget):
    name = "md"
    solution_label = "md RAID by mdadm (TCG)"
    sides = ("raw", "md")
