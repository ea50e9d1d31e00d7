"""The target plug-in interface. A run is a dict:
  {"baseline": Side, "solution": Side, "io_count_bound": float, "ratio": {...}}
where Side holds iops, mbps, lat_p50_us, lat_p99_us, lat_p999_us, lat_mean_us, cpu_usr_s,
cpu_sys_s, cpu_pct (usr+sys of the measured process, % of one core),
machine_cpu_pct (% of all cores), iops_per_cpu_pct, errors, seconds, and
optionally client_cpu_pct (a separate load generator, e.g. fio as NBD client)."""
import datetime
import os


class Target:
    name = "?"
    environment = "host"    # "host" or "tcg" (VM lane under qemu TCG)
    solution_label = "gpuraid"
    baseline_label = "raw drives"
    method = []             # lines for the report: how this target measures

    def __init__(self, params, tool=None):
        self.params = params
        self.tool = tool

    def unavailable(self):
        """None, or why this target cannot run on this machine/checkout; a reason
        that starts with "skipped" (e.g. no GPU) makes the suite write a report
        that says so and exit 77, anything else is an error."""
        return None

    def unsupported(self, case):
        """None, or why this case (e.g. its life-cycle state) cannot be measured."""
        return None

    def describe(self) -> dict:
        return {"target": self.name, "environment": self.environment, "method": self.method}

    @staticmethod
    def built(path):
        """A program's build time: the commit alone does not say what was built from a dirty tree."""
        try:
            return datetime.datetime.fromtimestamp(os.path.getmtime(path)).astimezone().isoformat(timespec="seconds")
        except OSError:
            return None

    def run(self, case, run_index: int) -> dict:
        raise NotImplementedError

    # A batch target (batch = True) measures every run of every case in one
    # session instead (the VM lane boots once): run_batch appends the runs to
    # each case's runs, or marks a case failed with the reason.
    batch = False

    def run_batch(self, cases, runs: int) -> None:
        raise NotImplementedError
