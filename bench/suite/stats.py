"""Per-case summaries of the runs: medians, spread, coefficient of variation,
and the ratios solution/baseline (each run's ratio comes from one
invocation; the summary is the median of those ratios)."""
import os
import statistics

UNITS = {"random": ("MIOPS", "iops", 1e-6, "IOPS per CPU%"),
         "sequential": ("GB/s", "mbps", 1e-3, "MB/s per CPU%")}


def cov(values):
    """Sample standard deviation over mean (0 for fewer than 2 values)."""
    if len(values) < 2 or statistics.mean(values) == 0:
        return 0.0
    return statistics.stdev(values) / statistics.mean(values)


def others_cpu_pct(side, ncores):
    """CPU used by everything but the measured process (and its load
    generator, when that is a separate client process), % of one core: the noise.
    A target that cannot tell it per window (the VM lane) gives it itself."""
    if "others_cpu_pct" in side:
        return side["others_cpu_pct"]
    return max(0.0, side["machine_cpu_pct"] * ncores - side["cpu_pct"] - side.get("client_cpu_pct", 0.0))


def summarize_side(sides, suite, ncores):
    unit, key, scale, _ = UNITS[suite]
    figs = [s[key] * scale for s in sides]
    med = {k: statistics.median(s[k] for s in sides)
           for k in ("lat_p50_us", "lat_p99_us", "lat_p999_us", "cpu_usr_s", "cpu_sys_s", "cpu_pct",
                     "machine_cpu_pct", "errors")}
    per_cpu = [s[key] / s["cpu_pct"] if s["cpu_pct"] > 0 else 0.0 for s in sides]
    return {**med, "figure": statistics.median(figs), "figure_min": min(figs), "figure_max": max(figs),
            "unit": unit, "cov": cov([s[key] for s in sides]), "per_cpu": statistics.median(per_cpu),
            "others_cpu_pct": statistics.median(others_cpu_pct(s, ncores) for s in sides)}


def summarize(case, ncores=None):
    ncores = ncores or os.cpu_count()
    suite = case.workload.suite
    runs = case.runs
    _, key, _, per_cpu_name = UNITS[suite]
    base = summarize_side([r["baseline"] for r in runs], suite, ncores)
    sol = summarize_side([r["solution"] for r in runs], suite, ncores)
    ratios = [r["solution"][key] / r["baseline"][key] for r in runs if r["baseline"][key] > 0]
    cpu_ratios = [(r["solution"][key] / r["solution"]["cpu_pct"]) / (r["baseline"][key] / r["baseline"]["cpu_pct"])
                  for r in runs if r["baseline"][key] > 0 and min(r["solution"]["cpu_pct"], r["baseline"]["cpu_pct"]) > 0]
    bounds = [r["io_count_bound"] for r in runs if r["io_count_bound"] is not None]
    bound = statistics.median(bounds) if bounds else None  # none for the rebuilding state
    ratio = statistics.median(ratios) if ratios else 0.0
    # A peer (md beside gpuraid in the VM lane) measured in the same runs: solution / peer.
    peer = [r["solution"][key] / r["peer"][key] for r in runs if r.get("peer") and r["peer"][key] > 0]
    return {"runs": len(runs), "baseline": base, "solution": sol, "per_cpu_name": per_cpu_name,
            "peer_ratio": statistics.median(peer) if peer else None,
            "peer": summarize_side([r["peer"] for r in runs], suite, ncores) if peer else None,
            "ratio": ratio, "ratio_min": min(ratios, default=0.0), "ratio_max": max(ratios, default=0.0),
            "per_cpu_ratio": statistics.median(cpu_ratios) if cpu_ratios else 0.0,
            "io_count_bound": bound, "fraction_of_bound": ratio / bound if bound else None,
            "rebuild": summarize_rebuild([r["rebuild"] for r in runs if r.get("rebuild")])}


def summarize_rebuild(rebuilds):
    """Rebuild rates of the rebuilding state (medians), or None."""
    if not rebuilds:
        return None
    # Targets other than inproc measure no rates: only the cap and whether the rebuild outlasted the window.
    med = {k: statistics.median(r[k] for r in rebuilds)
           for k in ("under_load_mbps", "under_load_ratio_to_raw_write", "idle_mbps", "idle_ratio_to_raw_write",
                     "replacement_raw_write_mbps", "io_bound_mbps", "idle_ratio_to_bound")
           if all(r.get(k) is not None for r in rebuilds)}
    return {**med, "rate_limit": rebuilds[0]["rate_limit"],
            "lasted_window_runs": sum(bool(r["lasted_window"]) for r in rebuilds), "runs": len(rebuilds)}
