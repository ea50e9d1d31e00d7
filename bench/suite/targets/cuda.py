"""The parity backends compared: the in-process engine with
--parity-backend cpu (baseline, ISA-L) and --parity-backend cuda (solution)
on the same geometry, workload and state, as two gpuraid-bench invocations
per run whose order alternates from run to run. Needs a GPU and a
gpuraid-bench built with CUDA; otherwise the whole target is skipped and
says why."""
import glob
import json
import subprocess

from .inproc import SIDE_KEYS, InprocTarget


class CudaTarget(InprocTarget):
    name = "cuda"
    solution_label = "gpuraid, CUDA parity backend"
    baseline_label = "gpuraid, CPU parity backend (ISA-L)"
    method = [
        "Both sides are the in-process RAID (gpuraid-bench without --compare), once with --parity-backend cpu "
        "and once with --parity-backend cuda, same seed; the order alternates from run to run. Rebuilding: "
        "the foreground during the rebuild of member 0 (gpuraid-bench --state rebuilding).",
        "CPU: usr+sys of the whole benchmark process over its measured window, % of one core (GPU time is not "
        "CPU time: the CUDA side's per-CPU% figure is the point).",
    ]

    def unavailable(self):
        why = super().unavailable()
        if why:
            return why
        if not glob.glob("/dev/nvidia[0-9]*"):
            return "skipped: no GPU (no /dev/nvidia* device on this machine)"
        probe = [self.tool, "--level", "5", "--members", "3", "--drive-type", "null", "--drive-size", "16M",
                 "--runtime", "0.05", "--parity-backend", "cuda", "--json"]
        p = subprocess.run(probe, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            return f"skipped: no usable GPU backend ({p.stderr.strip()[-300:] or f'exit {p.returncode}'})"
        return None

    def unsupported(self, case):
        return None if "--parity-backend" in self._tool_help() else "not measured: gpuraid-bench has no --parity-backend"

    def backend_command(self, case, run_index, backend):
        cmd = [a for a in self.command(case, run_index) if a != "--compare"]
        return cmd + ["--parity-backend", backend]

    def _side(self, case, run_index, backend):
        cmd = self.backend_command(case, run_index, backend)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120 + 4 * (self.params.runtime + self.params.warmup))
        if p.returncode != 0:
            raise RuntimeError(f"exit {p.returncode}: {' '.join(cmd)}\n{p.stderr.strip()[-2000:]}")
        out = json.loads(p.stdout)
        sol = out.get("raid") or out["foreground_during_rebuild"]
        return cmd, out, {k: sol[k] for k in SIDE_KEYS}

    def run(self, case, run_index):
        order = ("cpu", "cuda") if run_index % 2 == 0 else ("cuda", "cpu")
        got = {b: self._side(case, run_index, b) for b in order}
        (_, out_cpu, base), (cmd, out, sol) = got["cpu"], got["cuda"]
        ratio = {k: sol[k] / base[k] if base[k] else 0.0 for k in ("iops", "mbps", "iops_per_cpu_pct")}
        return {"command": cmd, "baseline_command": got["cpu"][0], "baseline": base, "solution": sol, "ratio": ratio,
                "io_count_bound": None,  # both sides are the RAID: the bound is about raw drives
                "parity_backend": f"{out_cpu['config'].get('parity_backend', '')} vs "
                                  f"{out['config'].get('parity_backend', '')}"}
