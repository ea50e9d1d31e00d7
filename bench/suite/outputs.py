"""Machine-readable outputs: results.json (everything), runs.csv (one row per
run and side), summary.csv (one row per case)."""
import csv
import json

RUN_FIELDS = ("iops", "mbps", "lat_p50_us", "lat_p99_us", "lat_p999_us", "lat_mean_us", "cpu_usr_s",
              "cpu_sys_s", "cpu_pct", "machine_cpu_pct", "iops_per_cpu_pct", "errors", "seconds")


def _case_cols(meta, c):
    g, w = c.geometry, c.workload
    return {"target": meta["target"]["target"], "environment": meta["target"]["environment"],
            "geometry": g.label, "level": g.level, "members": g.members, "parity": g.parity, "strip": g.strip,
            "suite": w.suite, "workload": w.name, "rw": w.rw, "bs": w.bs, "state": c.state.name}


def write_json(path, meta, cases):
    with open(path, "w") as f:
        json.dump({"meta": meta, "cases": [c.to_json() for c in cases]}, f, indent=1)


def write_runs_csv(path, meta, cases):
    cols = list(_case_cols(meta, cases[0]).keys()) + ["run", "side", *RUN_FIELDS, "io_count_bound", "ratio_iops"]
    with open(path, "w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=cols)
        out.writeheader()
        for c in cases:
            for i, r in enumerate(c.runs):
                for side in ("baseline", "solution"):
                    out.writerow({**_case_cols(meta, c), "run": i + 1, "side": side,
                                  **{k: r[side][k] for k in RUN_FIELDS},
                                  "io_count_bound": r["io_count_bound"], "ratio_iops": r["ratio"]["iops"]})


def write_summary_csv(path, meta, cases):
    cols = list(_case_cols(meta, cases[0]).keys()) + [
        "status", "reason", "unit", "baseline", "solution", "ratio", "ratio_min", "ratio_max", "io_count_bound",
        "fraction_of_bound", "baseline_cov", "solution_cov", "solution_p50_us", "solution_p99_us",
        "solution_p999_us", "baseline_p50_us", "baseline_p99_us", "baseline_p999_us", "solution_cpu_pct",
        "baseline_cpu_pct", "solution_per_cpu", "baseline_per_cpu", "per_cpu_ratio", "rebuild_under_load_mbps",
        "rebuild_idle_mbps", "rebuild_lasted_window_runs"]
    with open(path, "w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=cols)
        out.writeheader()
        for c in cases:
            row = {**_case_cols(meta, c), "status": c.status, "reason": c.reason}
            s = c.summary
            if s:
                b, o = s["baseline"], s["solution"]
                row.update(unit=b["unit"], baseline=b["figure"], solution=o["figure"], ratio=s["ratio"],
                           ratio_min=s["ratio_min"], ratio_max=s["ratio_max"], io_count_bound=s["io_count_bound"],
                           fraction_of_bound=s["fraction_of_bound"], baseline_cov=b["cov"], solution_cov=o["cov"],
                           solution_p50_us=o["lat_p50_us"], solution_p99_us=o["lat_p99_us"],
                           solution_p999_us=o["lat_p999_us"], baseline_p50_us=b["lat_p50_us"],
                           baseline_p99_us=b["lat_p99_us"], baseline_p999_us=b["lat_p999_us"],
                           solution_cpu_pct=o["cpu_pct"], baseline_cpu_pct=b["cpu_pct"],
                           solution_per_cpu=o["per_cpu"], baseline_per_cpu=b["per_cpu"],
                           per_cpu_ratio=s["per_cpu_ratio"])
                if s.get("rebuild"):
                    r = s["rebuild"]
                    row.update(rebuild_under_load_mbps=r.get("under_load_mbps"), rebuild_idle_mbps=r.get("idle_mbps"),
                               rebuild_lasted_window_runs=r["lasted_window_runs"])
            out.writerow(row)
