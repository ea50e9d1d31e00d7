"""The I/O-count bound of a case from gpuraid-bench, which computes it from
the engine's own planner: a 50 ms raw run on null drives (nothing is
measured; only the bound is read). Cached per geometry, workload and state."""
import json
import subprocess

_cache = {}


def io_count_bound(bench, case, drive_size):
    g, w = case.geometry, case.workload
    key = (g, w, case.state.failed_members)
    if key not in _cache:
        cmd = [bench, "--level", g.level, "--members", str(g.members), "--strip", g.strip, "--drive-type", "null",
               "--drive-size", drive_size, "--rw", w.rw, "--bs", w.bs, "--rwmixread", str(w.rwmixread),
               "--iodepth", "1", "--threads", "1", "--runtime", "0.05", "--warmup", "0", "--raw", "--json",
               "--fail", str(case.state.failed_members)]
        if g.level == "ec":
            cmd += ["--parity", str(g.parity)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise RuntimeError(f"I/O-count bound: exit {p.returncode}: {' '.join(cmd)}\n{p.stderr.strip()[-500:]}")
        _cache[key] = json.loads(p.stdout)["io_count_bound"]
    return _cache[key]
