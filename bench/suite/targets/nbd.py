"""NBD export driven by fio's nbd engine (host). One run of a case:
  solution: gpuraid-export-harness (mem drives, as many reactors as the
      suite's threads, NBD on a Unix socket), every byte written once, then
      fio --ioengine=nbd with the case's workload, one connection per job
      (jobs = threads); CPU = the harness's over fio's measured window, fio's
      own CPU as the client's.
  baseline: the same fio job with --ioengine=io_uring --direct=1 over as many
      files of the drive size in /dev/shm as the RAID has members (each I/O
      one member I/O, as gpuraid-bench's raw side), also written once first.
  The two sides alternate their order from run to run.
  failed: "fail 0" through the harness's control FIFO after the fill.
  rebuilding: a drive group (--group create, rebuild rate capped as the
      suite's --rebuild-rate), "fail 0", then "replace 0 FILE" and fio while
      member 0 is rebuilt; the run records whether the rebuild outlasted fio.
The I/O-count bound comes from gpuraid-bench's planner (bound.py)."""
import os
import shutil
import subprocess
import tempfile

from . import fio
from .base import Target
from .bound import io_count_bound
from .harness import Harness
from params import parse_size

SHM = "/dev/shm"


class NbdTarget(Target):
    name = "nbd"
    environment = "host"
    solution_label = "gpuraid over NBD (fio nbd engine)"
    baseline_label = "raw files in /dev/shm (fio io_uring)"
    method = [
        "The baseline's fio (io_uring, O_DIRECT) runs on as many /dev/shm files of the drive size as the RAID has "
        "members; the solution's fio (nbd engine) on gpuraid-export-harness (mem drives, one reactor per fio job, "
        "NBD on a Unix socket). Same fio job line on both sides, one connection per job; both written once "
        "first. Baseline and solution alternate their order from run to run.",
        "CPU: usr+sys of the serving process (the harness; for the baseline, fio itself) from /proc over fio's "
        "measured window, % of one core. The NBD client's CPU (fio) is recorded apart (client_cpu_pct) and "
        "not counted as others' CPU. Solution and baseline do not do the same work: the solution's server "
        "does not pay for the client.",
        "The I/O-count bound is gpuraid-bench's (its planner) for the same geometry, workload and state.",
        "Failed: member 0 failed through the harness's control FIFO after the fill. Rebuilding: a drive group, "
        "member 0 failed and replaced by a fresh /dev/shm file; fio runs while it is rebuilt at the capped rate.",
    ]

    def __init__(self, params, tool=None):
        super().__init__(params, tool)
        self.harness = os.path.join(os.path.dirname(tool or ""), "gpuraid-export-harness")

    def unavailable(self):
        if not shutil.which("fio"):
            return "fio is not installed (scripts/setup.sh installs it)"
        if subprocess.run(["fio", "--enghelp=nbd"], capture_output=True).returncode != 0:
            return "this fio has no nbd engine"
        for exe in (self.tool, self.harness):
            if not exe or not os.access(exe, os.X_OK):
                return f"{exe} is not built"
        return None

    def unsupported(self, case):
        if case.geometry.level == "ec" and case.geometry.parity != 2:
            return "not measured: the export harness makes EC groups with 2 parity members only"
        return None

    def describe(self):
        return {**super().describe(), "tool": self.harness, "tool_built": self.built(self.harness),
                "drives": "mem drives in the harness (baseline: /dev/shm files)"}

    # -- one run ---------------------------------------------------------------
    def run(self, case, run_index):
        work = tempfile.mkdtemp(prefix="gpuraid-suite-nbd-")
        shm = tempfile.mkdtemp(prefix="gpuraid-suite-", dir=SHM)
        try:
            sides = {}
            order = ("baseline", "solution") if run_index % 2 == 0 else ("solution", "baseline")
            for s in order:
                sides[s] = self._baseline(case, run_index, shm, work) if s == "baseline" else \
                    self._solution(case, run_index, shm, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
            shutil.rmtree(shm, ignore_errors=True)
        base, sol = sides["baseline"], sides["solution"]
        rebuild = sol.pop("rebuild", None)
        ratio = {k: sol[k] / base[k] if base[k] else 0.0 for k in ("iops", "mbps", "iops_per_cpu_pct")}
        run = {"command": sol.pop("command"), "baseline_command": base.pop("command"), "baseline": base,
               "solution": sol, "ratio": ratio, "parity_backend": "",
               "io_count_bound": None if case.state.name == "rebuilding" else
               io_count_bound(self.tool, case, self.params.drive_size)}
        if rebuild:
            run["rebuild"] = rebuild
        return run

    def _jobs(self, case, run_index):
        p = self.params
        return fio.job_args(case.workload, p.iodepth, p.threads, p.runtime, p.warmup, p.seed + run_index)

    def _baseline(self, case, run_index, shm, work):
        p, n = self.params, case.geometry.members
        files = [os.path.join(shm, f"raw{i}") for i in range(n)]
        target = ["--ioengine=io_uring", "--direct=1", "--filename=" + ":".join(files),
                  f"--filesize={parse_size(p.drive_size)}"]
        _run(["fio", "--name=fill", *target, *fio.fill_args(p.threads)], work)
        cmd = ["fio", "--name=raw", *target, *self._jobs(case, run_index)]
        return {**fio.run_measured(cmd, p.warmup, p.runtime, cwd=work), "command": cmd}

    def _solution(self, case, run_index, shm, work):
        p, g, state = self.params, case.geometry, case.state.name
        sock = os.path.join(work, "nbd.sock")
        args = ["--level", g.level, "--members", str(g.members), "--strip", g.strip, "--drive-type", "mem",
                "--drive-size", p.drive_size, "--reactors", str(p.threads), "--nbd", "unix:" + sock]
        if state == "rebuilding":
            args += ["--group", "create", "--rebuild-rate", str(p.rebuild_rate_bytes())]
        with Harness(self.harness, work, args) as h:
            if state == "rebuilding":
                h.wait_log("init_finished", 120)
            uri = h.state["nbd_uri"]
            _run(["fio", "--name=fill", "--ioengine=nbd", "--uri=" + uri, *fio.fill_args(p.threads)], work)
            if case.state.failed_members:
                h.command("fail 0")
                h.wait_log("member 0 failed", 30)
            if state == "rebuilding":
                spare = os.path.join(shm, "spare")
                with open(spare, "wb") as f:
                    f.truncate(parse_size(p.drive_size))
                h.command(f"replace 0 {spare}")
                h.wait_log("control 'replace 0", 30)
            cmd = ["fio", "--name=nbd", "--ioengine=nbd", "--uri=" + uri, *self._jobs(case, run_index)]
            out = {**fio.run_measured(cmd, p.warmup, p.runtime, server_pid=h.pid, cwd=work), "command": cmd}
            if state == "rebuilding":
                out["rebuild"] = {"rate_limit": p.rebuild_rate_bytes(),
                                  "lasted_window": "rebuild_finished" not in h.log()}
        return out


def _run(cmd, cwd):
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"exit {p.returncode}: {' '.join(cmd)}\n{(p.stderr or p.stdout).strip()[-1500:]}")
