"""The in-process engine (host): gpuraid-bench --compare, which measures the
same member drives without RAID (baseline) and with it (solution) in one
invocation (--state rebuilding: raw on the healthy drives, then the RAID
while a member is rebuilt). One invocation per run, so every run is
recorded whole."""
import json
import subprocess

from .base import Target

SIDE_KEYS = ("iops", "mbps", "lat_p50_us", "lat_p99_us", "lat_p999_us", "lat_mean_us", "cpu_usr_s",
             "cpu_sys_s", "cpu_pct", "machine_cpu_pct", "iops_per_cpu_pct", "errors", "seconds")
NO_REBUILD = "not measured: needs rebuild support in gpuraid-bench (flag --state rebuilding)"


class InprocTarget(Target):
    name = "inproc"
    environment = "host"
    solution_label = "gpuraid (in-process)"
    method = [
        "Both sides in one gpuraid-bench invocation, raw first then RAID: the raw side issues each logical I/O "
        "as one member I/O, round-robin over the members.",
        "Rebuilding: gpuraid-bench --state rebuilding measures the raw drives while healthy, then fails member 0, "
        "starts its rebuild onto a fresh drive and measures the RAID while it runs (then a second rebuild with "
        "the foreground idle, for the rebuild rate).",
        "Writes as a drive group does them: the write-hole guard (partial parity log) and the write-intent bitmap "
        "on in every state (gpuraid-bench's default), unless the parameters say `guard off` (both off: "
        "`--no-write-hole-guard --no-write-intent`, as md without PPL and bitmap; the rebuilding state's group "
        "keeps its bitmap); `gpuraid-bench --guard-compare` measures their cost in one invocation.",
        "CPU: usr+sys of the whole benchmark process (all threads, io_uring workers included) during the measured "
        "window, % of one core. Both sides run in one process, so each side's CPU is its own window's.",
    ]

    def __init__(self, params, tool=None):
        super().__init__(params, tool)
        self._help = None

    def _tool_help(self) -> str:
        if self._help is None:
            try:
                p = subprocess.run([self.tool, "--help"], capture_output=True, text=True, timeout=30)
                self._help = p.stdout + p.stderr
            except OSError as e:
                self._help = f"error: {e}"
        return self._help

    def unavailable(self):
        if "--compare" not in self._tool_help():
            return f"gpuraid-bench not usable at {self.tool}: {self._tool_help()[:200]}"
        return None

    def unsupported(self, case):
        # Measured as soon as gpuraid-bench grows the flag.
        if case.state.name == "rebuilding" and "--state" not in self._tool_help():
            return NO_REBUILD
        return None

    def describe(self) -> dict:
        return {**super().describe(), "tool": self.tool, "tool_built": self.built(self.tool)}

    def command(self, case, run_index: int) -> list:
        p, g, w = self.params, case.geometry, case.workload
        cmd = [self.tool, "--level", g.level, "--members", str(g.members), "--strip", g.strip,
               "--drive-type", p.drive_type, "--drive-size", p.drive_size, "--rw", w.rw, "--bs", w.bs,
               "--rwmixread", str(w.rwmixread), "--iodepth", str(p.iodepth), "--threads", str(p.threads),
               "--runtime", str(p.runtime), "--warmup", str(p.warmup), "--seed", str(p.seed + run_index), "--json"]
        if g.level == "ec":
            cmd += ["--parity", str(g.parity)]
        if p.guard == "off":  # as md without PPL and bitmap (the rebuilding state's group keeps its bitmap)
            cmd += ["--no-write-hole-guard", "--no-write-intent"]
        if case.state.name == "rebuilding":  # gpuraid-bench fails member 0 and rebuilds it onto a new drive
            return cmd + ["--state", "rebuilding", "--rebuild-rate", str(p.rebuild_rate_bytes())]
        if case.state.failed_members:
            cmd += ["--fail", str(case.state.failed_members)]
        return cmd + ["--compare"]

    def run(self, case, run_index: int) -> dict:
        cmd = self.command(case, run_index)
        timeout = 120 + 4 * (self.params.runtime + self.params.warmup)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"exit {p.returncode}: {' '.join(cmd)}\n{p.stderr.strip()[-2000:]}")
        out = json.loads(p.stdout)
        if case.state.name == "rebuilding":
            return self._rebuilding_run(cmd, out)
        return {"command": cmd,
                "baseline": {k: out["raw"][k] for k in SIDE_KEYS},
                "solution": {k: out["raid"][k] for k in SIDE_KEYS},
                "solution_engine": out["raid"].get("engine", {}),
                "io_count_bound": out["io_count_bound"],
                "ratio": out["ratio"],
                "parity_backend": out["config"].get("parity_backend", "")}

    def _rebuilding_run(self, cmd, out) -> dict:
        """--state rebuilding: raw foreground on the healthy drives, then the RAID
        foreground while member 0 is rebuilt; no I/O-count bound (rebuild
        traffic shares the drives)."""
        base, sol = out["foreground_raw"], out["foreground_during_rebuild"]
        under = out["rebuild_under_load"]
        # Bytes rebuilt from the rebuild's start (before the warm-up) to the window's
        # end, as gpuraid-bench divides them by the window alone; a whole member
        # (the idle rebuild's bytes) means the rebuild ended inside the window.
        rebuilt = under["mbps"] * 1e6 * sol["seconds"]
        member = out["rebuild_idle"]["mbps"] * 1e6 * out["rebuild_idle"]["seconds"]
        return {"command": cmd,
                "baseline": {k: base[k] for k in SIDE_KEYS},
                "solution": {k: sol[k] for k in SIDE_KEYS},
                "io_count_bound": None,
                "ratio": {"iops": out["foreground_ratio"]},
                "parity_backend": out["config"].get("parity_backend", ""),
                "rebuild": {"under_load_mbps": under["mbps"], "under_load_ratio_to_raw_write": under["ratio_to_raw_write"],
                            "idle_mbps": out["rebuild_idle"]["mbps"],
                            "idle_ratio_to_raw_write": out["rebuild_idle"]["ratio_to_raw_write"],
                            "replacement_raw_write_mbps": out["replacement_raw_write_mbps"],
                            "io_bound_mbps": out.get("rebuild_io_bound_mbps"),
                            "idle_ratio_to_bound": out["rebuild_idle"].get("ratio_to_bound"),
                            "rate_limit": out["config"].get("rebuild_rate_limit", 0),
                            "lasted_window": rebuilt < 0.99 * member}}

