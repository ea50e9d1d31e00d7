"""fio as the load generator of the targets that are not in process (nbd on
the host; ublk, md and raw drives in the VM lane): one job line for a case,
and one parser from fio's JSON to a Side (see base.py). The same job line
runs against every side of a case, only the I/O engine and target differ."""
import json
import os
import subprocess
import time

from .procstat import Window

PERCENTILES = ("50.000000", "99.000000", "99.900000")
WINDOW_TRIM = 0.1


def _wait_jobs_started(pid, jobs, timeout=30.0):
    """Waits until fio runs its job threads (--thread: the main thread, its
    helper thread and one per job, all named fio; io_uring workers are not)."""
    end = time.time() + timeout
    while time.time() < end:
        names = []
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{t}/comm") as f:
                    names.append(f.read().strip())
            except OSError:
                pass
        if names.count("fio") >= jobs + 2:
            return
        time.sleep(0.01)


def _slices(jobs):
    """Job j of jobs covers the j-th 1/jobs of every file (fio takes
    percentages of the file or device size, split among several files)."""
    share = f"{100 // jobs}%"
    return [f"--numjobs={jobs}", f"--size={share}", f"--offset_increment={share}", "--thread", "--group_reporting"]


def job_args(workload, iodepth, jobs, runtime, warmup, seed):
    """The workload part of a fio command line: jobs threads (one process, so
    its CPU is one /proc entry), each on its own slice, reads and writes
    reported together ("mixed")."""
    args = [f"--rw={workload.rw}", f"--bs={workload.bs}", f"--iodepth={iodepth}", *_slices(jobs),
            "--time_based", f"--runtime={runtime}s", f"--ramp_time={warmup}s", f"--randseed={seed}",
            "--unified_rw_reporting=mixed", "--output-format=json"]
    if workload.rw == "randrw":
        args.append(f"--rwmixread={workload.rwmixread}")
    return args


def fill_args(jobs):
    """Writes every byte the jobs of job_args cover once (1 MiB sequential),
    so that reads and read-modify-writes touch written data, not holes."""
    return ["--rw=write", "--bs=1M", "--iodepth=8", *_slices(jobs), "--output-format=json"]


def load_json(text):
    """fio's JSON, after any warnings it printed first."""
    return json.loads(text[text.index("{"):])


def side(fio_json, seconds):
    """A Side without CPU figures (the caller measures CPU over the window)."""
    job = fio_json["jobs"][0]
    m = job["mixed"]
    pct = m["clat_ns"].get("percentile", {})
    lat = [pct.get(p, 0) / 1e3 for p in PERCENTILES]
    return {"iops": m["iops"], "mbps": m["bw_bytes"] / 1e6, "lat_p50_us": lat[0], "lat_p99_us": lat[1],
            "lat_p999_us": lat[2], "lat_mean_us": m["lat_ns"]["mean"] / 1e3, "errors": job["error"],
            "seconds": seconds}


def run_measured(cmd, warmup, runtime, server_pid=None, cwd=None):
    """Runs a fio command; samples CPU over its measured window (after the
    ramp) for fio itself and, when given, the serving process. Returns a
    Side: cpu_* of the serving process when there is one (fio is then the
    client, its CPU in client_cpu_pct), else of fio."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)
    pids = [p.pid] + ([server_pid] if server_pid else [])
    w = Window(pids)
    jobs = int(next(a for a in cmd if a.startswith("--numjobs=")).split("=")[1])
    try:
        # fio's ramp starts when its job threads do (after its set-up, slow on a busy machine); the
        # CPU window is its measured window, trimmed by WINDOW_TRIM at the end so that a late start
        # found here keeps it inside fio's.
        _wait_jobs_started(p.pid, jobs)
        time.sleep(warmup)
        w.start()
        time.sleep(runtime * (1 - WINDOW_TRIM))
        w.stop()
    except OSError:  # fio ended early (an error): its output says why
        pass
    try:
        out, err = p.communicate(timeout=60 + 2 * (warmup + runtime))
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise
    if p.returncode != 0 or not hasattr(w, "s1"):
        raise RuntimeError(f"fio exit {p.returncode}: {' '.join(cmd)}\n{(err or out).strip()[-1500:]}")
    s = side(load_json(out), runtime)
    cpu = w.cpu(server_pid or p.pid)
    s.update(cpu, machine_cpu_pct=w.machine_pct(), client_cpu_pct=w.cpu(p.pid)["cpu_pct"] if server_pid else 0.0)
    s["iops_per_cpu_pct"] = s["iops"] / cpu["cpu_pct"] if cpu["cpu_pct"] > 0 else 0.0
    return s
