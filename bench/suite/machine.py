"""What the report must state about where and from what it ran: machine
(CPU model, cores, kernel, memory), commit, and how busy the machine was."""
import os
import platform
import subprocess


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_gib():
    try:
        with open("/proc/meminfo") as f:
            return round(int(f.readline().split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        return None


def load_average():
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except OSError:
        return None


def _git(repo, *args):
    try:
        p = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, timeout=30)
        return p.stdout.strip() if p.returncode == 0 else None
    except OSError:
        return None


def commit_info(repo):
    """The commit, and whether the tree had uncommitted changes (read only)."""
    status = _git(repo, "status", "--porcelain", "--untracked-files=no")
    return {"commit": _git(repo, "rev-parse", "HEAD"), "dirty": bool(status) if status is not None else None}


def _caches():
    """e.g. "L1d 48K, L2 2048K, L3 307200K" for cpu0 (sysfs), or None."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    out = []
    try:
        for idx in sorted(os.listdir(base)):
            d = os.path.join(base, idx)
            if not idx.startswith("index"):
                continue
            with open(os.path.join(d, "level")) as f:
                level = f.read().strip()
            with open(os.path.join(d, "type")) as f:
                kind = f.read().strip()
            with open(os.path.join(d, "size")) as f:
                size = f.read().strip()
            if kind != "Instruction":
                out.append(f"L{level}{'d' if kind == 'Data' else ''} {size}")
    except OSError:
        return None
    return ", ".join(out) or None


def machine_info():
    u = os.uname()
    virt = None
    try:
        with open("/proc/cpuinfo") as f:
            virt = "hypervisor" in f.read().split("flags", 2)[1].split("\n", 1)[0]
    except (OSError, IndexError):
        pass
    return {"cpu_model": _cpu_model(), "cores": os.cpu_count(), "kernel": f"{u.sysname} {u.release}",
            "hostname": u.nodename, "memory_gib": _mem_gib(), "virtualized": virt, "caches": _caches()}
