"""CPU accounting from /proc: a process's usr/sys seconds (all its threads,
io_uring workers included) and the machine's busy share, sampled at the
edges of a measured window."""
import os

TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid):
    """(usr, sys) seconds of a whole process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICK, int(fields[12]) / TICK


def machine_cpu():
    """(busy, total) jiffies of all cores."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


class Window:
    """Samples the processes and the machine at start() and stop()."""

    def __init__(self, pids):
        self.pids = pids

    def _sample(self):
        return {p: process_cpu(p) for p in self.pids}, machine_cpu()

    def start(self):
        self.t0 = os.times().elapsed
        self.s0 = self._sample()

    def stop(self):
        self.t1 = os.times().elapsed
        self.s1 = self._sample()

    def cpu(self, pid):
        """{"cpu_usr_s", "cpu_sys_s", "cpu_pct"} of one process over the window (% of one core)."""
        (u0, s0), (u1, s1) = self.s0[0][pid], self.s1[0][pid]
        wall = max(self.t1 - self.t0, 1e-9)
        return {"cpu_usr_s": u1 - u0, "cpu_sys_s": s1 - s0, "cpu_pct": 100 * (u1 - u0 + s1 - s0) / wall}

    def machine_pct(self):
        (b0, t0), (b1, t1) = self.s0[1], self.s1[1]
        return 100 * (b1 - b0) / max(t1 - t0, 1)
