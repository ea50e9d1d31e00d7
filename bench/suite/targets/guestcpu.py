"""CPU figures of one side measured in the VM lane's guest, from the /proc
samples tests/vm/guest-bench.sh takes at the edges of fio's window (lines
"start|end uptime S", "start|end cpu ...", "start|end pid fio|server STAT")."""


def _parse(text):
    s = {}
    for line in text.splitlines():
        edge, kind, rest = (line.split(" ", 2) + ["", ""])[:3]
        if kind == "uptime":
            s[(edge, "t")] = float(rest)
        elif kind == "cpu":
            v = [int(x) for x in rest.split()][:8]  # user nice system idle iowait irq softirq steal
            s[(edge, "cpu")] = (v[0] + v[1], v[2] + v[5] + v[6] + v[7], sum(v))
        elif kind == "pid" and ")" in rest:
            role, stat = rest.split(" ", 1)
            f = stat.rsplit(")", 1)[1].split()
            s[(edge, role)] = (int(f[11]), int(f[12]))
    return s


def side_cpu(text, vcpus, tick=100):
    """cpu_* = the whole guest's busy CPU (fio, the server and the kernel: the
    guest runs nothing else), % of one vCPU; server_cpu_pct and fio_cpu_pct
    of those processes alone."""
    s = _parse(text)
    wall = s[("end", "t")] - s[("start", "t")]
    (u0, y0, t0), (u1, y1, t1) = s[("start", "cpu")], s[("end", "cpu")]
    busy = (u1 - u0 + y1 - y0) / max(t1 - t0, 1)

    def proc_pct(role):
        if ("start", role) not in s or ("end", role) not in s:
            return None
        (u0, y0), (u1, y1) = s[("start", role)], s[("end", role)]
        return 100 * (u1 - u0 + y1 - y0) / tick / wall

    return {"cpu_usr_s": (u1 - u0) / tick, "cpu_sys_s": (y1 - y0) / tick, "cpu_pct": 100 * busy * vcpus,
            "machine_cpu_pct": 100 * busy,
            "server_cpu_pct": proc_pct("server"), "fio_cpu_pct": proc_pct("fio"), "seconds": wall}
