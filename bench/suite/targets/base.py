"""The target plug-in interface. A run is a dict:
  {"baseline": Side, "solution": Side, "io_count_bound": float, "ratio": {...}}
where Side holds iops, mbps, lat_p50_us, lat_p99_us, lat_p999_us, cpu_usr_s,
cpu_sys_s, cpu_pct (usr+sys of the measured process, % of one core),
machine_cpu_pct (% of all cores), iops_per_cpu_pct, errors, seconds."""


class Target:
    name = "?"
    environment = "host"    # "host" or "tcg" (VM lane under qemu TCG)
    solution_label = "gpuraid"
    baseline_label = "raw drives"

    def __init__(self, params, tool=None):
        self.params = params
        self.tool = tool

    def unavailable(self):
        """None, or why this target cannot run on this machine/checkout."""
        return None

    def unsupported(self, case):
        """None, or why this case (e.g. its life-cycle state) cannot be measured."""
        return None

    def describe(self) -> dict:
        return {"target": self.name, "environment": self.environment}

    def run(self, case, run_index: int) -> dict:
        raise NotImplementedError
